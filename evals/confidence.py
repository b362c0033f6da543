"""The confidence model: fitted and calibrated on out-of-fold dev predictions by ``make train``.

The label of a dev case is whether the first endpoint the ranker presents is expected (an
unanswerable case's never is). Its features (:func:`~apiatlas.rag.ranking.confidence.
confidence_vector`) read the candidate and answer probabilities of models that never saw the
case's API, so the model learns how the ranker does on an unseen API. Then:

1. the model is fitted again on all dev APIs but one, for each API, which gives every case a
   confidence from a model that never saw its API;
2. a Platt scaling of those out-of-fold logits corrects what the fit on seen APIs overstates,
   and is folded into the model of all dev APIs (one logistic model, nothing else at run time);
3. the ``answer`` threshold is the lowest calibrated confidence at which the out-of-fold
   answers above it are right :data:`TARGET_PRECISION` of the time.

``experiments/2026-12-01-confidence`` measures each step and each feature group.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sklearn.linear_model import LogisticRegression

from apiatlas.evals.calibration import DECIMALS, fit_linear
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.retrieval import endpoint_fit
from apiatlas.rag.ranking.confidence import CONFIDENCE_FEATURES, confidence_vector
from apiatlas.rag.ranking.model import Linear, presented_order

if TYPE_CHECKING:
    from apiatlas.evals.train import Example

TARGET_PRECISION = 0.9
"""An agent acts on an ``answer``: it should be right at least 9 times in 10."""
CONFIDENCE_C = 0.1
"""Inverse regularisation of the confidence model (22 features, 270 dev cases). Out of fold over
the training dev sets, C 0.03 / 0.1 / 0.3 / 1.0 gave AUC 0.790 / 0.790 / 0.787 / 0.781 and
answered 0.350 / 0.321 / 0.218 / 0.184 of the answerable cases at the threshold; 0.1 has the
lower calibration error of the two best (``experiments/2026-12-01-confidence``)."""
MIN_ANSWERS = 10
"""Out-of-fold answers a threshold must keep to be chosen (a precision of fewer is noise)."""


@dataclass(frozen=True)
class FittedConfidence:
    """The confidence model of ``make train`` and what its fit measured.

    Attributes:
        model: The calibrated model (Platt scaling folded in).
        threshold: The lowest confidence of an ``answer``.
        oof: Each example's calibrated out-of-fold confidence.
        right: Each example's label (its first presented endpoint is expected).
    """

    model: Linear
    threshold: float
    oof: list[float]
    right: list[bool]


def first_is_expected(example: Example, probabilities: Sequence[float]) -> bool:
    """Whether the first endpoint presented from ``probabilities`` is expected."""
    order = presented_order(example.pool, probabilities)
    if not order or not example.case.answerable:
        return False
    return endpoint_key(example.pool.refs[order[0]].signature) in set(example.case.expected)


def named_confidence(examples: Sequence[Example],
                     probabilities: Sequence[Sequence[float]]) -> float:
    """The confidence of an answer the graph gives alone because the question names its
    endpoints: the share of dev questions the agent answers so (:func:`answered_alone`)
    whose first presented endpoint is expected, with one right and one wrong answer added
    (Laplace), so a handful is not read as certainty."""
    named = [first_is_expected(ex, p) for ex, p in zip(examples, probabilities, strict=True)
             if answered_alone(ex)]
    return round((sum(named) + 1) / (len(named) + 2), DECIMALS)


_EXPLICIT = FEATURES.index("explicit")


def answered_alone(example: Example) -> bool:
    """Whether the agent answers ``example``'s question from the graph alone, as
    :func:`~apiatlas.rag.agent.nodes.answered_by_graph` decides it: the candidates the
    question names outright are those the graph scored as named."""
    named = [ref for ref, v in zip(example.pool.refs, example.pool.vectors, strict=True)
             if v[_EXPLICIT] == 1.0]
    return endpoint_fit.answered_alone(analyse_question(example.case.question), named)


def confidence_rows(
    examples: Sequence[Example],
    probabilities: Sequence[Sequence[float]],
    p_answer: Sequence[float],
) -> np.ndarray:
    """The confidence model's feature vectors of ``examples``."""
    rows = [
        confidence_vector(ex.pool, presented_order(ex.pool, probs), probs, pa)
        for ex, probs, pa in zip(examples, probabilities, p_answer, strict=True)
    ]
    return np.array(rows) if rows else np.zeros((0, len(CONFIDENCE_FEATURES)))


