"""Writes a synthetic file in LongMemEval's released format, for measuring how `mb-harness retrieve
--longmemeval` scales (the real files cannot be fetched on these machines).

Usage: python3 scripts/longmemeval_synthetic.py INSTANCES SESSIONS SENTENCES_PER_TURN OUT.json
  e.g. 20 500 8 m_like.json   (about 4.9 MB per instance, as longmemeval_m: 500 sessions)
Random words, so retrieval scores are meaningless: only time and memory are measured.
"""
import json, random, sys
random.seed(7)
words = "dog cat lisbon marathon pottery kiln bowl recipe garden piano guitar train flight hotel museum coffee tea budget salary doctor dentist yoga bike car rent apartment sister brother wedding birthday concert book novel movie series".split()
def sent(): return " ".join(random.choice(words) for _ in range(18)) + "."
n_inst, n_sess, per_turn, n_turns = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), 10
with open(sys.argv[4], "w") as f:
    f.write("[")
    for i in range(n_inst):
        ids = [f"answer_{i}_0"] + [f"s_{i}_{j}" for j in range(1, n_sess)]
        sessions = []
        for j in range(n_sess):
            turns = []
            for t in range(n_turns):
                turn = {"role": "user" if t % 2 == 0 else "assistant", "content": " ".join(sent() for _ in range(per_turn))}
                if j == 0: turn["has_answer"] = (t == 2)
                turns.append(turn)
            sessions.append(turns)
        inst = {"question_id": f"q{i}", "question_type": "multi-session", "question": "Which dog and marathon and kiln?", "answer": "x",
                "question_date": "2023/05/30 (Tue) 10:00", "haystack_session_ids": ids,
                "haystack_dates": ["2023/05/%02d (Mon) 10:00" % (1 + j % 28) for j in range(n_sess)],
                "haystack_sessions": sessions, "answer_session_ids": [ids[0]]}
        if i: f.write(",")
        json.dump(inst, f)
    f.write("]")
