"""The learned ranker's two thresholds, chosen on out-of-fold dev predictions by ``make train``
(:mod:`apiatlas.evals.train`): when to answer at all, and which candidates after the first are
primary. How stable each rule is: ``experiments/2026-11-28-threshold-rules``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.linear_model import LogisticRegression

from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.ranking.model import Linear

if TYPE_CHECKING:
    from apiatlas.evals.train import Example

DECIMALS = 5
"""Decimals of the artifact's numbers (coefficients, thresholds)."""
C = 1.0
"""Inverse regularisation strength of the logistic models (scikit-learn's default)."""
MAX_FALSE_ABSTENTION = 0.05
PRESENTED = 5
"""Candidates the primary threshold is scored over."""
PRIMARY_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))
"""The primary thresholds tried: 0.05 to 0.95 by 0.05."""


def answer_threshold(p_answer: Sequence[float], answerable: Sequence[bool]) -> float:
    """The threshold with the best balanced accuracy whose false abstention stays at most
    :data:`MAX_FALSE_ABSTENTION` (the lowest threshold when none does)."""
    positives = [p for p, a in zip(p_answer, answerable, strict=True) if a]
    negatives = [p for p, a in zip(p_answer, answerable, strict=True) if not a]
    best, best_score = 0.0, -1.0
    for t in sorted({0.0, *(round(p, DECIMALS) for p in p_answer)}):
        false_abstention = sum(p < t for p in positives) / max(len(positives), 1)
        if false_abstention > MAX_FALSE_ABSTENTION:
            break
        rejected = sum(p < t for p in negatives) / max(len(negatives), 1)
        score = (rejected + 1 - false_abstention) / 2
        if score > best_score:
            best, best_score = t, score
    return best


def primary_scores(examples: Sequence[Example], probabilities: Sequence[Sequence[float]],
                   grid: Sequence[float] = PRIMARY_GRID
                   ) -> dict[float, list[tuple[float, float]]]:
    """Threshold -> each answerable case's ``(F1, precision)`` of the primary list against
    expected and acceptable endpoints, at each threshold of ``grid``: candidates after the
    first join the list when their probability reaches it."""
    cases = []
    for ex, probs in zip(examples, probabilities, strict=True):
        if not ex.case.answerable or not probs:
            continue
        wanted = set(ex.case.expected) | set(ex.case.acceptable)
        order = sorted(range(len(probs)), key=lambda i: -probs[i])[:PRESENTED]
        hits = [endpoint_key(ex.pool.refs[i].signature) in wanted for i in order]
        cases.append(([probs[i] for i in order], hits, len(set(ex.case.expected))))
    scores: dict[float, list[tuple[float, float]]] = {}
    for t in grid:
        scores[t] = []
        for probs, hits, n_expected in cases:
            chosen = [0] + [i for i in range(1, len(probs)) if probs[i] >= t]
            right = sum(hits[i] for i in chosen)
            precision, recall = right / len(chosen), min(right / max(n_expected, 1), 1.0)
            scores[t].append((2 * precision * recall / (precision + recall) if right else 0.0,
                              precision))
    return scores


def primary_curve(examples: Sequence[Example], probabilities: Sequence[Sequence[float]],
                  grid: Sequence[float] = PRIMARY_GRID) -> list[tuple[float, float, float]]:
    """``(threshold, mean F1, mean precision)`` of :func:`primary_scores` over the cases."""
    curve = []
    for t, rows in primary_scores(examples, probabilities, grid).items():
        count = max(len(rows), 1)
        curve.append((t, sum(f for f, _ in rows) / count, sum(p for _, p in rows) / count))
    return curve


def primary_threshold(examples: Sequence[Example], probabilities: Sequence[Sequence[float]],
                      grid: Sequence[float] = PRIMARY_GRID) -> float:
    """The probability above which a later candidate joins the primary list, by the
    one-standard-error rule: the highest threshold (the fewest extra primaries) whose mean F1
    is within one standard error of the best threshold's. The F1 curve is flat, and its argmax
    jumped on small changes (experiments/2026-11-28-threshold-rules)."""
    f1s = {t: [f for f, _ in rows]
           for t, rows in primary_scores(examples, probabilities, grid).items()}
    means = {t: statistics.fmean(v) if v else 0.0 for t, v in f1s.items()}
    best = max(means, key=lambda t: (means[t], -t))
    n = len(f1s[best])
    error = statistics.stdev(f1s[best]) / math.sqrt(n) if n > 1 else 0.0
    return max(t for t, mean in means.items() if mean >= means[best] - error)


def fit_linear(x: np.ndarray, y: np.ndarray, names: Sequence[str], c: float = C) -> Linear:
    """A standardised logistic regression (inverse regularisation ``c``), coefficients rounded
    for a stable artifact."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-3] = 1.0  # a constant feature: nothing to scale
    model = LogisticRegression(C=c, max_iter=2000, solver="lbfgs")
    model.fit((x - mean) / scale, y)
    r = lambda values: tuple(round(float(v), DECIMALS) for v in values)  # noqa: E731
    return Linear(tuple(names), r(mean), r(scale), r(model.coef_[0]),
                  round(float(model.intercept_[0]), DECIMALS))