def fit_confidence(
    examples: Sequence[Example],
    probabilities: Sequence[Sequence[float]],
    p_answer: Sequence[float],
    answered: Sequence[bool],
    *,
    c: float = CONFIDENCE_C,
    calibrate: bool = True,
    off: Collection[str] = (),
) -> FittedConfidence:
    """Fit, calibrate and threshold the confidence model (see the module's docstring).

    Args:
        examples: Dev examples.
        probabilities: Their out-of-fold candidate probabilities.
        p_answer: Their out-of-fold answer probabilities.
        answered: Whether the answer model answers each (an abstention is never an ``answer``).
        c: The logistic regressions' inverse regularisation.
        calibrate: Whether to fold in the Platt step (an ablation: ``False`` leaves it out).
        off: Features read as 0 (an ablation: the model is fitted without them).
    """
    rows = masked_rows(confidence_rows(examples, probabilities, p_answer), off)
    right = [first_is_expected(ex, p) for ex, p in zip(examples, probabilities, strict=True)]
    y = np.array(right, dtype=int)
    full = fit_linear(rows, y, CONFIDENCE_FEATURES, c)
    logits = np.zeros(len(examples))
    for name in sorted({ex.dataset for ex in examples}):
        inside = np.array([ex.dataset != name for ex in examples])
        held = fit_linear(rows[inside], y[inside], CONFIDENCE_FEATURES, c)
        for i in np.flatnonzero(~inside):
            logits[i] = logit(held, rows[i])
    a, b = platt(logits, y) if calibrate else (1.0, 0.0)
    model = scaled(full, a, b)
    oof = [1.0 / (1.0 + math.exp(-(a * z + b))) for z in logits]
    threshold = answer_threshold(oof, right, answered)
    return FittedConfidence(model, threshold, oof, right)


def masked_rows(rows: np.ndarray, off: Collection[str]) -> np.ndarray:
    """``rows`` with the features named in ``off`` set to 0."""
    keep = np.array([name not in off for name in CONFIDENCE_FEATURES], dtype=float)
    return rows * keep if off else rows


def logit(model: Linear, vector: Sequence[float]) -> float:
    """``model``'s log-odds for one feature vector."""
    z = model.intercept
    for x, m, s, c in zip(vector, model.mean, model.scale, model.coef, strict=True):
        z += c * (x - m) / s
    return z


def platt(logits: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Slope and intercept of a logistic fit of ``y`` on ``logits`` (almost unregularised)."""
    if len(set(y.tolist())) < 2:
        return 1.0, 0.0
    model = LogisticRegression(C=1e6, max_iter=2000, solver="lbfgs")
    model.fit(logits.reshape(-1, 1), y)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def scaled(model: Linear, a: float, b: float) -> Linear:
    """``model`` with ``sigmoid(a * logit + b)`` folded into its coefficients."""
    r = lambda v: round(float(v), DECIMALS)  # noqa: E731
    return Linear(model.features, model.mean, model.scale, tuple(r(a * c) for c in model.coef),
                  r(a * model.intercept + b))


def answer_threshold(confidence: Sequence[float], right: Sequence[bool],
                     answered: Sequence[bool], target: float = TARGET_PRECISION) -> float:
    """The lowest confidence whose answered cases at or above it are right ``target`` of the
    time, keeping at least :data:`MIN_ANSWERS` of them (1.0, no ``answer`` at all, when none
    is)."""
    cases = sorted(((c, r) for c, r, a in zip(confidence, right, answered, strict=True) if a),
                   key=lambda t: -t[0])
    best, hits = 1.0, 0
    for n, (c, r) in enumerate(cases, 1):
        hits += r
        at_end = n == len(cases) or cases[n][0] < c  # ties enter together
        if at_end and n >= MIN_ANSWERS and hits / n >= target:
            best = round(c, DECIMALS)
    return best
