"""The README's "Use it from Python" snippet, executed as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_snippets(section: str) -> list:
    text = README.read_text()
    start = text.index(f"## {section}")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_use_it_from_python_runs(capsys):
    snippets = python_snippets("Use it from Python")
    assert snippets, "the README lost its Python snippet"
    for snippet in snippets:
        exec(compile(snippet, str(README), "exec"), {})
    assert "has dimension 2, expected 384" in capsys.readouterr().out
