"""Project memory on LangGraph's ``BaseStore``: remember, supersede, forget, recall.

Namespaces scope every memory to its project, and optionally to an agent type within it:

- ``("apiatlas", <project>, "memories")``: shared by every agent of the project;
- ``("apiatlas", <project>, "agent_types", <agent_type>, "memories")``: shared by every agent of
  that type in the project.

A :class:`ProjectMemory` reads its project's memories plus those of its own agent type, and never
another project's or another agent type's. Each stored value is one version of a memory; the
semantic index embeds its ``search_text`` field.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from apiatlas.errors import UsageError
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.memory.model import (
    MEMORY_KINDS,
    Memory,
    MemoryHit,
    MemoryKind,
    MemoryScope,
    as_utc,
    parse_ref,
    utc_now,
)
from apiatlas.scrub import scrub_text

ROOT = "apiatlas"
INDEX_FIELD = "search_text"
"""The field of each stored value that the semantic index embeds."""
MIN_SEMANTIC_SCORE = 0.30
"""Cosine similarity below which a memory is not even plausibly about the question
(all-MiniLM-L6-v2). Recall is deliberately loose: the agent keeps a plausible memory only when
the knowledge graph agrees it is about the question (:mod:`apiatlas.rag.review.relevance`)."""
SEMANTIC_CANDIDATES = 40
LIST_PAGE = 1_000
"""Memories read per store search when listing: a list reads every page (10,000 once capped it)."""
MAX_MEMORY_CHARS = 10_000
"""The longest memory text recorded, at every way in: a team's note, decision or procedure,
not the document it comes from (a 1,000,000-character memory was stored whole and came back in
a 1 MB answer, issue 53)."""


class UnknownMemory(UsageError):
    """No memory with that id exists in this project (or agent type)."""


def _label(value: str, what: str) -> str:
    if not value or "." in value:
        raise UsageError(f"{what} {value!r} cannot name a memory namespace: use a non-empty name without '.'")
    return value


def project_namespace(project: str) -> tuple[str, ...]:
    """The namespace of memories shared by the whole project."""
    return (ROOT, _label(project, "project"), "memories")


def agent_type_namespace(project: str, agent_type: str) -> tuple[str, ...]:
    """The namespace of memories shared by every agent of ``agent_type`` in the project."""
    return (ROOT, _label(project, "project"), "agent_types", _label(agent_type, "agent type"), "memories")


def _scrubbed(text: str, found: list[str]) -> str:
    result = scrub_text(text)
    found.extend(result.findings)
    return result.text


class ProjectMemory:
    """One project's memory (and one agent type's, when given), over any LangGraph store.

    Args:
        store: ``SqliteStore`` / ``PostgresStore`` with a semantic index on ``search_text``
            (see :func:`apiatlas.rag.memory.backends.open_memory_store`), or ``InMemoryStore``
            for tests of pure logic.
        project: The project every read and write is scoped to.
        agent_type: The agent type whose shared memories are read too (and written with
            ``scope="agent_type"``).
        clock: The time source (tests pass a fixed clock).
    """

    def __init__(
        self,
        store: BaseStore,
        project: str,
        *,
        agent_type: str | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.project = project
        self.agent_type = agent_type
        self.clock = clock
        self._namespaces = [project_namespace(project)]
        if agent_type is not None:
            self._namespaces.append(agent_type_namespace(project, agent_type))

    # -- writing -------------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        kind: MemoryKind = "fact",
        refs: Iterable[str] = (),
        steps: Sequence[str] = (),
        importance: int = 5,
        author: str = "",
        source: str = "",
        valid_from: datetime | None = None,
        scope: MemoryScope = "project",
    ) -> Memory:
        """Record a new memory; secrets in any text field are scrubbed first.

        Raises:
            UsageError: Empty text or text over :data:`MAX_MEMORY_CHARS`, an unknown kind, a
                bad ref, importance outside 1..10, or ``scope="agent_type"`` without an agent
                type.
        """
        memory = self._new(
            text,
            kind=kind,
            refs=refs,
            steps=steps,
            importance=importance,
            author=author,
            source=source,
            valid_from=valid_from,
            scope=scope,
        )
        [stored] = self._put([memory])
        return stored

    def supersede(
        self,
        old_id: str,
        text: str,
        *,
        kind: MemoryKind | None = None,
        refs: Iterable[str] | None = None,
        steps: Sequence[str] | None = None,
        importance: int | None = None,
        author: str = "",
        source: str = "",
    ) -> Memory:
        """Record a new version of ``old_id``; the old one stays as history, closed now.

        Fields not given are carried over from the old version.

        Raises:
            UnknownMemory: ``old_id`` does not exist here.
            UsageError: ``old_id`` is no longer valid (already superseded or forgotten).
        """
        old = self.get(old_id)
        if old.valid_to is not None:
            raise UsageError(
                f"memory {old_id} is no longer valid (closed {old.valid_to.isoformat()}): "
                f"supersede its latest version, {old.superseded_by or 'none (it was forgotten)'}"
            )
        now = self.clock()
        new = self._new(
            text,
            kind=kind or old.kind,
            refs=old.refs if refs is None else refs,
            steps=old.steps if steps is None else steps,
            importance=old.importance if importance is None else importance,
            author=author or old.author,
            source=source or old.source,
            valid_from=now,
            scope="agent_type" if old.agent_type else "project",
            supersedes=old.id,
        )
        closed = old.model_copy(update={"valid_to": now, "superseded_by": new.id})
        _, stored = self._put([closed, new])
        return stored

    def forget(self, memory_id: str) -> Memory:
        """Soft-delete: close the memory's validity now; it stays in the history.

        Forgetting a forgotten memory changes nothing.

        Raises:
            UnknownMemory: ``memory_id`` does not exist here.
            UsageError: ``memory_id`` was superseded: forgetting an old version would leave
                its newer version in force, so the latest version must be forgotten.
        """
        memory = self.get(memory_id)
        if memory.forgotten_at is not None:
            return memory
        if memory.superseded_by is not None:
            raise UsageError(
                f"memory {memory_id} was superseded by {memory.superseded_by}: forget the "
                "latest version instead (`apiatlas memory history ID` shows the chain)"
            )
        now = self.clock()
        closed = memory.model_copy(
            update={"valid_to": memory.valid_to or now, "forgotten_at": now}
        )
        self._put([closed])
        return closed

    # -- reading -------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        """One memory version by id (valid or not).

        Raises:
            UnknownMemory: No such id in this project (or agent type).
        """
        for found in self.get_many([memory_id]):
            return found
        raise UnknownMemory(
            f"no memory {memory_id!r} in project {self.project!r}"
            + (f" (agent type {self.agent_type!r})" if self.agent_type else "")
            + ": `apiatlas memory list` shows the ids"
        )

    def list(
        self,
        *,
        at: datetime | None = None,
        kind: MemoryKind | None = None,
        include_history: bool = False,
    ) -> list[Memory]:
        """Memories valid at ``at`` (now when ``None``), oldest first.

        With ``include_history``, every version, valid or not.
        """
        memories = [
            Memory.model_validate(item.value)
            for namespace in self._namespaces
            for item in self._every(namespace)
        ]
        if not include_history:
            moment = self.clock() if at is None else at  # "now" is this memory's clock
            memories = [m for m in memories if m.valid_at(moment)]
        if kind is not None:
            memories = [m for m in memories if m.kind == kind]
        return sorted(memories, key=lambda m: (as_utc(m.created_at), m.id))

    def get_many(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memory versions with these ids that exist here, in one store batch (ids of
        another project or agent type are left out)."""
        ops = [GetOp(namespace, i) for i in memory_ids for namespace in self._namespaces]
        items = self.store.batch(ops) if ops else []
        return [Memory.model_validate(item.value) for item in items if item is not None]

    def history(self, memory_id: str) -> list[Memory]:
        """The supersede chain that ``memory_id`` belongs to, oldest version first."""
        memory = self.get(memory_id)
        while memory.supersedes:
            memory = self.get(memory.supersedes)
        chain = [memory]
        while chain[-1].superseded_by:
            chain.append(self.get(chain[-1].superseded_by))
        return chain

    def recall(
        self,
        question: str,
        *,
        at: datetime | None = None,
        refs: Iterable[str] = (),
        limit: int = 5,
        min_score: float = MIN_SEMANTIC_SCORE,
    ) -> list[MemoryHit]:
        """Memories relevant to ``question`` that were valid at ``at`` (now when ``None``).

        A memory is relevant when it is semantically similar to the question (score at least
        ``min_score``) or when one of its refs names an endpoint or resource in ``refs`` (the
        endpoints the graph found, for instance). Ref matches come first, then by score and
        importance.

        Args:
            question: The developer's question.
            at: The moment to answer for ("what did we know last month").
            refs: Endpoints (``METHOD /path``) and resource names to match refs against.
            limit: Maximum number of hits.
            min_score: Similarity threshold for semantic matches.
        """
        wanted = {_comparable(r) for r in refs}
        at = self.clock() if at is None else at
        hits: dict[str, MemoryHit] = {}
        for namespace in self._namespaces:
            items = self.store.search(namespace, query=question, limit=SEMANTIC_CANDIDATES)
            for item in items:
                memory = Memory.model_validate(item.value)
                score = float(item.score or 0.0)
                if memory.valid_at(at) and score >= min_score:
                    hits[memory.id] = MemoryHit(memory=memory, score=score, matched="semantic")
        if wanted:
            for memory in self.list(at=at):
                if not wanted & {_comparable(r) for r in memory.linked_refs}:
                    continue
                found = hits.get(memory.id)
                hits[memory.id] = MemoryHit(
                    memory=memory,
                    score=found.score if found else 0.0,
                    matched="both" if found else "ref",
                )
        ranked = sorted(
            hits.values(),
            key=lambda h: (h.matched == "semantic", -h.score, -h.memory.importance),
        )
        return ranked[:limit]

    # -- internals -----------------------------------------------------------------------------

    def _new(
        self,
        text: str,
        *,
        kind: str,
        refs: Iterable[str],
        steps: Sequence[str],
        importance: int,
        author: str,
        source: str,
        valid_from: datetime | None,
        scope: MemoryScope,
        supersedes: str | None = None,
    ) -> Memory:
        if not text.strip():
            raise UsageError("a memory needs text: say what the team knows or decided")
        if len(text) > MAX_MEMORY_CHARS:
            raise UsageError(
                f"the memory is {len(text):,} characters, over the {MAX_MEMORY_CHARS:,}-character "
                "limit: record what the team knows or decided, and name the document with the "
                "rest as its source"
            )
        if kind not in MEMORY_KINDS:
            raise UsageError(f"unknown memory kind {kind!r}: use one of {', '.join(MEMORY_KINDS)}")
        if not 1 <= importance <= 10:
            raise UsageError(f"importance must be 1..10, not {importance}")
        if scope == "agent_type" and self.agent_type is None:
            raise UsageError("scope='agent_type' needs a ProjectMemory opened with an agent_type")
        now = self.clock()
        found: list[str] = []
        return Memory(
            id=f"mem_{uuid.uuid4().hex[:12]}",
            project=self.project,
            agent_type=self.agent_type if scope == "agent_type" else None,
            kind=kind,  # type: ignore[arg-type]
            text=_scrubbed(text.strip(), found),
            steps=[_scrubbed(s.strip(), found) for s in steps if s.strip()],
            refs=list(dict.fromkeys(parse_ref(r) for r in refs)),
            importance=importance,
            author=_scrubbed(author, found),
            source=_scrubbed(source, found),
            created_at=now,
            valid_from=as_utc(valid_from) if valid_from is not None else now,
            supersedes=supersedes,
            scrubbed=found,
        )

    def _every(self, namespace: tuple[str, ...]) -> Iterator[Item]:
        offset = 0
        while True:
            page = self.store.search(namespace, limit=LIST_PAGE, offset=offset)
            yield from page
            if len(page) < LIST_PAGE:
                return
            offset += len(page)

    def _namespace_of(self, memory: Memory) -> tuple[str, ...]:
        if memory.agent_type is not None:
            return agent_type_namespace(memory.project, memory.agent_type)
        return project_namespace(memory.project)

    def _put(self, memories: Sequence[Memory]) -> list[Memory]:
        """Write the versions; return them as stored."""
        ops = [
            PutOp(
                namespace=self._namespace_of(m),
                key=m.id,
                value=_stored(m),
                index=[INDEX_FIELD],
            )
            for m in memories
        ]
        self.store.batch(ops)
        return list(memories)


def _stored(memory: Memory) -> dict[str, Any]:
    value = memory.model_dump(mode="json")
    value[INDEX_FIELD] = memory.search_text()
    return value


def _comparable(ref: str) -> str:
    """A ref in the form used to compare: endpoints with parameter names blanked."""
    stored = parse_ref(ref)
    return endpoint_key(stored) if " /" in stored else stored
