#!/usr/bin/env python3
"""Writes LongMemEval's official judge prompts as a `--judge-prompts` file.

    python3 scripts/longmemeval_judge_prompts.py PATH/TO/LongMemEval > judge-prompts.json
    mb-harness off-policy --longmemeval FILE --judge-prompts judge-prompts.json ...

The templates are not shipped here (their wording is the LongMemEval authors'); this script
takes them from your own checkout of github.com/xiaowu0162/LongMemEval by calling its
`get_anscheck_prompt` (src/evaluation/evaluate_qa.py) with the placeholders `{question}`,
`{answer}` and `{response}`, once per question type and once for abstention questions. The
evaluation script's other imports (openai, backoff, tqdm, numpy) are stubbed when missing:
only the prompt function runs.
"""

import importlib.util
import json
import pathlib
import sys
import types

TYPES = [
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
]


def load(checkout):
    path = pathlib.Path(checkout) / "src" / "evaluation" / "evaluate_qa.py"
    if not path.is_file():
        sys.exit(f"{path}: not found; give the root of a LongMemEval checkout")
    for name in ["openai", "backoff", "tqdm", "numpy"]:
        if importlib.util.find_spec(name) is None:
            stub = types.ModuleType(name)
            stub.__getattr__ = lambda attribute: (lambda *a, **k: (lambda f: f))
            sys.modules[name] = stub
    spec = importlib.util.spec_from_file_location("evaluate_qa", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_anscheck_prompt


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    prompt = load(sys.argv[1])
    placeholders = ("{question}", "{answer}", "{response}")
    templates = {t: prompt(t, *placeholders, abstention=False) for t in TYPES}
    templates["abstention"] = prompt(TYPES[0], *placeholders, abstention=True)
    json.dump(templates, sys.stdout, indent=2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
