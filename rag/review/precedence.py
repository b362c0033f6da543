"""Project memory over the docs: reorder, forbid and annotate the graph's answer, deterministically.

The knowledge graph and the vectors say what the API offers; the team's memory says what the
team does with it, and wins. Given the memories relevant to a question (each with the stance it
takes towards the endpoints it names, see :mod:`apiatlas.rag.memory.stance`), this module:

- leaves out the presented endpoints the team forbids (they stay visible as "forbidden by your
  team") and brings in the endpoint the memory says to use instead;
- moves the endpoints the team prefers to the front when the graph found them among its
  candidates, even when the docs mark them deprecated;
- notes every such disagreement, so the answer can say it followed the memory and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.endpoint_fit import replacements
from apiatlas.rag.memory.model import Memory, MemoryHit
from apiatlas.rag.memory.stance import Stance, named_endpoints

PROCEDURE_ANSWER_SCORE = 0.5
"""Similarity from which a team procedure answers a question on its own. Re-measured on the
round-two encoder, whose cosines run about 0.04 below round one's
(``experiments/2026-11-28-memory-thresholds/``, "Round two"). On dev sample-memory, the agent's
figures are identical over 0.45–0.60. The procedure's own question scores 0.551 (0.591 on round
one, so 0.6 never let it answer alone), and the highest other question 0.392: 0.5 lies
between."""

NoteKind = Literal["deprecated_used", "preferred", "caution"]


@dataclass
class MemoryView:
    """One relevant memory, with what it says about each endpoint and what the graph has of them.

    Attributes:
        hit: The memory and how it matched.
        stances: Endpoint ref -> stance.
        resolved: Endpoint ref -> the endpoints it names in the graph (empty: none).
        missing: Endpoint refs that name no endpoint the API has.
        conflicts: Disagreements with the docs, filled in by :func:`apply_precedence`.
    """

    hit: MemoryHit
    stances: dict[str, Stance]
    resolved: dict[str, list[EndpointRef]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    leads: bool | None = None
    """Whether the memory is about the question and may reorder the answer (set by
    :func:`apiatlas.rag.review.relevance.relevant_views`; ``None``: any semantic match leads)."""

    @property
    def memory(self) -> Memory:
        """The memory."""
        return self.hit.memory

    @property
    def about_question(self) -> bool:
        """Whether the memory may lead and reorder the answer."""
        return self.leads if self.leads is not None else self.hit.matched != "ref"

    def endpoints(self, stance: Stance) -> list[EndpointRef]:
        """The graph's endpoints for the refs the memory takes ``stance`` towards."""
        return [e for r, s in self.stances.items() if s == stance for e in self.resolved.get(r, [])]


@dataclass
class Forbidden:
    """A presented endpoint the team forbids, with what to use instead."""

    endpoint: EndpointRef
    memory_id: str
    instead: list[EndpointRef] = field(default_factory=list)


@dataclass
class EndpointNote:
    """What the answer says under a presented endpoint, citing the memory."""

    memory_id: str
    kind: NoteKind
    replacement: EndpointRef | None = None
    text: str = ""


@dataclass
class TeamMemory:
    """The memories an answer uses, and what they changed."""

    views: list[MemoryView]
    forbidden: list[Forbidden] = field(default_factory=list)
    notes: dict[str, list[EndpointNote]] = field(default_factory=dict)
    avoided: set[str] = field(default_factory=set)
    """Keys of every endpoint the team forbids: nothing presents them."""


def answering_procedure(hits: Sequence[MemoryHit]) -> MemoryHit | None:
    """The team procedure that answers the question alone, if one matched strongly.

    It must be the memory most similar to the question, score at least
    :data:`PROCEDURE_ANSWER_SCORE`, and name at least one endpoint (to list and verify).
    """
    semantic = [h for h in hits if h.matched != "ref"]
    if not semantic:
        return None
    best = max(semantic, key=lambda h: h.score)
    if (
        best.memory.kind == "procedure"
        and best.score >= PROCEDURE_ANSWER_SCORE
        and named_endpoints(best.memory)
    ):
        return best
    return None


def apply_precedence(
    views: Sequence[MemoryView],
    lookup: GraphLookup,
    *,
    pool: Sequence[EndpointRef] = (),
    k: int = 5,
    api: str | None = None,
    related: Sequence[EndpointRef] = (),
) -> tuple[GraphLookup, TeamMemory]:
    """Make the lookup follow the team's memory; say where it departs from the docs.

    Args:
        views: Relevant memories, most relevant first.
        lookup: What the graph (and vectors) would present.
        pool: The graph's other candidates for the question: a preferred endpoint among them
            is brought to the front.
        k: How many endpoints to present at most.
        api: Only bring in endpoints of this API.
        related: Endpoints a guide answer would present (forbidden ones are recorded too; the
            caller leaves out every key in ``TeamMemory.avoided``).
    """
    team = TeamMemory(views=list(views))
    presented = {e.key for e in [*lookup.primary, *related]}
    presented |= {d.provider.key for d in lookup.prerequisites}
    avoided = team.avoided = _forbid(team, presented)
    leaders = {v.memory.id for v in team.views if v.about_question}
    # A memory about the question puts what to use instead first; one that only forbids a
    # presented endpoint puts it where the forbidden endpoint stood.
    instead = {e.key for f in team.forbidden if f.memory_id in leaders for e in f.instead}
    in_place = {
        f.endpoint.key: f.instead[0]
        for f in team.forbidden
        if f.memory_id not in leaders and f.instead
        and (api is None or f.instead[0].api == api)
    }
    primary = _substituted(lookup.primary, avoided, in_place)
    prerequisites = [d for d in lookup.prerequisites if d.provider.key not in avoided]
    substitutes = {e.key for e in in_place.values()}
    lead = _leading(team, lookup, pool, api, instead, presented | substitutes)
    ordered = [*lead.values(), *(e for e in primary if e.key not in lead)][:k]
    shown = {e.key for e in ordered}
    for view in team.views:
        for endpoint in view.endpoints("caution"):
            if endpoint.key in shown:
                team.notes.setdefault(endpoint.key, []).append(
                    EndpointNote(memory_id=view.memory.id, kind="caution", text=view.memory.text)
                )
    swaps = dict(lookup.replacements)
    swaps.update(
        {key: n.replacement for key, ns in team.notes.items() for n in ns if n.replacement}
    )
    updated = lookup.model_copy(
        update={"primary": ordered, "prerequisites": prerequisites, "replacements": swaps}
    )
    return updated, team


