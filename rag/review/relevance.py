"""Which recalled memories an answer uses, and which of them may lead it.

Semantic search is recall-oriented: a memory about tracking updates scores 0.5 against a question
about webhook deliveries because both talk about webhooks. The score alone cannot tell a memory
*about* the question from one that merely shares its vocabulary, so relevance also asks the
knowledge graph what the question is about (its matched resources and first endpoints):

- a memory **leads** (and may reorder the answer) when it is about the question: semantically
  strong on its own (:data:`STRONG_SEMANTIC_SCORE`), or semantically plausible and naming the
  answer's first endpoint (any version of it), or naming one of the first endpoints presented
  *and* a resource the question names, when that endpoint does what the question asks (its
  operation kind is one the question asks for); when the graph presents nothing, a plausible
  memory about a resource the question names leads;
- a memory found through the endpoints the answer presents comes along when it is about the
  answer's main endpoint (the first primary endpoint, any version of it, and its prerequisites),
  at most :data:`ALONG` of them;
- a team prohibition of any presented endpoint always applies: the endpoint is left out or
  flagged, citing the first :data:`FORBIDDING` memories that forbid it (most important first).

The endpoints a memory's text names without refs (its ``inferred_refs``) count for the last rule
only: read as "about" as well, they made 24 of SendGrid's 25 dev controls cite a memory
(``CHANGELOG.md``, 2026-12-02).

Everything else is left out, so a question no memory is about gets exactly the docs' answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from apiatlas.graph.memory_refs import in_reading_order
from apiatlas.graph.model import EndpointRef, MemoryLink
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.review.precedence import MemoryView

STRONG_SEMANTIC_SCORE = 0.6
"""Similarity from which a memory is about the question on its own (all-MiniLM-L6-v2)."""
FIRST_PRESENTED = 3
"""How many of the first primary endpoints count as "what the question is about"."""
ALONG = 2
"""At most this many memories come along only for being about the answer's main endpoint, in
the order given (semantic hits, then the most important linked ones); memories that lead or
forbid are not counted. Without a bound an answer at 10,000 memories cited 450 to 1,279 of them
(``make bench``). 2 is the smallest bound that leaves memory precedence unchanged on every dev
memory set (1 takes SendGrid's from 0.275 to 0.261; CHANGELOG.md, 2026-12-03)."""

FORBIDDING = 1
"""Memories cited for forbidding one presented endpoint (those that lead are not counted): one
says why it is forbidden; the bench's 10,000 memories carry 200 bans of each endpoint.
CHANGELOG.md, 2026-12-03: the sweep on the dev memory sets."""

_VERSION_SEGMENT = re.compile(r"/v\d+(?=/|$)")


def family(endpoint: EndpointRef) -> str:
    """The endpoint with version segments left out: ``POST /v1/locations`` and
    ``POST /v2/locations`` are versions of one operation."""
    return f"{endpoint.api} {endpoint.method.upper()} {_VERSION_SEGMENT.sub('', endpoint.path)}"


def main_endpoints(lookup: GraphLookup) -> list[EndpointRef]:
    """The answer's main endpoint: the first primary endpoint and its direct prerequisites.

    Prerequisites of prerequisites are left out: creating the shipment a tracking event needs
    is a step away, and a memory about how the team creates locations is not about tracking.
    """
    if not lookup.primary:
        return []
    first = lookup.primary[0]
    out = {first.key: first}
    for dep in lookup.prerequisites:
        if dep.endpoint.key == first.key:
            out.setdefault(dep.provider.key, dep.provider)
    return list(out.values())


def presented_keys(lookup: GraphLookup, related: Sequence[EndpointRef] = ()) -> set[str]:
    """Keys of every endpoint the answer would present (primary, prerequisites, guide-described)."""
    keys = {e.key for e in [*lookup.primary, *related]}
    return keys | {d.provider.key for d in lookup.prerequisites}


def about_question(view: MemoryView, lookup: GraphLookup) -> bool:
    """Whether a semantically recalled memory is about the question (and may lead the answer)."""
    if view.hit.matched == "ref":
        return False
    if view.hit.score >= STRONG_SEMANTIC_SCORE:
        return True
    refs = _endpoints(view)
    names_resource = bool(
        {e.resource for e in refs if e.resource}
        & {m.resource.key for m in lookup.matched_resources}
    )
    if not lookup.primary:
        return names_resource
    if _families(refs) & {family(lookup.primary[0])}:
        return True
    named = {e.key for e in refs}
    asked = set(lookup.intent.kinds)
    # Naming a presented endpoint makes a memory about the question only when that endpoint
    # does what the question asks: a memory about searching locations is not about creating one.
    return names_resource and any(
        e.key in named and (not asked or e.kind in asked)
        for e in lookup.primary[:FIRST_PRESENTED]
    )


def about_answer(view: MemoryView, lookup: GraphLookup) -> bool:
    """Whether a memory names the answer's main endpoint (any version) or its prerequisites."""
    return bool(_families(_endpoints(view)) & _families(main_endpoints(lookup)))


def forbidden_keys(view: MemoryView, presented: set[str]) -> set[str]:
    """The keys of the presented endpoints the memory forbids."""
    return {e.key for e in view.endpoints("avoid")} & presented


def relevant_views(
    views: Sequence[MemoryView], lookup: GraphLookup, related: Sequence[EndpointRef] = ()
) -> list[MemoryView]:
    """The memories the answer uses, in their order, each marked whether it leads.

    Args:
        views: The recalled and ref-linked memories, most relevant first.
        lookup: What the graph would present for the question.
        related: Endpoints a guide answer would present.
    """
    presented = presented_keys(lookup, related)
    kept: list[MemoryView] = []
    along = 0
    forbidders: Counter[str] = Counter()  # presented key -> memories kept that forbid it
    for view in views:
        view.leads = about_question(view, lookup)
        banned = forbidden_keys(view, presented)
        if view.leads or any(forbidders[key] < FORBIDDING for key in banned):
            kept.append(view)
            forbidders.update(banned)
        elif not banned and along < ALONG and about_answer(view, lookup):
            # A prohibition left out above is not brought back: others already say it.
            kept.append(view)
            along += 1
    return kept


def linked_to_read(
    links: Mapping[str, Sequence[MemoryLink]],
    lookup: GraphLookup,
    presented: Sequence[EndpointRef],
    recalled: Collection[str] = (),
) -> list[tuple[list[str], int]]:
    """Which of the memories linked to the presented endpoints the answer may use, so only
    they are read: as ``(ids in reading order, how many)`` lists, for
    :meth:`~apiatlas.rag.memory.links.LinkedMemory.first_in_force`.

    For each presented endpoint, the first :data:`FORBIDDING` memories that forbid it; and the
    first :data:`ALONG` that forbid none and name the answer's main endpoint (any version of
    it) with a ref the team gave. A memory found only through links never leads
    (:func:`about_question`), so no other linked memory can come into the answer.

    Args:
        links: The graph's links of the presented endpoints (``memory_links``).
        lookup: What the graph would present in full (its main endpoint is the first).
        presented: Every endpoint the answer presents or names.
        recalled: The memories already at hand (recalled for the question): not read again,
            and not counted.
    """
    unique = list({e.key: e for e in presented}.values())
    fresh = {key: [link for link in found if link.memory_id not in recalled]
             for key, found in links.items()}  # fmt: skip
    out = [
        ([link.memory_id for link in fresh.get(e.key, ()) if link.avoids], FORBIDDING)
        for e in unique
    ]
    banning = {link.memory_id for found in fresh.values() for link in found if link.avoids}
    main = _families(main_endpoints(lookup))
    naming = [
        link for e in unique if family(e) in main for link in fresh.get(e.key, ())
        if link.named and link.memory_id not in banning
    ]  # fmt: skip
    out.append(([link.memory_id for link in in_reading_order(naming)], ALONG))
    return out


def _endpoints(view: MemoryView) -> list[EndpointRef]:
    """The endpoints the team's refs name: those inferred from the text only forbid."""
    given = set(view.memory.given_endpoint_refs)
    return [e for ref, found in view.resolved.items() if ref in given for e in found]


def _families(endpoints: Iterable[EndpointRef]) -> set[str]:
    return {family(e) for e in endpoints}
