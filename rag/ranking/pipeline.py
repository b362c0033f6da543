"""The ranking step: from a question, the graph's lookup and the vector hits to the endpoints
an answer presents (:func:`rank`, which the agent's ``rank`` node calls), and the candidate pool
it scores (:func:`question_pool`, for the code that trains and ablates the ranker outside the
agent)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from apiatlas.files import load_or_build, revision_file
from apiatlas.graph.model import Dependency, EndpointDetail, EndpointRef
from apiatlas.graph.store import TRAIL_DEPTH, KnowledgeGraphStore
from apiatlas.rag.answer.composer import relevant_passages
from apiatlas.rag.retrieval.endpoint_fit import replacements
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.ranking.adapter import QueryAdapter
from apiatlas.rag.ranking.features import Pool, build_pool
from apiatlas.rag.ranking.fields import CardKey, FieldIndex, build_field_index
from apiatlas.rag.ranking.lookups import id_mentions, lookup_calls
from apiatlas.rag.ranking.model import Decision, RankerModel
from apiatlas.rag.ranking.order import call_order
from apiatlas.rag.runtime.embeddings import model_id

CardVectors = Callable[[str, str | None], Mapping[CardKey, Sequence[float]]]
"""``(project, api) -> stored card-head vectors``, e.g. a partial of
:func:`~apiatlas.rag.retrieval.dense.load_card_vectors` over the vector store."""

GRAPH_CANDIDATES = 10
"""Graph candidates in the pool (the answer shows ``k`` of the ranking)."""
VECTOR_HITS = 20
"""Hybrid hits the agent fetches for guide passages (and, without the graph, endpoint cards)."""
ALTERNATIVES = 3
"""Endpoints offered instead when the answer model says the API has no such endpoint."""
PREREQUISITE_KINDS = frozenset({"create", "action"})
"""Tasks whose required ids must come from another call ("call these first")."""
PROVIDERS_PER_PARAMETER = 2
"""Providers kept per needed id: the answer shows one call and at most one alternative."""


class FieldIndexCache:
    """One :class:`FieldIndex` per project, current with the store's revision.

    With a ``folder``, each project's index is also written there, one file per revision: an
    ingest builds it (embedding the endpoints' short texts once), and every later process
    reads it instead of building it again. An API's index is cut from its project's.

    Args:
        embeddings: Embeds the endpoints' short texts (and, at question time, the question,
            so use the same model as the vector store's).
        cards: Reads the stored card-head vectors of a project (none without it).
        folder: Where built indexes are kept (``<home>/derived``); memory only when ``None``.
    """

    def __init__(
        self,
        embeddings: Embeddings | None = None,
        cards: CardVectors | None = None,
        folder: Path | None = None,
    ) -> None:
        self.embeddings = embeddings
        self.cards = cards
        self.folder = folder
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str | None], tuple[str, FieldIndex]] = {}

    def get(self, store: KnowledgeGraphStore, project: str, api: str | None) -> FieldIndex:
        """The index of ``project`` (``api`` only, when given), current with the store."""
        revision = store.revision(project)
        with self._lock:
            found = self._indexes.get((project, api))
            if found is not None and found[0] == revision:
                return found[1]
        index = self._project_index(store, project, revision)
        with self._lock:
            self._indexes[(project, None)] = (revision, index)
        if api is not None:
            index = index.subset(api)
            with self._lock:
                self._indexes[(project, api)] = (revision, index)
        return index

    def _project_index(self, store: KnowledgeGraphStore, project: str, revision: str) -> FieldIndex:
        with self._lock:
            found = self._indexes.get((project, None))
            if found is not None and found[0] == revision:
                return found[1]
        # The vectors belong to one embedding model: another model must not read them.
        model = model_id(self.embeddings) if self.embeddings is not None else "none"
        return load_or_build(
            revision_file(self.folder, "fields", project, revision, model),
            FieldIndex.load,
            lambda: build_field_index(
                store, project, None, self.embeddings,
                self.cards(project, None) if self.cards is not None else None,
            ),
            FieldIndex.save,
        )

    def query_vector(
        self, question: str, adapter: QueryAdapter | None = None
    ) -> list[float] | None:
        """The question's vector for the dense features (``None`` without embeddings), mapped
        by ``adapter`` when it was trained for this embedding model."""
        if self.embeddings is None:
            return None
        vector = self.embeddings.embed_query(question)
        return adapter.apply(vector, model_id(self.embeddings)) if adapter is not None else vector


def question_pool(
    question: str,
    *,
    graph: KnowledgeGraphRetriever,
    fields: FieldIndexCache,
    project: str,
    api: str | None = None,
    adapter: QueryAdapter | None = None,
) -> Pool:
    """The candidate pool of ``question``, built exactly as the agent builds it (with the
    ranker's ``adapter``)."""
    intent = graph.analyse(question, project=project, api=api)
    lookup = graph.lookup(question, project=project, api=api, k=GRAPH_CANDIDATES, intent=intent)
    index = fields.get(graph.store, project, api)
    vector = fields.query_vector(question, adapter)
    return build_pool(question, lookup, lookup.primary, index, vector)


@dataclass(frozen=True)
class Scope:
    """Where a question is asked: its project, an API of it (``None``: every API), how many
    endpoints the answer gives in full (``k``, and as many guide passages) and how many it
    names in all (``named``: the ranker's next ones a line each among the related)."""

    project: str
    api: str | None = None
    k: int = 5
    named: int = 5


@dataclass(frozen=True)
class RankingParts:
    """What the ranking reads: the graph, its retriever (resources, prerequisites), the field
    indexes and the learned model."""

    store: KnowledgeGraphStore
    graph: KnowledgeGraphRetriever
    fields: FieldIndexCache
    model: RankerModel


@dataclass(frozen=True)
class Ranking:
    """What the ranking decided, as the agent's state takes it: a field left ``None`` is not
    updated."""

    documents: list[Document]
    lookup: GraphLookup | None = None
    related: list[EndpointRef] | None = None
    details: dict[str, EndpointDetail] | None = None
    confidence: float = 0.0
    """The ranker's calibrated confidence in its first endpoint (0: no learned ranking, when
    the graph is down or the project has no endpoints)."""

    def update(self) -> dict[str, Any]:
        """The state update."""
        found = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in found.items() if value is not None}


def rank(
    question: str,
    lookup: GraphLookup,
    candidates: Sequence[EndpointRef],
    hits: list[Document],
    scope: Scope,
    parts: RankingParts,
    known: Mapping[str, EndpointDetail | None] | None = None,
    degraded: bool = False,
) -> Ranking:
    """Rank the graph's ``candidates`` and the field index's best matches (per-field and
    whole-text BM25, compact-name vectors) with the learned ranker, and keep the guide passages
    among the vector ``hits``.

    The ranking replaces the graph's primary endpoints: those the ranker is confident in are
    primary, the rest of the top ``k`` related, unless the answer model says the question asks
    for something the API does not have (then nothing is presented). ``known`` holds endpoint
    details already read; ``degraded``: the graph is down, and the endpoint cards among the
    hits are the answer.
    """
    documents = [d for d in hits if d.metadata.get("kind") != "endpoint"][: scope.k]
    if degraded:
        primary = endpoints_from_cards(hits)[: scope.k]
        return Ranking(documents, lookup=lookup.model_copy(update={"primary": primary}))
    index = parts.fields.get(parts.store, scope.project, scope.api)
    if not len(index):
        # No endpoint at all (a guides-only project): the sections' described endpoints.
        related = described(parts.store, scope, relevant_passages(lookup, documents))
        return Ranking(documents, related=related[: scope.k])
    candidates = list(candidates) or lookup.primary
    vector = parts.fields.query_vector(question, parts.model.adapter)
    decision = parts.model.decide(build_pool(question, lookup, candidates, index, vector))
    if not decision.answer:
        if not lookup.alternatives:
            alternatives = [r for r, _ in decision.ranked[:ALTERNATIVES]]
            lookup = lookup.model_copy(update={"alternatives": alternatives})
        abstain = lookup.model_copy(update={"primary": [], "prerequisites": []})
        return Ranking([], lookup=abstain, related=[], confidence=decision.confidence)
    update = _presented(question, lookup, decision, scope, parts, known or {})
    update["replacements"] = replacements(
        update["primary"] + update["related"], endpoints_from_cards(hits) + list(candidates)
    )
    lookup = lookup.model_copy(update=update)
    return Ranking(documents, lookup=lookup,
                   details=endpoint_details(parts.store, scope.project, lookup, known),
                   confidence=decision.confidence)


def _presented(
    question: str,
    lookup: GraphLookup,
    decision: Decision,
    scope: Scope,
    parts: RankingParts,
    known: Mapping[str, EndpointDetail | None],
) -> dict[str, Any]:
    """The lookup's update for an answer: primary and related endpoints, the calls that find
    what the first needs, and the calls that must come first."""
    shown = [r.model_copy(update={"score": round(p, 4)}) for r, p in decision.ranked[: scope.k]]
    confident = {r.key for r in decision.primary}
    primary = [r for r in shown if r.key in confident]
    trails = {r.key: parts.store.dependency_trail(scope.project, r.key, max_depth=TRAIL_DEPTH)
              for r in primary}
    if len(primary) > 1:
        primary = call_order(primary, [d for t in trails.values() for d in t])
    needed: set[str] = set()
    if primary[0].kind in PREREQUISITE_KINDS:
        # A call the first endpoint needs first belongs under "call these first", after the
        # answer, not among the alternatives to it.
        needed = {
            d.provider.key for d in parts.graph.prerequisites(scope.project, primary[:1], trails)
        }
    related = [r for r in shown if r.key not in confident | needed]
    finds, given = _lookups(question, primary[0], trails[primary[0].key], scope, parts, known)
    # An id the question gives or has looked up needs no "call this first".
    settled = {(primary[0].key, p) for p in given}
    settled |= {(d.endpoint.key, d.parameter) for d in finds}
    prerequisites = [
        d for d in _prerequisites(primary, lookup, trails, scope, parts)
        if (d.endpoint.key, d.parameter) not in settled
    ]
    if finds:
        # The calls that find what the answer needs by the value the developer has come
        # first, in call order.
        found = {d.provider.key: d.provider for d in finds}
        primary = list(found.values()) + [r for r in primary if r.key not in found]
        related = [r for r in related if r.key not in found]
    named = {r.key for r in [*primary, *related]} | needed
    named |= {d.provider.key for d in prerequisites}
    related += [
        r.model_copy(update={"score": round(p, 4)})
        for r, p in decision.ranked[scope.k : scope.named] if r.key not in named
    ]
    return {"primary": primary, "related": related, "lookups": finds,
            "prerequisites": prerequisites, "alternatives": []}


def _lookups(
    question: str,
    first: EndpointRef,
    trail: list[Dependency],
    scope: Scope,
    parts: RankingParts,
    known: Mapping[str, EndpointDetail | None],
) -> tuple[list[Dependency], set[str]]:
    """The calls that find the ids ``first`` needs which the question names by another
    value (:func:`~apiatlas.rag.ranking.lookups.lookup_calls`), and the ids it gives."""
    resources = parts.graph.matchers.resources(parts.store, scope.project, None)
    by_key = {r.key: r for r in resources}

    def collection(provider: EndpointRef) -> EndpointRef | None:
        key = f"{provider.api}/endpoint/GET {provider.path}"
        detail = _endpoint(parts.store, scope.project, key, known)
        return detail.endpoint if detail is not None else None

    mentions = id_mentions(question, first, trail, by_key)
    given = {p for p, mention in mentions.items() if mention == "given"}
    return lookup_calls(mentions, first, trail, collection), given


def _prerequisites(
    primary: list[EndpointRef],
    lookup: GraphLookup,
    trails: Mapping[str, list[Dependency]],
    scope: Scope,
    parts: RankingParts,
) -> list[Dependency]:
    """Calls that must come first, only when the task creates or acts on something
    (``trails``: the primaries' trails, already read).

    Reading, listing, updating or deleting takes the id the developer already has; a create
    or action call is where a required id must come from another call.
    """
    task = lookup.intent.kinds[0] if lookup.intent.kinds else primary[0].kind if primary else ""
    if task not in PREREQUISITE_KINDS:
        return []
    kept: dict[tuple[str, str], list[Dependency]] = {}
    for dep in parts.graph.prerequisites(scope.project, primary, trails):
        kept.setdefault((dep.endpoint.key, dep.parameter), []).append(dep)
    out: list[Dependency] = []
    for group in kept.values():
        # The call that creates the needed thing first, then one way to look it up.
        group.sort(key=lambda d: (d.provider.kind != "create", d.provider.deprecated))
        out += group[:PROVIDERS_PER_PARAMETER]
    return out


def endpoint_details(
    store: KnowledgeGraphStore,
    project: str,
    lookup: GraphLookup,
    known: Mapping[str, EndpointDetail | None] | None = None,
) -> dict[str, EndpointDetail]:
    """The details of the lookup's primary endpoints and of the calls that come first
    (``known``: those already read)."""
    keys = [p.key for p in lookup.primary] + [d.provider.key for d in lookup.prerequisites]
    details: dict[str, EndpointDetail] = {}
    for key in dict.fromkeys(keys):
        detail = _endpoint(store, project, key, known or {})
        if detail is not None:
            details[key] = detail
    return details


def _endpoint(
    store: KnowledgeGraphStore, project: str, key: str,
    known: Mapping[str, EndpointDetail | None],
) -> EndpointDetail | None:  # fmt: skip
    return known[key] if key in known else store.get_endpoint(project, key)


def described(
    store: KnowledgeGraphStore, scope: Scope, passages: list[Document]
) -> list[EndpointRef]:
    """Endpoints linked (DESCRIBES) from the sections the passages come from."""
    wanted = {(d.metadata.get("source"), d.metadata.get("anchor") or "") for d in passages}
    if not wanted:
        return []
    out: dict[str, EndpointRef] = {}
    for node in store.nodes(scope.project, "DocSection"):
        if (node.props.get("source"), node.props.get("anchor") or "") not in wanted:
            continue
        hood = store.neighbourhood(scope.project, node.key, depth=1)
        for edge in hood.edges:
            if edge.type == "DESCRIBES" and edge.src == node.key and edge.dst not in out:
                detail = store.get_endpoint(scope.project, edge.dst)
                if detail is not None and (scope.api is None or detail.endpoint.api == scope.api):
                    out[edge.dst] = detail.endpoint
    return list(out.values())


def endpoints_from_cards(documents: list[Document]) -> list[EndpointRef]:
    """Endpoint references from the endpoint cards among vector hits, in rank order, unique."""
    found: dict[str, EndpointRef] = {}
    for doc in documents:
        meta = doc.metadata
        if meta.get("kind") != "endpoint":
            continue
        signature = f"{meta.get('method')} {meta.get('path')}"
        key = f"{meta.get('api')}/endpoint/{signature}"
        found.setdefault(
            key,
            EndpointRef(
                key=key,
                api=str(meta.get("api", "")),
                method=str(meta.get("method", "")),
                path=str(meta.get("path", "")),
                operation_id=str(meta.get("operation_id", "")),
                summary=str(meta.get("summary", "")),
                deprecated=bool(meta.get("deprecated", False)),
                source=str(meta.get("source", "")),
                pointer=str(meta.get("pointer", "")),
            ),
        )
    return list(found.values())
