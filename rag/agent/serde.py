"""The agent's state types, registered with LangGraph's checkpoint serialiser.

A checkpointer stores the agent's state (the answer, the graph's lookup, the memories) with
msgpack. LangGraph's default serialiser reads back a type it was not told about with a warning
("Deserializing unregistered type ... This will be blocked in a future version"), and its strict
mode blocks it. :func:`checkpoint_serde` is a serialiser that knows every type the state holds:

    from langgraph.checkpoint.memory import InMemorySaver
    from apiatlas.rag.agent.serde import checkpoint_serde

    saver = InMemorySaver(serde=checkpoint_serde())  # or checkpoint_serde(MyType, ...)

:data:`SERDE_ALLOWLIST` is the same list for a serialiser of your own
(``JsonPlusSerializer(allowed_msgpack_modules=[*SERDE_ALLOWLIST, ...])``).
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from apiatlas.rag.agent.state import AgentState


def state_types(root: Any = AgentState) -> set[type]:
    """The classes a value of ``root`` may hold (itself included when it is one), found from its
    type hints: TypedDict keys, dataclass fields, pydantic fields and the arguments of
    ``list[...]``, ``dict[...]``, ``X | None`` and ``Annotated[...]``; builtins left out."""
    found: set[type] = set()
    todo = [root]
    seen: set[int] = set()
    while todo:
        hint = todo.pop()
        if id(hint) in seen:
            continue
        seen.add(id(hint))
        todo.extend(typing.get_args(hint))
        if not isinstance(hint, type) or hint.__module__ == "builtins":
            continue
        if typing.is_typeddict(hint):
            todo.extend(typing.get_type_hints(hint).values())
            continue
        found.add(hint)
        if issubclass(hint, BaseModel):
            todo.extend(f.annotation for f in hint.model_fields.values())
        elif dataclasses.is_dataclass(hint):
            todo.extend(typing.get_type_hints(hint).values())
    return {t for t in found if t.__module__ not in _STANDARD}


_STANDARD = {"typing", "datetime", "pathlib", "uuid", "decimal", "enum"}
"""Modules whose classes LangGraph's serialiser reads back without being told."""


SERDE_ALLOWLIST: tuple[tuple[str, str], ...] = tuple(
    sorted((t.__module__, t.__name__) for t in state_types())
)
"""``(module, class)`` of every type the agent's state holds, as LangGraph's
``allowed_msgpack_modules`` takes them."""


def checkpoint_serde(*extra: type | tuple[str, str]) -> JsonPlusSerializer:
    """A checkpoint serialiser that reads the agent's state back without warnings, and
    ``extra`` (your own state's classes, or ``(module, class)`` pairs) besides."""
    more = [(t.__module__, t.__name__) if isinstance(t, type) else tuple(t) for t in extra]
    return JsonPlusSerializer(allowed_msgpack_modules=[*SERDE_ALLOWLIST, *more])
