"""Candidate endpoints for a question and their features, all from the API's own text and graph.

The pool is the union of what the knowledge graph ranked and the best endpoints of the field
index: by per-field BM25, by BM25 over all fields, and by the dense similarity of each of their
short texts (name and prose). Every candidate gets the same features, so a small learned model can weigh them; nothing
here is tuned to a dataset. Every signal is exact (no approximate nearest-neighbour search), so
the same question on the same graph always gives the same pool: `make train` reproduces its
artifact byte for byte.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from apiatlas.graph.model import EndpointRef
from apiatlas.graph.words import is_param, path_segments
from apiatlas.rag.question.intent import Intent
from apiatlas.rag.retrieval.endpoint_fit import MAX_FIT, intent_fit
from apiatlas.rag.retrieval.graph import EXPLICIT_SCORE
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.topk import ranks, top_positions
from apiatlas.rag.ranking.fields import DENSE_FIELDS, FIELDS, FieldIndex, terms

DEPTH_CAP = 6
"""Path segments (parameters aside) from which the ``depth`` feature reads the same."""
ID_PARAMS_CAP = 4
"""Path parameters from which the ``id_params`` feature reads the same."""
LEXICAL_POOL = 20
"""Endpoints the per-field lexical index adds to the pool (by summed normalised field score)."""

FEATURES: tuple[str, ...] = (
    *(f"lex_{name}" for name in FIELDS),
    "cov_all",
    "cov_head",
    *(f"{name}_dense{part}" for name in DENSE_FIELDS for part in ("", "_gap", "_rr")),
    "text_rr",
    "graph_rr",
    "graph_score",
    "resource_match",
    "resource_own",
    "kind_first",
    "kind_any",
    "fit",
    "depth",
    "id_params",
    "ends_param",
    "deprecated",
    "docs_count",
    "resource_size",
    "explicit",
)
"""Feature names, in the order of every feature vector."""

GROUPS: dict[str, tuple[str, ...]] = {
    **{f"lexical:{name}": (f"lex_{name}",) for name in FIELDS},
    "coverage": ("cov_all", "cov_head"),
    **{f"dense:{name}": tuple(f"{name}_dense{part}" for part in ("", "_gap", "_rr"))
       for name in DENSE_FIELDS},
    "text": ("text_rr",),
    "graph": ("graph_rr", "graph_score"),
    "resource": ("resource_match", "resource_own"),
    "kind": ("kind_first", "kind_any", "fit"),
    "structure": (
        "depth", "id_params", "ends_param", "deprecated", "docs_count", "resource_size"
    ),
    "explicit": ("explicit",),
}
"""Signals by name, for ablations: each group can be switched off as a whole."""


@dataclass
class Pool:
    """The candidates for one question with their feature vectors.

    Attributes:
        refs: Candidate endpoints (graph references, so ``kind`` and ``resource`` are known).
        vectors: One feature vector per candidate, in :data:`FEATURES` order.
        unknown_share: Share of the question's content words that no endpoint of the API uses.
        unmatched_share: Share of the question's resource terms that matched no resource of
            the graph, by name or by embedding similarity.
        explicit: The question named an endpoint or operation id that exists.
    """

    refs: list[EndpointRef] = field(default_factory=list)
    vectors: list[list[float]] = field(default_factory=list)
    unknown_share: float = 0.0
    unmatched_share: float = 0.0
    explicit: bool = False


def build_pool(
    question: str,
    lookup: GraphLookup,
    graph: Sequence[EndpointRef],
    index: FieldIndex,
    query_vector: Sequence[float] | None = None,
) -> Pool:
    """The candidate pool of ``question`` and every candidate's features.

    Args:
        question: The developer's question.
        lookup: The knowledge graph's lookup (the analysed intent, the resources matched).
        graph: The knowledge graph's candidates, best first, with the graph's ``score``.
        index: The per-field lexical index of the same project and API.
        query_vector: The question's embedding, for the similarity to every endpoint's short
            texts (those features read 0 without it).
    """
    intent = lookup.intent
    query = terms(question)
    scores = index.field_scores(query)
    norm = {name: float(s.max(initial=0.0)) or 1.0 for name, s in scores.items()}
    lexical = [index.endpoints[p].key for p in _lexical_top(scores, norm)]
    text = index.text_scores(query)
    by_text = top_positions(text, LEXICAL_POOL, among=np.flatnonzero(text))
    similar = index.similarities(query_vector) if query_vector is not None else {}
    by_dense = [p for sims in similar.values() for p in top_positions(sims, LEXICAL_POOL)]

    order = [r.key for r in graph] + lexical
    order += [index.endpoints[p].key for p in by_text + by_dense]
    # A graph candidate outside the index's API has no position, and is left out.
    members = list(index.positions(dict.fromkeys(order)).items())
    positions = [p for _, p in members]
    # Ranks (1 = best) among every endpoint, worked out for the pool's members only.
    matched = [p for p in positions if text[p] > 0]
    signals = _Signals(
        query=query, index=index, lookup=lookup, scores=scores, norm=norm,
        text_rank=dict(zip(matched, ranks(text, matched), strict=True)),
        similar=similar,
        best_similarity={name: float(sims.max()) for name, sims in similar.items()},
        dense_rank={name: dict(zip(positions, ranks(sims, positions), strict=True))
                    for name, sims in similar.items()},
        graph_rank={ref.key: i for i, ref in reversed(list(enumerate(graph, 1)))},
        by_key={r.key: r for r in graph},
        top_graph=max((r.score for r in graph if r.score < EXPLICIT_SCORE), default=0.0) or 1.0,
        explicit={r.key for r in graph if r.score >= EXPLICIT_SCORE},
        cov_all=index.coverages(query, positions),
        cov_head=index.coverages(query, positions, ("name", "path")),
    )  # fmt: skip
    pool = Pool(explicit=bool(signals.explicit))
    for key, position in members:
        ref = signals.by_key.get(key) or index.endpoints[position]
        pool.refs.append(ref)
        pool.vectors.append(_features(signals, ref, key, position))
    pool.unknown_share = _unknown_share(query, index, intent)
    single = [t for t in intent.resource_terms if " " not in t]
    unmatched = [t for t in lookup.unmatched_terms if " " not in t]
    pool.unmatched_share = len(unmatched) / len(single) if single else 0.0
    return pool


@dataclass(frozen=True)
class _Signals:
    """What every candidate's features are read from, for one question."""

    query: list[str]
    index: FieldIndex
    lookup: GraphLookup
    scores: dict[str, np.ndarray]
    norm: dict[str, float]
    text_rank: dict[int, int]
    similar: dict[str, np.ndarray]
    best_similarity: dict[str, float]
    dense_rank: dict[str, dict[int, int]]
    graph_rank: dict[str, int]
    by_key: dict[str, EndpointRef]
    top_graph: float
    explicit: set[str]
    cov_all: dict[int, float]
    """:meth:`FieldIndex.coverages` of the members over every field, by position."""
    cov_head: dict[int, float]
    """The same over the ``name`` and ``path`` fields."""


