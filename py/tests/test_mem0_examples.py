"""The examples of docs/python.md's "mem0 drop-in" section, executed as written and in order
(offline: memorybench's embedders and offline extractor, engines in temporary directories)."""

import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def snippets():
    text = DOC.read_text()
    start = text.index("## mem0 drop-in")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_the_mem0_dropin_examples_run(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "default"))
    found = snippets()
    assert len(found) >= 4, "the mem0 drop-in section lost its examples"
    for snippet in found:
        exec(compile(snippet, str(DOC), "exec"), {})
    assert (tmp_path / "default").is_dir()  # Memory() kept its engine where it was told
