"""Training's pure parts: labels, threshold choice and the dev-only guard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from apiatlas.errors import UsageError
from apiatlas.evals.dataset import Case
from apiatlas.evals.adapter_fit import card_top1
from apiatlas.evals.calibration import answer_threshold, primary_threshold
from apiatlas.evals.train import Example, dev_datasets, fit_linear, labels
from apiatlas.graph.model import EndpointRef
from apiatlas.rag.ranking.features import Pool

TEST = Path(__file__).resolve().parents[3] / "evals" / "datasets" / "test"


def ref(signature: str) -> EndpointRef:
    method, path = signature.split(" ", 1)
    return EndpointRef(key=signature, api="a", method=method, path=path)


def example(expected: list[str], acceptable: list[str], refs: list[str]) -> Example:
    case = Case(id="c", question="q", expected_endpoints=expected, acceptable_endpoints=acceptable,
                answerable=bool(expected))
    pool = Pool(refs=[ref(r) for r in refs], vectors=[[0.0] for _ in refs])
    return Example("d", case, pool, labels(case, pool))


def test_labels_mark_expected_and_leave_acceptable_out() -> None:
    ex = example(["POST /things"], ["PUT /things/{id}"],
                 ["POST /things/", "PUT /things/{thing_id}", "GET /other"])
    assert ex.labels == [1, None, 0]


def test_the_answer_threshold_keeps_false_abstention_within_bounds() -> None:
    answerable = [True] * 20 + [False] * 4
    p = [0.9] * 18 + [0.35, 0.2] + [0.1, 0.15, 0.3, 0.5]
    t = answer_threshold(p, answerable)
    false_abstention = sum(x < t for x, a in zip(p, answerable) if a) / 20
    assert false_abstention <= 0.05
    assert t == pytest.approx(0.35)  # rejects three of four unanswerable, loses one answerable
    assert answer_threshold([0.1, 0.9], [True, True]) == 0.0  # nothing to reject


def test_the_primary_threshold_admits_second_candidates_only_when_they_pay() -> None:
    two = example(["GET /a", "GET /b"], [], ["GET /a", "GET /b", "GET /c"])
    one = example(["GET /a"], [], ["GET /a", "GET /x", "GET /y"])
    # /b is expected at 0.7; the wrong /x sits at 0.4: a threshold between them is best, by
    # more than one case of the ten, so the pick stays there.
    t = primary_threshold([two, one] * 5, [[0.9, 0.7, 0.1], [0.9, 0.4, 0.1]] * 5)
    assert 0.4 < t <= 0.7


def test_on_a_flat_curve_the_primary_threshold_prefers_the_shorter_list() -> None:
    two = example(["GET /a", "GET /b"], [], ["GET /a", "GET /b", "GET /c"])
    one = example(["GET /a"], [], ["GET /a", "GET /x", "GET /y"])
    # Admitting /b (0.7) gains the first case what admitting /x (0.75) costs the second: mean
    # F1 is the same on both sides of 0.7, and the highest threshold within a case of it wins.
    cases = [two, one] * 50 + [one]
    probabilities = [[0.9, 0.7, 0.1], [0.9, 0.75, 0.1]] * 50 + [[0.9, 0.1, 0.1]]
    assert primary_threshold(cases, probabilities) == 0.95


def test_a_gain_within_one_standard_error_admits_no_second_candidate() -> None:
    two = example(["GET /a", "GET /b"], [], ["GET /a", "GET /b", "GET /c"])
    one = example(["GET /a"], [], ["GET /a", "GET /x", "GET /y"])
    miss = example(["GET /z"], [], ["GET /a", "GET /x", "GET /y"])
    # Admitting /b (0.3) gains 5 of 100 cases a third each: mean F1 0.683 -> 0.700, more than
    # one case (0.01) but well inside the best threshold's standard error (about 0.046).
    cases = [two] * 5 + [one] * 65 + [miss] * 30
    probabilities = [[0.9, 0.3, 0.05]] * 5 + [[0.9, 0.1, 0.1]] * 95
    assert primary_threshold(cases, probabilities) == 0.95
    # The same gain on cases that all agree is no noise: then /b is admitted.
    assert primary_threshold([two] * 5 + [one] * 65, probabilities[:70]) == 0.3


def test_fit_linear_is_deterministic_and_rounded() -> None:
    x = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.9], [0.9, 0.1]])
    y = np.array([0, 1, 0, 1])
    first, second = fit_linear(x, y, ("a", "b")), fit_linear(x, y, ("a", "b"))
    assert first == second and first.coef[0] > 0 > first.coef[1]
    assert all(len(str(c).split(".")[-1]) <= 5 for c in first.coef)


def test_training_refuses_to_read_anything_but_the_dev_folder() -> None:
    with pytest.raises(UsageError, match="dev datasets only"):
        dev_datasets(TEST)


def test_card_top1_ranks_by_the_card_vectors_with_each_datasets_adapter() -> None:
    from apiatlas.rag.ranking.adapter import QueryAdapter

    ex = example(["POST /things"], [], ["POST /things", "GET /other"])
    ex.query = np.array([0.0, 1.0])
    ex.cards = np.array([[1.0, 0.0], [0.0, 1.0]])  # the question points at the wrong card
    unanswerable = example([], [], ["POST /things"])
    assert card_top1([ex, unanswerable], "m") == {"d": 0.0}  # only answerable cases count
    # An adapter that turns the question towards the expected card: q + U(Wq) = (1, 1).
    turn = QueryAdapter(model="m", up=np.array([[1.0], [0.0]]), down=np.array([[0.0, 1.0]]))
    ex.cards = np.array([[1.0, 0.2], [0.0, 1.0]])
    assert card_top1([ex], "m", {"d": turn}) == {"d": 1.0}
    assert card_top1([ex], "m") == {"d": 0.0}
