"""One adapter per store, each used the way its documentation recommends.

Every adapter offers the same operations to `worker.py`; an operation a store lacks is `None`
(the table says so). `tune_builds_index` says whether changing a vector setting builds an
index (whose time then counts toward "until searchable"). Vectors arrive as Python lists of floats, rows as dicts with `id`, `text`,
`source`, `speaker`. Each `durable` note says what a single insert's return guarantees.
"""

import os

DIM = 384


class Memorybench:
    """The engine through the `memorybench` Python package."""

    name = "memorybench (Python)"
    durable = "sync_writes=True (the package's default): WAL fsynced before a write returns"
    # The beam widths of the Rust driver's sweep (`stores_engine.rs`, EF_SWEEP): both drivers
    # draw the same curve.
    settings = ["ef 32", "ef 64", "ef 96", "ef 160", "ef 256", "ef 400", "ef 640"]
    tune_builds_index = False

    def open(self, path, create):
        import memorybench

        self.e = memorybench.Engine(path, sync_writes=True)
        if create:
            self.e.create_namespace("bench")
            self.e.create_space("minilm", DIM)
        self.ids = {}

    def bulk(self, rows, vecs):
        import memorybench

        for start in range(0, len(rows), 1000):
            b = memorybench.Batch()
            chunk = rows[start : start + 1000]
            for r, v in zip(chunk, vecs[start : start + 1000]):
                b.put(r["text"], vectors={"minilm": v},
                      attributes={"source": r["source"], "speaker": r["speaker"], "row": str(r["id"])})
            receipt = self.e.write("bench", b)
            self.ids.update(zip(receipt.ids, (r["id"] for r in chunk)))

    def finish_bulk(self, qv, qt):
        # The first searches load the indexes; flush waits for the HNSW graph build.
        self.e.search_vector("bench", "minilm", qv, 10)
        self.e.search_text("bench", qt, 10)
        self.e.merge_lexical_segments()

    def insert(self, r, v):
        i = self.e.put("bench", r["text"], vectors={"minilm": v},
                       attributes={"source": r["source"], "speaker": r["speaker"], "row": str(r["id"])})
        self.ids[i] = r["id"]

    def after_inserts(self):
        # As the Rust driver (`stores_engine`) does: the single inserts' graph work finishes
        # before the searches are timed, not during them.
        self.e.flush()

    def tune(self, setting):
        self.e.set_ef_search(int(setting.split()[1]))

    def vector(self, v):
        return [self.ids.get(h.record.id) for h in self.e.search_vector("bench", "minilm", v, 10)]

    def text(self, q):
        return [h.record.id for h in self.e.search_text("bench", q, 10)]

    def hybrid(self, q, v):
        return [h.record.id for h in self.e.search_hybrid("bench", q, "minilm", v, 10)]

    def delete_one(self, row):
        by_row = getattr(self, "_by_row", None) or {r: i for i, r in self.ids.items()}
        self._by_row = by_row
        self.e.delete("bench", by_row[row])

    def delete_filter(self, source):
        return self.e.delete_where("bench", {"source": source})

    def close(self):
        self.e.close()


class Lance:
    """LanceDB: a table on local disk; flat (exact) vector search until an index is built."""

    name = "LanceDB 0.40.0"
    durable = "each add() commits a new table version (data files and manifest written, no fsync)"
    settings = ["flat (default, no index)", "IVF_HNSW_SQ ef 64", "IVF_HNSW_SQ ef 160"]
    tune_builds_index = True

    def open(self, path, create):
        import lancedb

        self.db = lancedb.connect(path)
        self.t = None if create else self.db.open_table("bench")
        self.setting = "flat (default, no index)"

    def _table(self, rows, vecs):
        import pyarrow as pa

        return pa.table({
            "id": pa.array([r["id"] for r in rows], pa.int64()),
            "text": [r["text"] for r in rows],
            "source": [r["source"] for r in rows],
            "speaker": [r["speaker"] for r in rows],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array([x for v in vecs for x in v], pa.float32()), DIM),
        })

    def bulk(self, rows, vecs):
        self.t = self.db.create_table("bench", data=self._table(rows, vecs))

    def finish_bulk(self, qv, qt):
        self.t.create_fts_index("text")

    def insert(self, r, v):
        self.t.add(self._table([r], [v]))

    def after_inserts(self):
        # Every add() left a fragment of one row; LanceDB's documentation says to compact them.
        self.t.optimize()

    def tune(self, setting):
        if setting.startswith("IVF_HNSW_SQ") and not self.setting.startswith("IVF_HNSW_SQ"):
            self.t.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ")
        self.setting = setting

    def vector(self, v):
        q = self.t.search(v).metric("cosine").select(["id"]).limit(10)
        if self.setting.startswith("IVF_HNSW_SQ"):
            q = q.ef(int(self.setting.split()[-1]))
        return [r["id"] for r in q.to_list()]

    def text(self, q):
        return [r["id"] for r in self.t.search(q, query_type="fts").select(["id"]).limit(10).to_list()]

    def hybrid(self, q, v):
        s = self.t.search(query_type="hybrid").vector(v).text(q).select(["id"]).limit(10)
        return [r["id"] for r in s.to_list()]

    def delete_one(self, row):
        self.t.delete(f"id = {int(row)}")

    def delete_filter(self, source):
        self.t.delete(f"source = '{source}'")

    def close(self):
        self.t = None
        self.db = None


