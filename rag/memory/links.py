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

from apiatlas.graph.model import LinkNotes
from apiatlas.graph.store import LinkedGraphStore
from apiatlas.rag.memory.model import Memory, utc_now
from apiatlas.rag.memory.stance import classify_stances, named_endpoints
from apiatlas.rag.memory.store import ProjectMemory


READ_PAGE = 50
"""Memories :meth:`LinkedMemory.first_in_force` reads at a time past a list's head."""


def by_reading_rank(memories: Sequence[Memory]) -> list[Memory]:
    """Most important first, then oldest, then by id: the order of the graph's links."""
    return sorted(memories, key=lambda m: (m.reading_rank, m.id))


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
        return by_reading_rank(found)

    def first_in_force(
        self, wanted: Sequence[tuple[Sequence[str], int]], *, at: datetime | None = None
    ) -> list[Memory]:
        """From each list of ids, in its order, the first ``n`` memories of this agent type
        valid at ``at``; all of them in reading order, each once.

        One read for the heads of every list; a list whose head held memories of another agent
        type or out of force reads on, in pages of :data:`READ_PAGE`.
        """
        lists = [(list(dict.fromkeys(ids)), n) for ids, n in wanted]
        read_to = [0] * len(lists)
        found: dict[str, Memory] = {}
        seen: set[str] = set()
        while True:
            page: list[str] = []
            for k, (ids, n) in enumerate(lists):
                kept = sum(i in found for i in ids[: read_to[k]])
                if kept >= n or read_to[k] >= len(ids):
                    continue
                step = n - kept if read_to[k] == 0 else max(n - kept, READ_PAGE)
                page += ids[read_to[k] : read_to[k] + step]
                read_to[k] += step
            if not page:
                break
            unread = [i for i in dict.fromkeys(page) if i not in seen]
            seen.update(unread)
            found.update((m.id, m) for m in self.get_many(unread) if m.valid_at(at))
        chosen: dict[str, Memory] = {}
        for ids, n in wanted:
            for memory_id in [i for i in ids if i in found][:n]:
                chosen[memory_id] = found[memory_id]
        return by_reading_rank(list(chosen.values()))

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
                stances = classify_stances(memory)
                notes = LinkNotes(
                    avoid=frozenset(ref for ref, stance in stances.items() if stance == "avoid"),
                    inferred=frozenset(memory.inferred_refs) - set(memory.refs),
                    rank=memory.reading_rank,
                )
                self.graph.link_memory(self.project, memory.id, memory.linked_refs, notes)
            else:
                self.graph.unlink_memory(self.project, memory.id)
