"""A stand-in for `sentence_transformers.SentenceTransformer` that embeds through an
OpenAI-compatible embeddings endpoint (the stub server), for the systems whose upstream code
embeds in-process: A-Mem's SimpleEmbeddingRetriever and MemoryOS's utils.get_embedding (which
builds `SentenceTransformer(name, device=...)`, the device chosen by the torch shim's
`torch.cuda.is_available()`, and calls `encode([text])[0]`; it passes no other keyword, as its
embedding_model_kwargs are empty for all-MiniLM-L6-v2, and reads no other attribute).

Why: the real package brings torch (gigabytes) and a model download. The differential compares
the chat requests each side sends, so both sides only need the *same* vectors for the same
text: upstream through this stand-in, the harness through `--embedder` on the same stub.
Upstream's own code still does everything else: which texts it embeds and when, the cosine
ranking (scikit-learn's `cosine_similarity`, installed for real) and the context it renders.

`install(base_url, api_key)` puts the module into `sys.modules` before upstream imports it.
"""

import json
import sys
import types
import urllib.request

import numpy as np


def install(base_url, api_key):
    """Makes `from sentence_transformers import SentenceTransformer` give the stand-in."""
    endpoint = base_url.rstrip("/") + "/embeddings"

    class SentenceTransformer:
        """Embeds with the endpoint's vectors; the model name is sent as given."""

        def __init__(self, model_name_or_path="all-MiniLM-L6-v2", *args, **kwargs):
            self.model = model_name_or_path

        def encode(self, sentences, show_progress_bar=False, **kwargs):
            single = isinstance(sentences, str)
            texts = [sentences] if single else list(sentences)
            if not texts:
                return np.zeros((0, 0), dtype=np.float32)
            body = json.dumps({"input": texts, "model": self.model, "encoding_format": "float"})
            request = urllib.request.Request(
                endpoint,
                data=body.encode("utf-8"),
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"},
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                data = json.loads(response.read().decode("utf-8"))["data"]
            data.sort(key=lambda item: item["index"])
            vectors = np.asarray([item["embedding"] for item in data], dtype=np.float32)
            return vectors[0] if single else vectors

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = SentenceTransformer
    module.__stand_in__ = True
    sys.modules["sentence_transformers"] = module
