"""The confidence model's fit: the Platt step folded into one model, the answer threshold, and
the eval's calibration figures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from apiatlas.evals.confidence import MIN_ANSWERS, answer_threshold, logit, platt, scaled
from apiatlas.evals.metrics import CaseRecord, calibration_error, confidence_metrics, risk_coverage
from apiatlas.rag.ranking.model import Linear


def test_the_platt_step_is_folded_into_the_model() -> None:
    model = Linear(("a", "b"), (0.5, 1.0), (2.0, 0.5), (1.5, -0.7), 0.3)
    folded = scaled(model, 0.6, -0.2)
    for x in ([0.0, 0.0], [1.0, 2.0], [-3.0, 0.5]):
        expected = 1.0 / (1.0 + math.exp(-(0.6 * logit(model, x) - 0.2)))
        assert folded.probability(x) == pytest.approx(expected, abs=1e-4)


def test_platt_recovers_an_overconfident_scale() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, 4000)
    y = (rng.random(4000) < 1 / (1 + np.exp(-z / 2))).astype(int)  # the truth is half as steep
    a, b = platt(z, y)
    assert a == pytest.approx(0.5, abs=0.07) and abs(b) < 0.15
    assert platt(z, np.ones(4000, dtype=int)) == (1.0, 0.0)


def test_the_threshold_is_the_lowest_that_keeps_nine_in_ten_right() -> None:
    # Twenty answered cases, best first: right down to 0.6, then wrong ones.
    confidence = [1.0 - 0.02 * i for i in range(20)]
    right = [True] * 18 + [False] * 2
    answered = [True] * 20
    assert answer_threshold(confidence, right, answered) == pytest.approx(confidence[-1])
    right = [True] * 10 + [False] * 3 + [True] * 7
    t = answer_threshold(confidence, right, answered)
    chosen = [r for c, r in zip(confidence, right, strict=True) if c >= t]
    assert sum(chosen) / len(chosen) >= 0.9 and len(chosen) == 11  # 10 of 11, not 10 of 12
    # An abstention is never an answer, and too few answers choose nothing.
    assert answer_threshold(confidence, [True] * 20, [False] * 20) == 1.0
    few = MIN_ANSWERS - 1
    assert answer_threshold(confidence[:few], [True] * few, [True] * few) == 1.0


def record(confidence: float, right: bool, outcome: str, answerable: bool = True) -> CaseRecord:
    expected = ["GET /a"] if answerable else []
    ranked = ["GET /a" if right else "GET /b"] if outcome != "none" else []
    return CaseRecord(dataset="d", case_id="c", strategy="agent", answerable=answerable,
                      expected=expected, ranked=ranked, presented=ranked,
                      confidence=confidence, outcome=outcome)


def test_the_eval_figures_of_the_outcomes() -> None:
    records = [record(0.95, True, "answer"), record(0.9, False, "answer"),
               record(0.4, True, "unsure"), record(0.2, False, "unsure"),
               record(0.85, False, "answer", answerable=False),
               record(0.1, False, "none", answerable=False)]
    m = confidence_metrics(records)
    assert m["confident_precision"] == 0.5
    assert m["confident_coverage"] == 0.5
    assert m["unanswerable_answered"] == 0.5
    assert m["ece"] == pytest.approx(calibration_error(
        [0.95, 0.9, 0.4, 0.2, 0.85, 0.1], [True, False, True, False, False, False]), abs=1e-4)
    plain = [r.model_copy(update={"confidence": None, "outcome": None}) for r in records]
    assert set(confidence_metrics(plain).values()) == {None}


def test_calibration_error_of_a_calibrated_and_an_overconfident_model() -> None:
    assert calibration_error([0.75] * 4, [True, True, True, False]) == pytest.approx(0.0)
    assert calibration_error([0.95] * 4, [True, False, True, False]) == pytest.approx(0.45)
    assert calibration_error([1.0, 0.0], [True, False]) == 0.0
    assert calibration_error([], []) is None


def test_the_risk_coverage_curve_counts_answered_unanswerables_as_wrong() -> None:
    records = [record(0.9, True, "answer"), record(0.8, False, "answer", answerable=False),
               record(0.5, True, "unsure"), record(0.3, False, "none")]
    # Three answerable cases: the abstention on the last one is never covered.
    third = pytest.approx(1 / 3)
    assert risk_coverage(records) == [(0.9, third, 1.0), (0.8, third, 0.5),
                                      (0.5, pytest.approx(2 / 3), pytest.approx(2 / 3))]
