#!/usr/bin/env bash
# Creates (idempotently) the virtualenv in which scripts/upstream/run_upstream.py imports and
# runs upstream MemoryBench's own Python code. Only what the wo_memory / bm25_* / embedder_*
# off-policy code paths (and those of mem0, A-Mem and MemoryOS) import is installed; heavy
# packages that upstream imports only incidentally (torch, sentence_transformers, ...) are
# replaced by the import shims in scripts/upstream/shims/ instead.
#
# Usage: scripts/upstream/venv.sh            (prints the venv's python path on the last line)
#        VENV=/some/dir scripts/upstream/venv.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="${VENV:-$ROOT/.cache/upstream-venv}"
PYTHON="${PYTHON:-python3}"

# The requirement set, pinned to the versions the differential was measured with (their own
# dependencies follow pip's resolution); the stamp records it so that a change re-installs.
REQUIREMENTS=(
  # LLM client used by src/llms/{vllm,openai}.py (mem0ai 0.1.116 caps it below 1.100)
  "openai==1.99.9"
  "pydantic==2.14.4"
  # memorybench.py / src/dataset/utils.py load the data with HF datasets (from a local dir)
  "datasets==3.6.0"
  # src/dataset/Locomo.py and WritingPrompts.py (metrics imported at module level)
  "nltk==3.10.4"
  "regex==2026.12.2"
  "numpy==2.4.6"
  "pandas==3.1.1"
  # src/dataset/HelloBench.py (its judge's request is compared in upstream/tests/it/judges.rs)
  "jsonlines==4.0.0"
  # off-policy.py
  "tqdm==4.70.1"
  "termcolor==3.3.0"
  "python-dotenv==1.2.4"
  # bm25_message / bm25_dialog
  "whoosh==2.7.4"
  # embedder_message / embedder_dialog (CPU faiss wheel, no torch)
  "faiss-cpu==1.15.1"
  # mem0: src/agent/mem0.py mixes the vendored baselines/mem0 with top-level `mem0.*`
  # imports, i.e. the PyPI package of the vendored version (pyproject: mem0ai 0.1.116);
  # it brings qdrant-client (local, in-process vector store), sqlalchemy, posthog.
  "mem0ai==0.1.116"
  # JuDGE's rule-based metrics (src/dataset/judge/: calc_score.py, xingshi.py and the three
  # extraction modules; bert_score is shimmed, BERTScore is not computed)
  "jieba==0.42.1"
  # src/dataset/LexEval.py scores ROUGE-L with the `rouge` package (the benchmark API's
  # differential, py/tests/test_benchmark_upstream.py)
  "rouge==1.0.1"
  "chinese2digits==6.0.2"
  "Levenshtein==0.27.5"
  "cn2an==0.5.24"
  "beautifulsoup4==4.15.0"
  # A-Mem's SimpleEmbeddingRetriever ranks with sklearn's cosine_similarity (its
  # SentenceTransformer is the stand-in in shims/sentence_transformer_stand_in.py)
  "scikit-learn==1.9.1"
  # MemoryOS (baselines/MemoryOS/memoryos_chromadb) keeps its vectors in a local chromadb
  # (PersistentClient, explicit embeddings). Its requirements name 0.4.24, which needs
  # numpy<2; 1.x runs the same calls with numpy 2 (brings onnxruntime, tokenizers, grpc).
  "chromadb==1.5.9"
  # RAPTOR's split_text counts cl100k tokens (the ranks file comes from tiktoken-rs's copy in
  # the cargo registry, given through TIKTOKEN_CACHE_DIR: nothing is downloaded)
  "tiktoken==0.12.0"
)
STAMP="$VENV/.memorybench-upstream-stamp"
WANT="$(printf '%s\n' "${REQUIREMENTS[@]}" | grep -v '^#' | sha256sum | cut -c1-16)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$VENV/bin/python" ]]; then
  echo "$VENV/bin/python"
  exit 0
fi

start=$(date +%s)
if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -m venv "$VENV"
fi
echo "setup: building the upstream differential venv (PyPI) in $VENV" >&2
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet "${REQUIREMENTS[@]}"
echo "$WANT" > "$STAMP"
echo "upstream venv installed in $(( $(date +%s) - start ))s: $VENV" >&2
echo "$VENV/bin/python"