def _features(s: _Signals, ref: EndpointRef, key: str, position: int) -> list[float]:
    """One candidate's feature vector, in :data:`FEATURES` order."""
    intent, index = s.lookup.intent, s.index
    features = {f"lex_{name}": float(s.scores[name][position]) / s.norm[name] for name in FIELDS}
    features["cov_all"] = s.cov_all[position]
    features["cov_head"] = s.cov_head[position]
    for name in DENSE_FIELDS:
        sims = s.similar.get(name)
        if sims is None:
            features.update({f"{name}_dense": 0.0, f"{name}_dense_gap": 0.0,
                             f"{name}_dense_rr": 0.0})
            continue
        value = float(sims[position])
        features[f"{name}_dense"] = value
        features[f"{name}_dense_gap"] = s.best_similarity[name] - value
        features[f"{name}_dense_rr"] = 1.0 / s.dense_rank[name][position]
    features["text_rr"] = 1.0 / s.text_rank[position] if position in s.text_rank else 0.0
    features["graph_rr"] = 1.0 / s.graph_rank[key] if key in s.graph_rank else 0.0
    graph_score = s.by_key[key].score if key in s.by_key else 0.0
    features["graph_score"] = min(graph_score, s.top_graph) / s.top_graph
    features["resource_match"], features["resource_own"] = _resource_match(ref, s.lookup)
    features["kind_first"] = float(intent.kinds[:1] == [ref.kind])
    features["kind_any"] = float(ref.kind in intent.kinds)
    features["fit"] = intent_fit(ref, intent) / MAX_FIT
    features["depth"], features["id_params"], features["ends_param"] = _shape(ref.path)
    features["deprecated"] = float(ref.deprecated)
    features["docs_count"] = math.log1p(index.docs_count[position]) / 3
    features["resource_size"] = math.log1p(index.resource_size[position]) / 4
    features["explicit"] = float(key in s.explicit)
    return [features[name] for name in FEATURES]


@lru_cache(maxsize=1 << 16)
def _shape(path: str) -> tuple[float, float, float]:
    """The ``depth``, ``id_params`` and ``ends_param`` features of ``path``."""
    segments = path_segments(path)
    params = [s for s in segments if is_param(s)]
    return (min(len(segments) - len(params), DEPTH_CAP) / DEPTH_CAP,
            min(len(params), ID_PARAMS_CAP) / ID_PARAMS_CAP,
            float(bool(segments) and is_param(segments[-1])))


def _resource_match(ref: EndpointRef, lookup: GraphLookup) -> tuple[float, float]:
    """How well the question named the endpoint's resource (or one it sits under), and whether
    it named exactly that resource: the best match score of each."""
    under, own = 0.0, 0.0
    for match in lookup.matched_resources:
        key = match.resource.key
        if ref.resource == key:
            own = max(own, match.score)
        if ref.resource == key or ref.resource.startswith(key + "/"):
            under = max(under, match.score)
    return under, own


def _lexical_top(scores: dict[str, np.ndarray], norm: dict[str, float]) -> list[int]:
    """Index positions of the endpoints with the best summed normalised field scores."""
    total = np.zeros(len(next(iter(scores.values()), ())))
    for name, per in scores.items():
        total += per / norm[name]
    return top_positions(total, LEXICAL_POOL, among=np.flatnonzero(total))


def _unknown_share(query: Sequence[str], index: FieldIndex, intent: Intent) -> float:
    """Share of the question's content words (names of things it cites aside) the API lacks."""
    named = {t for name in intent.names for t in terms(name)}
    words = [t for t in dict.fromkeys(query) if t not in named]
    if not words:
        return 0.0
    return sum(not index.knows(t) for t in words) / len(words)
