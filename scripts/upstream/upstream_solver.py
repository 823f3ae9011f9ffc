"""Upstream's own BM25-M and Emb-M (THUIR/MemoryBench's ``BM25Solver`` and ``EmbedderSolver`` with
their agents, imported from a checkout at run time) as a Python memory system of the harness:
``--baseline py:upstream_solver:UpstreamSolver`` with this folder on the system's ``path``.

Its ``config`` (the ``[config]`` table of the ``--memory-config`` file):

- ``checkout``: the THUIR/MemoryBench checkout to import from (required);
- ``system``: ``bm25`` (BM25-M, the default) or ``embedder`` (Emb-M);
- ``retrieve_k``: memories per question (the harness adds its own when absent).

The solver is built from the checkout's ``configs/memory_systems/<system>.json`` as upstream's
runners build it; only three things are put in its place, none of them upstream's code:

- the agent's model client is the harness's (``agent.llm = models``: upstream's client method,
  ``generate_response(messages)``), so the answer goes through the harness's model layer;
- Emb-M's embedding client is the harness's embedder (``agent.embedder_client``, asked one
  text at a time as upstream asks), and its index has the embedder's dimension (the harness
  gives it as ``embedding_dim``);
- ``src.solver`` and ``src.agent`` are imported as bare packages: their ``__init__`` modules
  import every other system (A-Mem, Mem0, MemoryOS and their model packages), which these two
  never use. Emb-M's module imports ``torch`` and ``sentence_transformers`` at its top, for a
  provider it does not use here; ``scripts/upstream/shims`` answers them.

The solver's memory lives in ``<memory_dir>/index`` (upstream's ``memory_cache_dir``), so the
harness's memory copies and cache carry it.
"""

import copy
import json
import os
import sys
import types


def _bare_package(name, folder):
    package = types.ModuleType(name)
    package.__path__ = [folder]
    sys.modules.setdefault(name, package)


def _import_upstream(checkout, system):
    if checkout not in sys.path:
        sys.path.insert(0, checkout)
    os.environ.setdefault("OPENAI_API_KEY", "unused-the-harness-answers")
    _bare_package("src.solver", os.path.join(checkout, "src", "solver"))
    _bare_package("src.agent", os.path.join(checkout, "src", "agent"))
    if system == "bm25":
        from src.agent.bm25 import BM25AgentConfig
        from src.solver.bm25 import BM25Solver

        return BM25Solver, BM25AgentConfig
    if system == "embedder":
        shims = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shims")
        if shims not in sys.path:
            sys.path.insert(0, shims)
        import heavy_import_shims

        heavy_import_shims.install()
        from src.agent.embedder import EmbedderAgentConfig
        from src.solver.embedder import EmbedderSolver

        return EmbedderSolver, EmbedderAgentConfig
    raise ValueError(f"system {system!r}: bm25 or embedder")


class _Embeddings:
    """The harness's embedder behind the OpenAI client's ``embeddings.create``."""

    def __init__(self, models):
        self._models = models

    def create(self, input, model=None, **_options):
        texts = [input] if isinstance(input, str) else list(input)
        vectors = self._models.embed(texts)
        data = [types.SimpleNamespace(embedding=v, index=i) for i, v in enumerate(vectors)]
        return types.SimpleNamespace(data=data)


class UpstreamSolver:
    def __init__(self, config, models, memory_dir):
        checkout = config.get("checkout")
        if not checkout:
            raise ValueError("config.checkout: name the THUIR/MemoryBench checkout")
        self.system = config.get("system", "bm25")
        solver_class, config_class = _import_upstream(os.path.abspath(checkout), self.system)
        with open(os.path.join(checkout, "configs", "memory_systems", f"{self.system}.json"), encoding="utf-8") as file:
            settings = json.load(file)
        settings["retrieve_k"] = int(config.get("retrieve_k", settings.get("retrieve_k", 5)))
        self.index = os.path.join(memory_dir, "index")
        settings["memory_cache_dir"] = self.index
        if self.system == "embedder":
            settings["embedding_dim"] = int(config["embedding_dim"])
        self.solver = solver_class(config_class(**settings), memory_cache_dir=self.index)
        self.agent = self.solver.agent
        self.agent.llm = models
        if self.system == "embedder":
            self.agent.embedder_client = types.SimpleNamespace(embeddings=_Embeddings(models))
        # The agent retrieves through this object's method, so whoever wraps it here (the
        # harness's host, to report the memories) sees every retrieval.
        agent_retrieve = self.agent.retrieve_memory
        self._agent_retrieve = agent_retrieve
        self.agent.retrieve_memory = lambda content, k=10: self.retrieve_memory(content, k)

    def add_conversation_to_memory(self, messages, conversation_idx):
        self.agent.add_conversation_to_memory(copy.deepcopy(messages), conversation_idx)

    def memory_locomo_conversation(self, conversation, session_cnt):
        before = len(self.solver.current_conversation_memory_ids)
        self.solver.memory_locomo_conversation(conversation, session_cnt)
        return self._units(conversation, before)

    def memory_dialsim_conversation(self, conversation, session_cnt):
        before = len(self.solver.current_conversation_memory_ids)
        self.solver.memory_dialsim_conversation(conversation, session_cnt)
        return self._units(conversation, before)

    def _units(self, conversation, before):
        """The ids the solver stored, with the turn each covers (it stores one per turn, in
        session order)."""
        ids = self.solver.current_conversation_memory_ids[before:]
        turns = []
        n = 1
        while f"session_{n}" in conversation:
            turns += [turn["dia_id"] for turn in conversation[f"session_{n}"]]
            n += 1
        return [{"doc_id": doc_id, "turns": [turn]} for doc_id, turn in zip(ids, turns)]

    def retrieve_memory(self, content, k=10):
        return self._agent_retrieve(content, k)

    def generate_response(self, messages, lang="en", retrieve_k=None):
        return self.agent.generate_response(messages=messages, lang=lang, retrieve_k=retrieve_k)

    def delete_memory(self, doc_id):
        self.agent.delete_memory(doc_id)

    def save_memories(self):
        self.agent.save_memories()

    def load_memories(self):
        self.agent.load_memories()
