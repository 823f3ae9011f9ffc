#!/usr/bin/env bash
# The Python package's tests: builds the wheel (py/, reusing the workspace's target/ so the
# Rust dependencies are compiled once), installs it into .cache/venv, and runs pytest over
# py/tests (our tests, LangChain's standard vector-store suite, the README's Python snippets).
# Needs `bash scripts/setup.sh` first. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
venv="$root/.cache/venv"
rm -rf target/wheels
"$venv/bin/maturin" build --release --quiet -m py/Cargo.toml --out target/wheels \
  --interpreter "$venv/bin/python"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  target/wheels/memorybench-*.whl
"$venv/bin/python" -m pytest py/tests -q -p no:cacheprovider "$@"
