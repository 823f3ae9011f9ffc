"""Converts LoCoMo conversations to LongMemEval's instance format (issue 37), so that
`mb-harness retrieve --longmemeval FILE` scores a memory with the official retrieval metrics.

Usage: python3 benches/retrievers/locomo_to_longmemeval.py LOCOMO.json OUT.json [PER_CONV]

Per conversation, the first PER_CONV (default 30) questions of categories 1-4 become one
instance each: speaker A is the user and speaker B the assistant, every session of the
conversation is a haystack session with its LoCoMo date, the turns named by the question's
evidence hold the answer (`has_answer`), and the sessions holding them are the answer sessions
(their ids contain `answer`, as the official scripts require). The question is asked on the
last session's date. Questions with no readable evidence are left out.
"""
import json
import re
import sys
from datetime import datetime

# LoCoMo's categories under the nearest of LongMemEval's six type names (the reader accepts no
# other): 1 multi-hop, 2 temporal, 3 open-domain (no LongMemEval counterpart; a label only),
# 4 single-hop.
CATEGORIES = {
    1: "multi-session",
    2: "temporal-reasoning",
    3: "single-session-preference",
    4: "single-session-user",
}
EVIDENCE = re.compile(r"D(\d+):(\d+)")


def official_date(locomo_date):
    """LoCoMo's `1:56 pm on 8 May, 2023` as LongMemEval writes dates, `2023/05/08 (Mon) 13:56`
    (the text itself when it does not parse)."""
    try:
        when = datetime.strptime(locomo_date.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return locomo_date
    return when.strftime("%Y/%m/%d (%a) %H:%M")


def sessions_of(conversation):
    """(number, date, turns) of each session, in order."""
    numbers = sorted(
        int(m.group(1))
        for key in conversation
        if (m := re.fullmatch(r"session_(\d+)", key)) and conversation[key]
    )
    return [
        (
            n,
            official_date(conversation.get(f"session_{n}_date_time", "")),
            conversation[f"session_{n}"],
        )
        for n in numbers
    ]


def instance(sample, sessions, index, qa):
    """One LongMemEval instance for question `qa` of `sample`, or None without evidence."""
    evidence = {m.group(0) for e in qa.get("evidence", []) for m in EVIDENCE.finditer(e)}
    speaker_a = sample["conversation"]["speaker_a"]
    answer_sessions = {
        n for n, _, turns in sessions if any(t["dia_id"] in evidence for t in turns)
    }
    if not answer_sessions:
        return None
    name = sample["sample_id"]
    ids = [
        f"answer_{name}_{n}" if n in answer_sessions else f"{name}_session_{n}"
        for n, _, _ in sessions
    ]
    haystack = [
        [
            {
                "role": "user" if t["speaker"] == speaker_a else "assistant",
                "content": t["text"],
                "has_answer": t["dia_id"] in evidence,
            }
            for t in turns
        ]
        for _, _, turns in sessions
    ]
    return {
        "question_id": f"{name}_q{index}",
        "question_type": CATEGORIES[qa["category"]],
        "question": qa["question"],
        "answer": str(qa.get("answer", "")),
        "question_date": sessions[-1][1],
        "haystack_session_ids": ids,
        "haystack_dates": [date for _, date, _ in sessions],
        "haystack_sessions": haystack,
        "answer_session_ids": [i for i in ids if "answer" in i],
    }


def main():
    source, out = sys.argv[1], sys.argv[2]
    per_conversation = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    with open(source) as f:
        samples = json.load(f)
    instances = []
    for sample in samples:
        sessions = sessions_of(sample["conversation"])
        questions = [qa for qa in sample["qa"] if qa.get("category") in CATEGORIES]
        for index, qa in enumerate(questions[:per_conversation]):
            made = instance(sample, sessions, index, qa)
            if made is not None:
                instances.append(made)
    with open(out, "w") as f:
        json.dump(instances, f)
    print(f"{len(instances)} instances from {len(samples)} conversations -> {out}")


if __name__ == "__main__":
    main()
