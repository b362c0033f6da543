"""Project memory: a team's facts, decisions, procedures, warnings and episodes, stored.

The store (:mod:`~apiatlas.rag.memory.store`, its backends), the memories' links to the graph
(:mod:`~apiatlas.rag.memory.links`), the model, and what a memory's text says about each
endpoint it names (:mod:`~apiatlas.rag.memory.stance`: its links keep which ones it forbids).
What memory means for an answer, which takes precedence over the docs, is
:mod:`apiatlas.rag.review`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apiatlas.rag.memory.kinds import MEMORY_KINDS, MemoryKind

if TYPE_CHECKING:
    from apiatlas.rag.memory.model import Memory, MemoryHit, parse_ref
    from apiatlas.rag.memory.store import ProjectMemory, UnknownMemory

__all__ = [
    "MEMORY_KINDS",
    "Memory",
    "MemoryHit",
    "MemoryKind",
    "ProjectMemory",
    "UnknownMemory",
    "parse_ref",
]


def __getattr__(name: str) -> Any:
    # Imported on first use: the store needs LangGraph's, the models pydantic, and the CLI's
    # argument choices (the kinds) need neither.
    if name in ("ProjectMemory", "UnknownMemory"):
        from apiatlas.rag.memory import store

        return getattr(store, name)
    if name in ("Memory", "MemoryHit", "parse_ref"):
        from apiatlas.rag.memory import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
