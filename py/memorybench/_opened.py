"""Who opens the engine under a LangChain or LangGraph store: the caller (``engine=``, left
open) or the store itself (``path=``, closed with the store)."""

from __future__ import annotations

from typing import Optional, Tuple

from ._native import Engine
from .errors import InvalidInputError


def engine_for_store(engine: Optional[Engine], path: Optional[str]) -> Tuple[Engine, bool]:
    """The engine a store works on and whether the store owns it (opened it from ``path`` and
    so must close it); exactly one of ``engine`` and ``path`` must be given."""
    if (engine is None) == (path is None):
        raise InvalidInputError("give exactly one of engine= (an open Engine) or path=")
    if engine is None:
        return Engine(path), True
    return engine, False
