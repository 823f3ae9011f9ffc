"""Shared fixtures: a fresh engine directory per test, and the in-process embedder (found
through the checkout's .cache/, so run pytest from inside the checkout)."""

import os
from pathlib import Path

import pytest

import memorybench as mb


@pytest.fixture
def engine(tmp_path):
    with mb.Engine(tmp_path / "store") as engine:
        yield engine


@pytest.fixture(scope="session")
def minilm():
    return mb.Embedder()


ROOT = Path(__file__).resolve().parents[2]


def needs(path: Path, what: str) -> Path:
    """``path`` when it exists; otherwise the test is skipped with one "skipped: ..." line,
    or fails under CI (where everything a test needs must be there)."""
    if path.exists():
        return path
    message = f"{what} ({path}) is absent"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; under CI every test runs")
    pytest.skip(f"skipped: {message}")
