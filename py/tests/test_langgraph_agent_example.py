"""py/examples/langgraph_agent.py, run as a user runs it, so that it cannot rot: the agent
recalls in a new thread, and after the engine is closed and reopened, what it was told to
remember, and only for the user who told it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_agent_example_recalls_across_threads_and_restarts(tmp_path):
    store = tmp_path / "store"
    run = subprocess.run(
        [sys.executable, str(ROOT / "py" / "examples" / "langgraph_agent.py"), str(store)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    answers = [line.split("agent: ", 1)[1] for line in run.stdout.splitlines() if "agent: " in line]
    assert answers == [
        "Noted, I will remember that.",
        "Noted, I will remember that.",
        "You told me my favourite colour is teal.",
        "You told me I live in Lisbon.",
        "I don't know yet.",
    ], run.stdout
    assert "[thread-2] alice: What is my favourite colour?" in run.stdout
    assert store.is_dir()  # the memories were on disk, where the second session found them