class Chroma:
    """Chroma's PersistentClient: SQLite plus an HNSW index per collection."""

    name = "Chroma 1.5.9"
    durable = "PersistentClient: each add() is committed to its SQLite write-ahead log"
    settings = ["ef 100 (default)", "ef 200", "ef 400"]
    tune_builds_index = False

    def open(self, path, create):
        import chromadb

        self.client = chromadb.PersistentClient(path=path)
        if create:
            self.c = self.client.create_collection("bench", configuration={"hnsw": {"space": "cosine"}})
        else:
            self.c = self.client.get_collection("bench")

    def bulk(self, rows, vecs):
        step = min(5000, self.client.get_max_batch_size())
        for s in range(0, len(rows), step):
            chunk = rows[s : s + step]
            self.c.add(ids=[str(r["id"]) for r in chunk], embeddings=vecs[s : s + step],
                       documents=[r["text"] for r in chunk],
                       metadatas=[{"source": r["source"], "speaker": r["speaker"]} for r in chunk])

    def finish_bulk(self, qv, qt):
        self.vector(qv)

    def insert(self, r, v):
        self.c.add(ids=[str(r["id"])], embeddings=[v], documents=[r["text"]],
                   metadatas=[{"source": r["source"], "speaker": r["speaker"]}])

    def tune(self, setting):
        ef = int(setting.split()[1])
        if ef != 100:
            self.c.modify(configuration={"hnsw": {"ef_search": ef}})
            # The loaded index keeps searching with the beam it was loaded with (ef 10 after
            # `modify` gave the same recall as ef 100 in the same client); a new client
            # loads it with the new one.
            self.close()
            self.open(self.path, False)

    def vector(self, v):
        res = self.c.query(query_embeddings=[v], n_results=10, include=[])
        return [int(i) for i in res["ids"][0]]

    text = None  # `where_document={"$contains": ...}` filters by substring; nothing ranks text.
    hybrid = None

    def delete_one(self, row):
        self.c.delete(ids=[str(row)])

    def delete_filter(self, source):
        self.c.delete(where={"source": source})

    def close(self):
        # `close()` stops the client's shared in-process system, as Chroma's documentation asks
        # of a PersistentClient; without it the next client on the path reuses that system,
        # indexes loaded, and a reopen is no reopen.
        self.client.close()
        self.c = None
        self.client = None


class Qdrant:
    """qdrant-client's local mode (`QdrantClient(path=...)`): in-process, persisted to SQLite."""

    name = "Qdrant local 1.20.0"
    durable = "local mode: each upsert is committed to its SQLite file"
    settings = ["exact (local mode has no HNSW)"]
    tune_builds_index = False

    def open(self, path, create):
        from qdrant_client import QdrantClient, models

        self.m = models
        self.client = QdrantClient(path=path)
        if create:
            self.client.create_collection(
                "bench", vectors_config=models.VectorParams(size=DIM, distance=models.Distance.COSINE))

    def _points(self, rows, vecs):
        return [self.m.PointStruct(id=int(r["id"]), vector=v,
                                   payload={"text": r["text"], "source": r["source"], "speaker": r["speaker"]})
                for r, v in zip(rows, vecs)]

    def bulk(self, rows, vecs):
        for s in range(0, len(rows), 1000):
            self.client.upsert("bench", points=self._points(rows[s : s + 1000], vecs[s : s + 1000]))

    def finish_bulk(self, qv, qt):
        self.vector(qv)

    def insert(self, r, v):
        self.client.upsert("bench", points=self._points([r], [v]))

    def tune(self, setting):
        pass

    def vector(self, v):
        return [p.id for p in self.client.query_points("bench", query=v, limit=10).points]

    text = None  # local mode filters on text (MatchText) but does not rank it
    hybrid = None

    def delete_one(self, row):
        self.client.delete("bench", points_selector=self.m.PointIdsList(points=[int(row)]))

    def delete_filter(self, source):
        m = self.m
        f = m.Filter(must=[m.FieldCondition(key="source", match=m.MatchValue(value=source))])
        self.client.delete("bench", points_selector=m.FilterSelector(filter=f))

    def close(self):
        self.client.close()


STORES = {"memorybench": Memorybench, "lancedb": Lance, "chroma": Chroma, "qdrant": Qdrant}


def make(name, path):
    store = STORES[name]()
    store.path = path
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return store