def _leading(
    team: TeamMemory,
    lookup: GraphLookup,
    pool: Sequence[EndpointRef],
    api: str | None,
    instead: set[str],
    shown: set[str],
) -> dict[str, EndpointRef]:
    """The endpoints the memories put first, noting each preference (``instead``: what a
    memory about the question says to use instead of a forbidden endpoint; ``shown``: what
    the answer presents, substitutes included)."""
    known = {e.key for e in [*lookup.primary, *pool, *lookup.alternatives]}
    everything = [*lookup.primary, *pool, *lookup.replacements.values()]
    lead: dict[str, EndpointRef] = {}
    for view in team.views:
        # A memory not about the question (found through a presented endpoint, or only
        # forbidding one) may forbid or annotate, but reorders nothing. A memory judged about
        # the question (relevance.py) puts the endpoints it prefers first, found among the
        # graph's candidates or not: the team's way wins over what the docs rank. An unjudged
        # one reorders only among the candidates and leaves an abstention alone.
        for endpoint in view.endpoints("prefer"):
            if endpoint.key in team.avoided or (api is not None and endpoint.api != api):
                continue
            if endpoint.key in instead or (
                view.about_question
                and (view.leads is True or (endpoint.key in known and bool(lookup.primary)))
            ):
                lead.setdefault(endpoint.key, endpoint)
                _note_preferred(team, view, endpoint, lookup, everything, endpoint.key in instead)
            elif endpoint.key in shown:
                _note_preferred(team, view, endpoint, lookup, everything, True)
    return lead


def _substituted(
    primary: Sequence[EndpointRef], avoided: set[str], in_place: dict[str, EndpointRef]
) -> list[EndpointRef]:
    """``primary`` without the avoided endpoints, each replaced in place by its substitute."""
    out: dict[str, EndpointRef] = {}
    for endpoint in primary:
        if endpoint.key in avoided:
            sub = in_place.get(endpoint.key)
            if sub is not None and sub.key not in avoided:
                out.setdefault(sub.key, sub)
            continue
        out.setdefault(endpoint.key, endpoint)
    return list(out.values())


def _forbid(team: TeamMemory, presented: set[str]) -> set[str]:
    """Record the presented endpoints the team forbids; return every key it avoids."""
    avoided: set[str] = set()
    for view in team.views:
        instead = view.endpoints("prefer")
        for endpoint in view.endpoints("avoid"):
            avoided.add(endpoint.key)
            if endpoint.key not in presented or endpoint.key in {
                f.endpoint.key for f in team.forbidden
            }:
                continue
            team.forbidden.append(Forbidden(endpoint, view.memory.id, instead))
            use = f" and presents `{instead[0].signature}` instead" if instead else ""
            view.conflicts.append(
                f"the docs offer `{endpoint.signature}` for this; the team forbids it, so the "
                f"answer leaves it out{use}"
            )
    return avoided


def _note_preferred(
    team: TeamMemory,
    view: MemoryView,
    endpoint: EndpointRef,
    lookup: GraphLookup,
    everything: list[EndpointRef],
    explained: bool,
) -> None:
    """Note the preferred endpoint; a conflict when the docs rank another first (unless the
    conflict is already ``explained``, e.g. it replaces a forbidden endpoint)."""
    notes = team.notes.setdefault(endpoint.key, [])
    if any(n.memory_id == view.memory.id for n in notes):
        return
    if endpoint.deprecated:
        new = lookup.replacements.get(endpoint.key) or replacements([endpoint], everything).get(
            endpoint.key
        )
        notes.append(EndpointNote(view.memory.id, "deprecated_used", replacement=new))
        instead = f" (replacement: `{new.signature}`)" if new else ""
        view.conflicts.append(
            f"the docs mark `{endpoint.signature}` deprecated{instead}; the team uses it, so the "
            "answer presents it first"
        )
        return
    notes.append(EndpointNote(view.memory.id, "preferred"))
    first = lookup.primary[0] if lookup.primary else None
    if not explained and first is not None and first.key != endpoint.key:
        view.conflicts.append(
            f"the docs rank `{first.signature}` first; the team prefers `{endpoint.signature}`, "
            "so the answer presents it first"
        )
