"""Shared fixtures: a fresh engine directory per test, and the in-process embedder (found
through the checkout's .cache/, so run pytest from inside the checkout)."""

import pytest

import memorybench as mb


@pytest.fixture
def engine(tmp_path):
    with mb.Engine(tmp_path / "store") as engine:
        yield engine


@pytest.fixture(scope="session")
def minilm():
    return mb.Embedder()
