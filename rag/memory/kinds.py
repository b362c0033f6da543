"""The kinds of project memory, importable without the memory models (the CLI's choices: a
command that never reads a memory, ``apiatlas ask --server`` included, does not load pydantic)."""

from __future__ import annotations

from typing import Literal

MemoryKind = Literal["fact", "decision", "procedure", "warning", "episode"]
MEMORY_KINDS: tuple[MemoryKind, ...] = ("fact", "decision", "procedure", "warning", "episode")
