"""scripts/longmemeval_judge_prompts.py turns a LongMemEval checkout's judge function into a
`--judge-prompts` file: seven templates, each with the three placeholders once."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "longmemeval_judge_prompts.py"

# A stand-in for src/evaluation/evaluate_qa.py with the same function and imports (our text).
STAND_IN = '''
import openai
import backoff
from tqdm import tqdm


@backoff.on_exception(backoff.expo, (openai.RateLimitError, openai.APIError))
def completions(client, **kwargs):
    return client.chat.completions.create(**kwargs)


def get_anscheck_prompt(task, question, answer, response, abstention=False):
    if abstention:
        return "unanswerable? {} / {} / {}".format(question, answer, response)
    return task + ": {} / {} / {}".format(question, answer, response)
'''


def test_the_script_writes_every_template_from_a_checkout(tmp_path):
    evaluation = tmp_path / "src" / "evaluation"
    evaluation.mkdir(parents=True)
    (evaluation / "evaluate_qa.py").write_text(STAND_IN)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=True
    )
    templates = json.loads(out.stdout)
    assert len(templates) == 7
    assert templates["knowledge-update"] == "knowledge-update: {question} / {answer} / {response}"
    assert templates["abstention"].startswith("unanswerable? {question}")
    for template in templates.values():
        for placeholder in ("{question}", "{answer}", "{response}"):
            assert template.count(placeholder) == 1


def test_a_path_that_is_no_checkout_is_refused(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert out.returncode != 0
    assert "evaluate_qa.py: not found" in out.stderr
