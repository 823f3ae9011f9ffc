"""Reference sentence embeddings from Python onnxruntime, for mb-embed's parity test.

Reads a JSON object {"model_dir": ..., "texts": [...], "max_tokens": N} on stdin and writes
{"vectors": [[...], ...]} on stdout: each text tokenized alone (no padding, truncated to
max_tokens), run through the ONNX model, mean-pooled over the attention mask and L2-normalized,
the same pipeline as sentence-transformers. Runs in the venv made by scripts/setup.sh.
"""

import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main() -> None:
    job = json.load(sys.stdin)
    model_dir = job["model_dir"]
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=job["max_tokens"])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(f"{model_dir}/model.onnx", options)
    wanted = {i.name for i in session.get_inputs()}

    vectors = []
    for text in job["texts"]:
        encoding = tokenizer.encode(text)
        feeds = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        states = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0][0]
        mask = feeds["attention_mask"][0][:, None].astype(np.float32)
        pooled = (states * mask).sum(axis=0) / max(mask.sum(), 1.0)
        norm = np.linalg.norm(pooled)
        vectors.append((pooled / norm if norm > 0 else pooled).tolist())
    json.dump({"vectors": vectors}, sys.stdout)


if __name__ == "__main__":
    main()
