"""Project memory: a team's facts, decisions, procedures, warnings and episodes.

Memory takes precedence over external docs: the agent consults it first and follows it where it
disagrees with the specs or guides.
"""

from apiatlas.rag.memory.model import MEMORY_KINDS, Memory, MemoryHit, MemoryKind, parse_ref
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
