"""Project memory linked to the knowledge graph: memories about the endpoints the graph returns.

:class:`LinkedMemory` is a :class:`~apiatlas.rag.memory.store.ProjectMemory` that keeps the
graph's memory links (:meth:`~apiatlas.graph.store.MemoryLinks.link_memory`) in step with every write: each
version written to the ``BaseStore`` is linked to what its refs name while it is in force, and
unlinked once it is superseded or forgotten. The ``BaseStore`` stays the record; the graph only
holds links, so :meth:`LinkedMemory.relink` can rebuild them at any time.

A memory written with no endpoint refs (as a chat tool or an agent records one) is linked to the
endpoints its text names (``METHOD /path``, parameter names ignored) that the graph has; they are
kept as its ``inferred_refs`` and found again by :meth:`LinkedMemory.relink` after an ingest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from langgraph.store.base import BaseStore

from apiatlas.graph.store import LinkedGraphStore
from apiatlas.rag.memory.model import Memory, as_utc, utc_now
from apiatlas.rag.memory.stance import named_endpoints
from apiatlas.rag.memory.store import ProjectMemory
from apiatlas.rag.memory.touches import NEAR_DUPLICATE_SCORE, MemoryTouch, find_touches


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
        # Another agent type's memories are not read: invisible to this one.
        found = [m for m in self.get_many(ids) if m.valid_at(at)]
        return sorted(found, key=lambda m: (-m.importance, as_utc(m.created_at), m.id))

    def touches(self, memory: Memory, *, limit: int = 5) -> list[MemoryTouch]:
        """The memories in force that ``memory`` almost repeats or contradicts
        (:mod:`apiatlas.rag.memory.touches`): call it after writing, to tell the team."""
        now = self.clock()
        hits = self.recall(
            memory.search_text(), at=now, limit=limit + 1, min_score=NEAR_DUPLICATE_SCORE
        )
        similar = [(hit.memory, hit.score) for hit in hits]
        refs = memory.endpoint_refs
        found = self.graph.resolve_signatures(self.project, refs) if refs else {}
        keys = list(dict.fromkeys(e.key for endpoints in found.values() for e in endpoints))
        about = self.about(keys, at=now) if keys else []
        return find_touches(memory, similar, about)

    def missing_refs(self, memory: Memory) -> list[str]:
        """The memory's given endpoint refs that name no endpoint in the graph (to flag as
        stale)."""
        refs = memory.given_endpoint_refs
        if not refs:
            return []
        found = self.graph.resolve_signatures(self.project, refs)
        return [ref for ref in refs if not found[ref]]

    def relink(self) -> None:
        """Re-link every version in the store: those in force to what their refs name (their
        inferred refs found again, the record rewritten where they changed), closed ones to
        nothing. Run it when the graph was rebuilt or its links lost."""
        versions = self.list(include_history=True)
        current = self._with_inferred(versions)
        changed = [new for new, old in zip(current, versions, strict=True) if new != old]
        if changed:
            super()._put(changed)
        self._link(current)

    def _put(self, memories: Sequence[Memory]) -> list[Memory]:
        """Write the versions to the ``BaseStore`` first (the record, with the refs inferred
        from the text), then their links; return them as stored."""
        stored = super()._put(self._with_inferred(memories))
        self._link(stored)
        return stored

    def _with_inferred(self, memories: Sequence[Memory]) -> list[Memory]:
        """``memories`` with the endpoints their text names as ``inferred_refs``: those in
        force whose team gave no endpoint ref (closed versions keep theirs, as history). One
        graph lookup for all of them."""
        named = {
            m.id: named_endpoints(m.model_copy(update={"inferred_refs": []}))
            for m in memories
            if m.valid_to is None and not m.given_endpoint_refs
        }
        wanted = list(dict.fromkeys(ref for refs in named.values() for ref in refs))
        found = self.graph.resolve_signatures(self.project, wanted) if wanted else {}
        out = []
        for memory in memories:
            if memory.valid_to is not None:
                out.append(memory)
                continue
            refs = named.get(memory.id, [])
            inferred = list(dict.fromkeys(e.signature for r in refs for e in found[r]))
            same = inferred == memory.inferred_refs
            out.append(memory if same else memory.model_copy(update={"inferred_refs": inferred}))
        return out

    def _link(self, memories: Sequence[Memory]) -> None:
        for memory in memories:
            if memory.valid_to is None:
                self.graph.link_memory(self.project, memory.id, memory.linked_refs)
            else:
                self.graph.unlink_memory(self.project, memory.id)
