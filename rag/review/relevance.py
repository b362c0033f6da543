"""Which recalled memories an answer uses, and which of them may lead it: a learned model.

Semantic search is recall-oriented: a memory about tracking updates scores 0.5 against a question
about webhook deliveries because both talk about webhooks, and at a real team's size almost every
endpoint an answer presents carries a team note. Whether a memory is *about* the question is
decided by a small logistic model (:data:`RELEVANCE_FEATURES`, the artifact ``relevance.json``),
fitted on the dev memory sets out of fold by ``python -m apiatlas.evals.memory_relevance``, with
the threshold that gets the most dev cases' citations right (a memory case cites what it
expects, a control cites nothing). It reads what the graph says the question is about (the
answer's first endpoint, what is presented) beside the memory's similarity, words, refs, stance,
kind and importance. A memory the model keeps is cited and may lead (reorder) the answer.

The team's prohibitions always apply: a memory forbidding the answer's first endpoint is kept
whatever the model says (the endpoint is left out, and the answer says why), and an endpoint
presented further down that a memory forbids is left out (:func:`quietly_forbidden`).

Everything else is left out, so a question no memory is about gets exactly the docs' answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from apiatlas.graph.lexicon import STOP_WORDS
from apiatlas.graph.memory_refs import in_reading_order
from apiatlas.graph.model import EndpointRef, MemoryLink
from apiatlas.graph.words import singular
from apiatlas.rag.ranking.model import Linear
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.review.precedence import MemoryView

ARTIFACT = Path(__file__).with_name("relevance.json")
"""The fitted relevance model and its threshold (``python -m apiatlas.evals.memory_relevance``)."""
KINDS: tuple[str, ...] = ("fact", "decision", "procedure", "warning", "episode")
RELEVANCE_FEATURES: tuple[str, ...] = (
    "score", "semantic", "sem_rank", "ratio", "lex_q", "lex_jacc",
    "names_first", "names_presented", "no_refs", "forbids_first", "stance_first", "share_first",
    "path_q", "importance", "supersedes", *(f"kind_{k}" for k in KINDS),
)
"""The relevance model's features of one memory, in vector order: its similarity to the
question (absolute, whether it was found semantically at all, its rank among the semantic hits,
against the best); the question's words it shares (share of the question, Jaccard); whether the
team's refs name the answer's first endpoint (any version) or any presented endpoint, or there
are no refs; whether it forbids the first endpoint, or takes any stance on a version of it; how
many of the memories at hand name that endpoint; the question's words in the paths it names;
importance, whether it replaced an earlier memory, and its kind."""

ALONG = 2
"""Linked memories read for naming the answer's main endpoint (the first primary endpoint, any
version, and its prerequisites) with a ref the team gave, most important first. Without a bound
an answer at 10,000 memories read 450 to 1,279 of them (``make bench``). Under the learned model,
1 loses a dev case and 5 gives the figures of 2 (``docs/thresholds.md``)."""

FORBIDDING = 1
"""Linked memories read for forbidding one presented endpoint: one says why it is forbidden; the
bench's 10,000 memories carry 200 bans of each endpoint. CHANGELOG.md, 2026-12-03: the sweep on
the dev memory sets."""

_VERSION_SEGMENT = re.compile(r"/v\d+(?=/|$)")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class RelevanceModel:
    """The fitted model and the probability from which a memory is about the question."""

    model: Linear
    threshold: float

    def to_json(self) -> dict[str, object]:
        """The artifact's JSON form."""
        return {"model": self.model.to_json(), "threshold": self.threshold}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RelevanceModel:
        """Read :meth:`to_json` output back."""
        model = Linear.from_json(data["model"])  # type: ignore[arg-type]
        if model.features != RELEVANCE_FEATURES:
            raise ValueError(
                f"{ARTIFACT} was fitted on other features; run "
                "python -m apiatlas.evals.memory_relevance to fit it again"
            )
        return cls(model, float(data["threshold"]))  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def shipped_model() -> RelevanceModel:
    """The model in :data:`ARTIFACT`."""
    return RelevanceModel.from_json(json.loads(ARTIFACT.read_text(encoding="utf-8")))


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


