"""The learned ranker: three small logistic models read from a committed JSON artifact.

- The candidate model gives each candidate endpoint the probability that it is an endpoint the
  question expects.
- The answer model gives the probability that the question is answerable at all, from the
  pool's best candidates (their probabilities, name similarity, how much of the question the
  API's words cover).
- The confidence model (:mod:`~apiatlas.rag.ranking.confidence`) gives the probability that
  the first presented endpoint is one a correct answer starts with.
- The query adapter (:mod:`~apiatlas.rag.ranking.adapter`) maps the question's vector before
  the pool's dense features are computed.

All are trained and their thresholds chosen on the dev datasets only, by ``make train``
(:mod:`apiatlas.evals.train`); scoring needs the standard library and numpy (the adapter).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from apiatlas.errors import UsageError
from apiatlas.graph.model import EndpointRef
from apiatlas.rag.ranking.adapter import QueryAdapter
from apiatlas.rag.ranking.confidence import CONFIDENCE_FEATURES, confidence_vector
from apiatlas.rag.ranking.features import FEATURES, GROUPS, Pool

ARTIFACT = Path(__file__).with_name("ranker.json")
ANSWER_FEATURES: tuple[str, ...] = (
    "top", "margin", "unknown_share", "top_coverage", "explicit", "best_name", "best_about",
    "best_card", "best_graph", "unmatched_share", "kind_on_subject",
)
"""Question-level features of the answer model, in vector order."""


@dataclass(frozen=True)
class Linear:
    """A standardised logistic model: ``sigmoid(coef · (x - mean) / scale + intercept)``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float

    def probability(self, vector: Sequence[float]) -> float:
        """The model's probability for one feature vector."""
        z = self.intercept
        for x, m, s, c in zip(vector, self.mean, self.scale, self.coef, strict=True):
            z += c * (x - m) / s
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_json(self) -> dict[str, Any]:
        """The JSON form stored in the artifact."""
        return {
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Linear:
        """Read :meth:`to_json` output back."""
        return cls(
            features=tuple(data["features"]),
            mean=tuple(data["mean"]),
            scale=tuple(data["scale"]),
            coef=tuple(data["coef"]),
            intercept=float(data["intercept"]),
        )


@dataclass(frozen=True)
class Decision:
    """What the ranker decided for one question.

    Attributes:
        answer: Whether to present endpoints at all.
        answer_probability: The answer model's probability that the question is answerable.
        ranked: Candidates with their probabilities, best first.
        primary: The candidates the ranker is confident in (at least the best one).
        confidence: The calibrated probability that the first of ``ranked`` is an endpoint a
            correct answer starts with.
    """

    answer: bool
    answer_probability: float
    ranked: list[tuple[EndpointRef, float]]
    primary: list[EndpointRef]
    confidence: float = 0.0


@dataclass(frozen=True)
class RankerModel:
    """The candidate and answer models with their dev-calibrated thresholds.

    Attributes:
        candidate: Probability that a candidate is expected.
        answer: Probability that the question is answerable.
        confidence: Probability that the first presented candidate is expected (calibrated).
        answer_threshold: Answer when the answer model's probability reaches this.
        primary_threshold: A candidate after the first is primary when its probability
            reaches this; the others are related.
        confidence_threshold: The lowest confidence of an ``answer`` outcome (below it the
            answer is ``unsure``).
        named_confidence: The confidence of an answer the graph gives alone, when the
            question names its endpoints outright (the share of such dev answers that are right).
        disabled: Feature groups (:data:`~apiatlas.rag.ranking.features.GROUPS`) the model was
            trained without (an ablation); their features read as 0.
        meta: How the artifact was made (datasets, their digests).
        adapter: The question-vector map the candidate model was trained with, if any.
    """

    candidate: Linear
    answer: Linear
    confidence: Linear
    answer_threshold: float
    primary_threshold: float
    confidence_threshold: float
    named_confidence: float
    disabled: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    adapter: QueryAdapter | None = None

    def scores(self, pool: Pool) -> list[float]:
        """The candidate probability of every candidate in ``pool``, in pool order."""
        return [self.candidate.probability(masked(v, self.disabled)) for v in pool.vectors]

    def decide(self, pool: Pool) -> Decision:
        """Rank ``pool``, decide whether to answer, and split confident from related."""
        probabilities = self.scores(pool)
        order = presented_order(pool, probabilities)
        ranked = [(pool.refs[i], probabilities[i], pool.vectors[i]) for i in order]
        if not ranked:
            return Decision(False, 0.0, [], [])
        p_answer = self.answer.probability(answer_vector(pool, [p for _, p, _ in ranked],
                                                         ranked[0][2]))
        answer = pool.explicit or p_answer >= self.answer_threshold
        primary = [ranked[0][0]] + [r for r, p, _ in ranked[1:] if p >= self.primary_threshold]
        confidence = self.confidence.probability(
            confidence_vector(pool, order, probabilities, p_answer))
        return Decision(answer, p_answer, [(r, p) for r, p, _ in ranked], primary, confidence)

    def to_json(self) -> dict[str, Any]:
        """The artifact's JSON document."""
        return {
            "candidate": self.candidate.to_json(),
            "answer": self.answer.to_json(),
            "confidence": self.confidence.to_json(),
            "answer_threshold": self.answer_threshold,
            "primary_threshold": self.primary_threshold,
            "confidence_threshold": self.confidence_threshold,
            "named_confidence": self.named_confidence,
            "disabled": list(self.disabled),
            "meta": self.meta,
            **({"adapter": self.adapter.to_json()} if self.adapter is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RankerModel:
        """Read :meth:`to_json` output back, checking it fits this version's features.

        Raises:
            UsageError: The artifact was trained on other features.
        """
        model = cls(
            candidate=Linear.from_json(data["candidate"]),
            answer=Linear.from_json(data["answer"]),
            confidence=Linear.from_json(data["confidence"]),
            answer_threshold=float(data["answer_threshold"]),
            primary_threshold=float(data["primary_threshold"]),
            confidence_threshold=float(data["confidence_threshold"]),
            named_confidence=float(data["named_confidence"]),
            disabled=tuple(data.get("disabled", ())),
            meta=dict(data.get("meta") or {}),
            adapter=QueryAdapter.from_json(data["adapter"]) if data.get("adapter") else None,
        )
        if (model.candidate.features, model.answer.features, model.confidence.features) != (
                FEATURES, ANSWER_FEATURES, CONFIDENCE_FEATURES):
            raise UsageError(
                "the ranker artifact was trained on other features than this apiatlas computes: "
                "run `make train` to rebuild it"
            )
        return model


_EXPLICIT = FEATURES.index("explicit")
_COVERAGE = FEATURES.index("cov_all")
_NAME = FEATURES.index("name_dense")
_ABOUT = FEATURES.index("about_dense")
_CARD = FEATURES.index("card_dense")
_GRAPH = FEATURES.index("graph_score")
_RESOURCE = FEATURES.index("resource_match")
_KIND = FEATURES.index("kind_any")


def presented_order(pool: Pool, probabilities: Sequence[float]) -> list[int]:
    """Candidate indices in the order :meth:`RankerModel.decide` ranks them: an endpoint the
    question names outright first, then by ``probabilities``, the shorter path, the key."""
    refs, vectors = pool.refs, pool.vectors
    return sorted(range(len(refs)), key=lambda i: (
        -vectors[i][_EXPLICIT], -probabilities[i], len(refs[i].path), refs[i].key))


def masked(vector: Sequence[float], disabled: Collection[str]) -> list[float]:
    """``vector`` with the features of the ``disabled`` groups set to 0."""
    if not disabled:
        return list(vector)
    off = {FEATURES.index(f) for g in disabled for f in GROUPS[g]}
    return [0.0 if i in off else x for i, x in enumerate(vector)]


def answer_vector(pool: Pool, probabilities: Sequence[float], best: Sequence[float]) -> list[float]:
    """The answer model's features: ``probabilities`` best first, ``best`` the top vector."""
    top = probabilities[0] if probabilities else 0.0
    second = probabilities[1] if len(probabilities) > 1 else 0.0
    best_name = max((v[_NAME] for v in pool.vectors), default=0.0)
    best_about = max((v[_ABOUT] for v in pool.vectors), default=0.0)
    best_card = max((v[_CARD] for v in pool.vectors), default=0.0)
    best_graph = max((v[_GRAPH] for v in pool.vectors), default=0.0)
    # Does some endpoint of a resource the question names do the kind of thing it asks?
    kind_on_subject = max((v[_RESOURCE] * v[_KIND] for v in pool.vectors), default=0.0)
    return [top, top - second, pool.unknown_share, best[_COVERAGE], float(pool.explicit),
            best_name, best_about, best_card, best_graph, pool.unmatched_share, kind_on_subject]


@lru_cache(maxsize=4)
def load_model(path: Path = ARTIFACT) -> RankerModel:
    """The ranker stored at ``path`` (the packaged artifact by default).

    Raises:
        UsageError: The file is missing or not a ranker artifact.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RankerModel.from_json(data)
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(f"{path}: cannot read the ranker artifact ({e}); run `make train`") from e
