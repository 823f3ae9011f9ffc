"""Import-time stand-ins for heavy packages that upstream MemoryBench imports only incidentally.

Why: upstream's `src/solver/__init__.py` imports every solver, so importing any one of them
(e.g. BM25) also imports A-Mem (sentence_transformers, chromadb, litellm, sklearn, torch,
transformers, ...), MemoryOS (chromadb, ...) and the embedder agents (torch,
sentence_transformers). Installing those would pull in torch (gigabytes). The code paths that
run_upstream.py runs never *use* them: wo_memory and bm25_* never touch them, and the
embedder_* agents only use SentenceTransformer/torch for the "huggingface" embedder provider,
while we run the OpenAI-compatible ("vllm") provider against the stub server.

How: `install()` appends a finder to the END of sys.meta_path, so it is consulted only when
the real package is not installed. Each shimmed module (and any submodule) returns a
placeholder for every attribute; calling or instantiating a placeholder raises RuntimeError,
so a code path that really needs one of these packages fails loudly instead of silently
doing something else. The one exception is ANSWERS (torch.cuda.is_available() -> False).
"""

import importlib.abc
import importlib.machinery
import sys
import types

# Top-level names that may be shimmed (only when absent from the venv).
SHIMMED = {
    "torch",                 # src/agent/embedder*.py, A-Mem, MemoryOS
    "sentence_transformers", # src/agent/embedder*.py, A-Mem, MemoryOS
    "transformers",          # A-Mem retrievers
    "chromadb",              # A-Mem, MemoryOS (venv.sh installs it now; shimmed only if absent)
    "litellm",               # A-Mem llm_controller
    "sklearn",               # A-Mem / MemoryOS cosine_similarity
    "rank_bm25",             # A-Mem retrievers
    "FlagEmbedding",         # MemoryOS
    "umap",                  # raptor
    "llama_index",           # memory_bank
    "bert_score",            # JRE-L, IdeaBench, JuDGE (BERTScore is not computed here)
    "textstat",              # JRE-L readability (its merged judge's request is what is compared)
    "evaluate",              # JRE-L's ROUGE (HF evaluate)
    "peft",                  # action_feedback/train_sft_lora.py (its data selection is compared)
}


# The only calls answered instead of raising: the CUDA probe that upstream makes to pick a
# device before it builds a SentenceTransformer (MemoryOS's utils.get_embedding; for
# --system memoryos that class is the stand-in, which embeds on the stub). CPU-only torch
# answers False as well. And the seeding of torch's generator in train_sft_lora.py's data
# selection, which draws nothing from it (its shuffle is Python's `random`).
ANSWERS = {
    "torch.cuda.is_available": lambda *args, **kwargs: False,
    "torch.manual_seed": lambda *args, **kwargs: None,
}


class ShimUsed(RuntimeError):
    pass


class _PlaceholderMeta(type):
    """Placeholders are classes (so `issubclass(x, torch.Tensor)`, as HF datasets' pickler
    does whenever "torch" is in sys.modules, simply answers False), whose attributes are
    further placeholders and which raise when called or instantiated."""

    def __call__(cls, *args, **kwargs):
        raise ShimUsed(
            f"{cls.__qualname__} is a shim (scripts/upstream/shims/heavy_import_shims.py): "
            "this code path needs the real package, which the upstream venv does not install"
        )

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        qualname = f"{cls.__qualname__}.{name}"
        return ANSWERS.get(qualname) or _placeholder(qualname)

    def __repr__(cls):
        return f"<shim {cls.__qualname__}>"


def _placeholder(qualname):
    return _PlaceholderMeta(qualname.rsplit(".", 1)[-1], (), {"__qualname__": qualname, "__module__": "shim"})


class _ShimModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        qualname = f"{self.__name__}.{name}"
        return ANSWERS.get(qualname) or _placeholder(qualname)


class _ShimLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _ShimModule(spec.name)
        module.__path__ = []  # a package, so that any submodule import works
        module.__shim__ = True
        return module

    def exec_module(self, module):
        pass


class _ShimFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".", 1)[0]
        if top not in SHIMMED:
            return None
        # A missing submodule of a package that IS installed is not shimmed: chromadb probes
        # for its optional `chromadb.is_thin_client` with an import and must get ImportError.
        if top != fullname and not getattr(sys.modules.get(top), "__shim__", False):
            return None
        return importlib.machinery.ModuleSpec(fullname, _ShimLoader(), is_package=True)


def install():
    if not any(isinstance(f, _ShimFinder) for f in sys.meta_path):
        sys.meta_path.append(_ShimFinder())


def used():
    """The shimmed modules imported so far."""
    return sorted(n for n, m in sys.modules.items() if getattr(m, "__shim__", False))
