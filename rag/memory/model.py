"""Project memory entries: what a team has learned, with its history.

A memory is a fact, a decision, a procedure (with steps), a warning or an episode. It names the
endpoints (``METHOD /path``) and resources it is about in ``refs``, is valid over a time range
(``valid_from`` .. ``valid_to``) and may replace an earlier memory (``supersedes``). Memories are
never deleted: superseding or forgetting one closes its validity, so the history stays.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

from apiatlas.graph.memory_refs import ref_target
from apiatlas.graph.signatures import HTTP_METHODS

from apiatlas.rag.memory.kinds import MEMORY_KINDS, MemoryKind  # noqa: F401 (both kept here)

MemoryScope = Literal["project", "agent_type"]
Matched = Literal["semantic", "ref", "both"]


def utc_now() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(timezone.utc)


def as_utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (naive datetimes are taken to be UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def parse_ref(text: str) -> str:
    """The stored form of a ref: ``METHOD /path`` or a resource name (lower case).

    The method is upper-cased and a trailing slash dropped; path-parameter names are kept (refs
    are compared with them blanked, see :func:`apiatlas.graph.signatures.endpoint_key`).

    Examples:
        >>> parse_ref("post /v2/locations/{location_id}/")
        'POST /v2/locations/{location_id}'
        >>> parse_ref("Locations")
        'locations'

    Raises:
        UsageError: The ref is empty, or starts with an HTTP method but has no ``/path``.
    """
    value = text.strip()
    if ref_target(value).kind == "resource":  # raises for an empty or malformed ref
        return value.lower()
    method, path = value.split(None, 1)
    return f"{method.upper()} {path.strip().rstrip('/') or '/'}"


def is_endpoint_ref(ref: str) -> bool:
    """Whether a stored ref names an endpoint (``METHOD /path``) rather than a resource."""
    return " /" in ref and ref.split(" ", 1)[0] in HTTP_METHODS


class Memory(BaseModel):
    """One version of one memory.

    Attributes:
        id: Stable id, cited as ``memory:<id>``.
        project: The project it belongs to.
        agent_type: Set when the memory is shared by every agent of that type (in its project)
            rather than by the whole project.
        kind: fact, decision, procedure, warning or episode.
        text: What the team recorded, with secrets replaced by ``[REDACTED:<kind>]``.
        steps: A procedure's steps, in order.
        refs: Endpoints (``METHOD /path``, normalised) and resources (lower case) it is about.
        inferred_refs: Endpoints its text names that the project's API has, found when it was
            written with no endpoint refs (and again when the spec changes): see
            :class:`~apiatlas.rag.memory.links.LinkedMemory`. Shown as inferred; giving ``refs``
            replaces them.
        importance: 1 (trivia) .. 10 (must never be missed).
        author: Who recorded it.
        source: Where it came from (a ticket, a postmortem, a URL).
        created_at: When it was recorded.
        valid_from: From when it holds.
        valid_to: Until when it held (``None``: still valid).
        supersedes: The id of the memory this one replaces.
        superseded_by: The id of the memory that replaced this one.
        forgotten_at: When it was forgotten (a soft delete; ``valid_to`` is set too).
        scrubbed: The kinds of secrets removed before storing (e.g. ``["bearer-token"]``).
    """

    id: str
    project: str
    agent_type: str | None = None
    kind: MemoryKind
    text: str
    steps: list[str] = Field(default_factory=list)
    refs: list[str] = Field(default_factory=list)
    inferred_refs: list[str] = Field(default_factory=list)
    importance: int = Field(default=5, ge=1, le=10)
    author: str = ""
    source: str = ""
    created_at: datetime
    valid_from: datetime
    valid_to: datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    forgotten_at: datetime | None = None
    scrubbed: list[str] = Field(default_factory=list)

    @property
    def citation(self) -> str:
        """How answers cite it: ``memory:<id>``."""
        return f"memory:{self.id}"

    @property
    def linked_refs(self) -> list[str]:
        """Every ref the memory is about: its refs, then the inferred ones."""
        return [*self.refs, *(r for r in self.inferred_refs if r not in self.refs)]

    @property
    def endpoint_refs(self) -> list[str]:
        """The endpoints (``METHOD /path``) the memory is about, inferred ones included."""
        return [r for r in self.linked_refs if is_endpoint_ref(r)]

    @property
    def given_endpoint_refs(self) -> list[str]:
        """The endpoint refs the team gave (an answer flags those the API lacks as stale)."""
        return [r for r in self.refs if is_endpoint_ref(r)]

    @property
    def resource_refs(self) -> list[str]:
        """The refs that name resources."""
        return [r for r in self.refs if not is_endpoint_ref(r)]

    @property
    def reading_rank(self) -> str:
        """Where it comes when memories about an endpoint are read: most important first, then
        oldest (then by id). A string, so the graph's links keep the order without knowing
        memories."""
        created = as_utc(self.created_at).strftime("%Y-%m-%dT%H:%M:%S.%f")
        return f"{10 - self.importance:02d} {created}"

    def valid_at(self, at: datetime | None = None) -> bool:
        """Whether the team held this memory at ``at`` (now when ``None``).

        It must have been recorded by then, be valid from then, and not yet have been closed
        (superseded or forgotten).
        """
        moment = as_utc(at) if at is not None else utc_now()
        if as_utc(self.created_at) > moment or as_utc(self.valid_from) > moment:
            return False
        return self.valid_to is None or as_utc(self.valid_to) > moment

    def search_text(self) -> str:
        """The text the semantic index embeds: kind, text, steps and refs."""
        parts = [f"{self.kind}: {self.text}", *self.steps, *self.refs]
        return "\n".join(p for p in parts if p)


class MemoryHit(BaseModel):
    """A memory found for a question.

    Attributes:
        memory: The memory.
        score: Semantic similarity to the question (0 when it matched by ref only).
        matched: ``semantic`` (similar to the question), ``ref`` (about an endpoint or resource
            the caller named) or ``both``.
    """

    memory: Memory
    score: float = 0.0
    matched: Matched = "semantic"
