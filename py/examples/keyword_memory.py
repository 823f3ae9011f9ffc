"""A complete memory system in Python for the harness: ``mb-harness off-policy --baseline
py:keyword_memory:KeywordMemory --memory-config py/examples/keyword_memory.toml``.

It remembers every message and every conversation turn, finds the memories sharing the most
words with a question, and asks the harness's answer model with them in the prompt. Its files
(``memories.jsonl``) are in the folder the harness gives it, saved after every memorization.
"""

import json
import os
import re

WORD = re.compile(r"\w+", re.UNICODE)


def words(text):
    return set(WORD.findall(text.lower()))


class KeywordMemory:
    def __init__(self, config, models, memory_dir):
        self.models = models
        self.retrieve_k = int(config.get("retrieve_k", 5))
        self.path = os.path.join(memory_dir, "memories.jsonl")
        self.memories = []

    # -- memorizing --------------------------------------------------------------------

    def add_conversation_to_memory(self, messages, conversation_idx):
        for i, message in enumerate(messages):
            self.memories.append(
                {"doc_id": f"conv_{conversation_idx}_{i}", "text": f"{message['role']}: {message['content']}"}
            )

    def memory_locomo_conversation(self, conversation, session_cnt):
        units = []
        for n in range(1, session_cnt + 1):
            date = conversation.get(f"session_{n}_date_time", "")
            for turn in conversation.get(f"session_{n}", []):
                doc_id = f"{date} {turn['dia_id']}"
                self.memories.append({"doc_id": doc_id, "text": f"[{date}] {turn['speaker']}: {turn['text']}"})
                units.append({"doc_id": doc_id, "turns": [turn["dia_id"]]})
        return units

    memory_dialsim_conversation = memory_locomo_conversation

    def delete_memory(self, doc_id):
        self.memories = [m for m in self.memories if m["doc_id"] != doc_id]

    # -- answering ---------------------------------------------------------------------

    def retrieve_memory(self, content, k=10):
        asked = words(content)
        scored = [(len(asked & words(m["text"])), -i, m) for i, m in enumerate(self.memories)]
        best = sorted((s for s in scored if s[0] > 0), key=lambda s: (s[0], s[1]), reverse=True)[:k]
        return [{"doc_id": m["doc_id"], "text": m["text"], "score": float(n)} for n, _, m in best]

    def generate_response(self, messages, lang="en", retrieve_k=None):
        question = messages[-1]["content"]
        found = self.retrieve_memory(question, retrieve_k or self.retrieve_k)
        context = "\n".join(m["text"] for m in found)
        messages[-1]["content"] = f"Memories:\n{context}\n\nQuestion:\n{question}"
        return self.models.generate_response(messages)

    # -- files -------------------------------------------------------------------------

    def save_memories(self):
        with open(self.path + ".part", "w", encoding="utf-8") as file:
            for memory in self.memories:
                file.write(json.dumps(memory) + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(self.path + ".part", self.path)

    def load_memories(self):
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as file:
                self.memories = [json.loads(line) for line in file if line.strip()]