def forbidden_keys(view: MemoryView, presented: set[str]) -> set[str]:
    """The keys of the presented endpoints the memory forbids."""
    return {e.key for e in view.endpoints("avoid")} & presented


def relevance_vector(
    view: MemoryView, lookup: GraphLookup, views: Sequence[MemoryView],
    related: Sequence[EndpointRef] = (),
) -> list[float]:
    """The relevance model's features of one memory (:data:`RELEVANCE_FEATURES`).

    Args:
        view: The memory, its stances and resolved refs.
        lookup: What the graph presents in full for the question (its first endpoint first).
        views: Every memory at hand for the question (``view`` among them).
        related: Endpoints a guide answer would present.
    """
    memory, hit = view.memory, view.hit
    semantic = sorted((v.hit.score for v in views if v.hit.matched != "ref"), reverse=True)
    is_semantic = hit.matched != "ref"
    best = semantic[0] if semantic else 0.0
    rank = semantic.index(hit.score) if is_semantic and hit.score in semantic else len(semantic)
    question = _words(lookup.intent.question)
    said = _words(" ".join([memory.text, *memory.steps]))
    shared = len(question & said)
    given = _endpoints(view)
    everything = [e for found in view.resolved.values() for e in found]
    first = family(lookup.primary[0]) if lookup.primary else None
    names_first = first is not None and first in _families(given)
    stance_first = first is not None and any(
        family(e) == first for stance in ("prefer", "avoid") for e in view.endpoints(stance))
    naming_first = sum(1 for v in views if first is not None and first in _families(_endpoints(v)))
    paths = {w for e in everything for w in _words(e.path)}
    return [
        hit.score, float(is_semantic), 1.0 / (1 + rank),
        hit.score / best if is_semantic and best > 0 else 0.0,
        shared / max(1, len(question)), shared / max(1, len(question | said)),
        float(names_first), float(bool({e.key for e in everything} & presented_keys(lookup, related))),
        float(not memory.refs),
        float(bool(lookup.primary) and lookup.primary[0].key in {e.key for e in view.endpoints("avoid")}),
        float(stance_first), 1.0 / naming_first if names_first else 0.0,
        len(question & paths) / max(1, len(question)),
        memory.importance / 10, float(memory.supersedes is not None),
        *(float(memory.kind == k) for k in KINDS),
    ]


def relevant_views(
    views: Sequence[MemoryView], lookup: GraphLookup, related: Sequence[EndpointRef] = (),
    model: RelevanceModel | None = None,
) -> list[MemoryView]:
    """The memories the answer cites, in their order, each marked whether it leads.

    A memory is kept and leads when the model finds it about the question; one forbidding the
    answer's first endpoint is kept (not leading) whatever the model says.

    Args:
        views: The recalled and ref-linked memories, most relevant first.
        lookup: What the graph would present in full for the question.
        related: Endpoints a guide answer would present.
        model: The relevance model (the shipped one when ``None``).
    """
    model = model or shipped_model()
    first = {lookup.primary[0].key} if lookup.primary else set()
    kept: list[MemoryView] = []
    for view in views:
        p = model.model.probability(relevance_vector(view, lookup, views, related))
        view.leads = p >= model.threshold
        if view.leads or forbidden_keys(view, first):
            kept.append(view)
    return kept


def quietly_forbidden(
    views: Sequence[MemoryView], kept: Sequence[MemoryView], presented: set[str]
) -> set[str]:
    """Presented endpoints forbidden by memories the answer does not cite: the answer leaves
    them out without a word, since the memory is not about the question."""
    cited = {v.memory.id for v in kept}
    return {key for v in views if v.memory.id not in cited for key in forbidden_keys(v, presented)}


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
    it) with a ref the team gave. Other linked memories are not read: at a real team's size
    every endpoint carries hundreds of them.

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
    """The endpoints the team's refs name (not those inferred from the text)."""
    given = set(view.memory.given_endpoint_refs)
    return [e for ref, found in view.resolved.items() if ref in given for e in found]


def _families(endpoints: Iterable[EndpointRef]) -> set[str]:
    return {family(e) for e in endpoints}


def _words(text: str) -> set[str]:
    """Content words, singular."""
    return {singular(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1}
