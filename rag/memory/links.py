"""Project memory linked to the knowledge graph: memories about the endpoints the graph returns.

:class:`LinkedMemory` is a :class:`~apiatlas.rag.memory.store.ProjectMemory` that keeps the
graph's memory links (:meth:`~apiatlas.graph.store.MemoryLinks.link_memory`) in step with every write: each
version written to the ``BaseStore`` is linked to what its refs name while it is in force, and
unlinked once it is superseded or forgotten. The ``BaseStore`` stays the record; the graph only
holds links, so :meth:`LinkedMemory.relink` can rebuild them at any time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from langgraph.store.base import BaseStore

from apiatlas.graph.store import LinkedGraphStore
from apiatlas.rag.memory.model import Memory, as_utc, utc_now
from apiatlas.rag.memory.store import ProjectMemory, UnknownMemory


class LinkedMemory(ProjectMemory):
    """One project's memory, linked to the endpoints and resources its refs name.

    Args:
        store: The LangGraph store holding the memories.
        project: The project every read, write and link is scoped to.
        graph: The project's knowledge graph (SQLite or Neo4j).
        agent_type: The agent type whose shared memories are read too.
        clock: The time source (tests pass a fixed clock).
    """

    def __init__(
        self,
        store: BaseStore,
        project: str,
        *,
        graph: LinkedGraphStore,
        agent_type: str | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(store, project, agent_type=agent_type, clock=clock)
        self.graph = graph

    def about(self, keys: Sequence[str], *, at: datetime | None = None) -> list[Memory]:
        """The memories linked to these endpoint keys (directly or through their resource) that
        were valid at ``at`` (now when ``None``), most important first.

        Links exist for memories in force, so an ``at`` in the past narrows the answer but
        cannot bring back memories closed since then: :meth:`recall` with ``refs`` covers those.
        Memories of another agent type than this one's are left out.
        """
        linked = self.graph.memories_about(self.project, keys)
        ids = sorted({memory_id for ids in linked.values() for memory_id in ids})
        found = []
        for memory_id in ids:
            try:
                memory = self.get(memory_id)
            except UnknownMemory:
                continue  # another agent type's memory, invisible to this one
            if memory.valid_at(at):
                found.append(memory)
        return sorted(found, key=lambda m: (-m.importance, as_utc(m.created_at), m.id))

    def missing_refs(self, memory: Memory) -> list[str]:
        """The memory's endpoint refs that name no endpoint in the graph (to flag as stale)."""
        if not memory.endpoint_refs:
            return []
        found = self.graph.resolve_signatures(self.project, memory.endpoint_refs)
        return [ref for ref in memory.endpoint_refs if not found[ref]]

    def relink(self) -> None:
        """Re-link every version in the store: those in force to what their refs name, closed
        ones to nothing. Run it when the graph was rebuilt or its links lost."""
        self._link(self.list(include_history=True))

    def _put(self, memories: Sequence[Memory]) -> None:
        """Write the versions to the ``BaseStore`` first (the record), then their links."""
        super()._put(memories)
        self._link(memories)

    def _link(self, memories: Sequence[Memory]) -> None:
        for memory in memories:
            if memory.valid_to is None:
                self.graph.link_memory(self.project, memory.id, memory.refs)
            else:
                self.graph.unlink_memory(self.project, memory.id)
