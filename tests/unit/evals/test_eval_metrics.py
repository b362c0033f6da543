"""Every eval metric on hand-built records, against numbers computed by hand."""

from __future__ import annotations

import pytest

from apiatlas.evals.metrics import (
    METRIC_KEYS,
    CaseRecord,
    case_ok,
    compute_metrics,
    ordered_pairs,
    percentile,
    precision_of,
    recall_at,
)


def rec(
    case_id: str,
    ranked: list[str],
    expected: list[str] | None = None,
    *,
    acceptable: list[str] | None = None,
    presented: list[str] | None = None,
    valid: int = 0,
    total: int = 0,
    latency: float = 10.0,
) -> CaseRecord:
    return CaseRecord(
        dataset="d",
        case_id=case_id,
        strategy="s",
        answerable=expected is not None,
        expected=expected or [],
        acceptable=acceptable or [],
        ranked=ranked,
        presented=ranked[:3] if presented is None else presented,
        citations_valid=valid,
        citations_total=total,
        latency_ms=latency,
    )


# a: right first, both expected in the top 3.
A = rec("a", ["POST /v2/things", "GET /v2/things/{id}", "GET /v2/x"],
        ["post /v2/things/", "GET /v2/things/{thing_id}"], valid=3, total=3, latency=5.0)
# b: an acceptable endpoint first, the expected one 6th.
B = rec("b", ["PUT /v2/alt", "GET /1", "GET /2", "GET /3", "GET /4", "POST /v2/want"],
        ["POST /v2/want"], acceptable=["PUT /v2/alt"], valid=1, total=2, latency=20.0)
# c: abstained on an answerable case.
C = rec("c", [], ["GET /v2/c"], latency=30.0)
# d: unanswerable, rightly presents nothing.
D = rec("d", [], None, latency=40.0)
# e: unanswerable, but presents something (with a valid citation).
E = rec("e", ["GET /v2/e"], None, valid=1, total=1, latency=1000.0)


def test_recall_at_k_counts_expected_endpoints_in_the_top_k() -> None:
    assert recall_at(A, 1) == 0.5
    assert recall_at(A, 3) == 1.0
    assert recall_at(B, 5) == 0.0
    assert recall_at(B, 10) == 1.0
    assert recall_at(C, 10) == 0.0


def test_precision_counts_acceptable_and_skips_cases_presenting_nothing() -> None:
    assert precision_of(A) == pytest.approx(2 / 3)
    assert precision_of(B) == pytest.approx(1 / 3)  # PUT /v2/alt of [PUT /v2/alt, GET /1, GET /2]
    assert precision_of(C) is None


def test_case_ok_needs_a_right_first_endpoint_and_every_expected_one_in_the_top_10() -> None:
    assert case_ok(A)
    assert not case_ok(B)  # an acceptable endpoint first: top1 counts expected ones only
    assert not case_ok(C)
    assert case_ok(D)
    assert not case_ok(E)
    assert not case_ok(rec("f", ["GET /x", "POST /v2/want"], ["POST /v2/want"]))


def test_compute_metrics_matches_hand_computed_values() -> None:
    m = compute_metrics([A, B, C, D, E])
    assert list(m) == list(METRIC_KEYS)
    assert m["cases"] == 5
    assert m["top1"] == pytest.approx(1 / 3, abs=1e-4)  # A right; B acceptable; C abstained
    assert m["top1_acceptable"] == pytest.approx(2 / 3, abs=1e-4)  # A, B
    assert m["recall@1"] == pytest.approx((0.5 + 0 + 0) / 3, abs=1e-4)
    assert m["recall@3"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["recall@5"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["recall@10"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["all_expected@10"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["precision"] == pytest.approx((2 / 3 + 1 / 3) / 2, abs=1e-4)
    assert m["abstention_accuracy"] == 0.5  # D yes, E no
    assert m["false_abstention"] == pytest.approx(1 / 3, abs=1e-4)  # C
    assert m["citation_validity"] == pytest.approx(5 / 6, abs=1e-4)
    # Nearest rank over [5, 20, 30, 40, 1000]: p50 is the 3rd, p95 the 5th.
    assert m["latency_ms_p50"] == 30.0
    assert m["latency_ms_p95"] == 1000.0


def test_metrics_that_do_not_apply_are_none() -> None:
    only_answerable = compute_metrics([A])
    assert only_answerable["abstention_accuracy"] is None
    assert only_answerable["top1"] == 1.0
    only_unanswerable = compute_metrics([D])
    for key in ("top1", "recall@1", "recall@10", "all_expected@10", "precision",
                "false_abstention", "citation_validity"):
        assert only_unanswerable[key] is None, key
    assert only_unanswerable["abstention_accuracy"] == 1.0
    assert compute_metrics([])["latency_ms_p50"] is None


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 50) == 10.0
    assert percentile(values, 95) == 19.0
    assert percentile(values, 100) == 20.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


def test_ordered_pairs_counts_expected_pairs_ranked_in_call_order() -> None:
    lookup, use, then = "GET /v2/customers", "GET /v2/invoices/{id}", "POST /v2/invoices/{id}/send"
    in_order = rec("o", [lookup, "GET /x", use, then], [lookup, use, then])
    assert ordered_pairs(in_order) == 1.0
    swapped = rec("s", [use, lookup, then], [lookup, use, then])
    assert ordered_pairs(swapped) == pytest.approx(2 / 3)  # (lookup, use) is out of order
    missing = rec("m", [lookup, use], [lookup, use, then])
    assert ordered_pairs(missing) == pytest.approx(1 / 3)  # only (lookup, use) is there
    assert ordered_pairs(A) == 1.0  # parameter names aside, both in the order expected
    assert ordered_pairs(B) is None  # one expected endpoint: no pair
    assert compute_metrics([in_order, swapped, B])["ordered_pairs"] == pytest.approx(5 / 6, abs=1e-4)


def test_primary_precision_reads_only_the_answer_itself() -> None:
    answer = rec("p", ["POST /v2/want", "GET /1", "GET /2"], ["POST /v2/want"])
    answer = answer.model_copy(update={"primary": ["POST /v2/want"]})
    assert precision_of(answer) == pytest.approx(1 / 3)
    assert precision_of(answer, primary=True) == 1.0
    assert precision_of(A, primary=True) == precision_of(A)  # no primary list: what is shown
    assert compute_metrics([answer])["primary_precision"] == 1.0


def test_warm_latency_is_reported_beside_the_cold_one() -> None:
    cold = [rec(c, ["GET /a"], ["GET /a"], latency=ms) for c, ms in (("x", 90.0), ("y", 110.0))]
    both = [r.model_copy(update={"latency_warm_ms": r.latency_ms / 10}) for r in cold]
    m = compute_metrics(both)
    assert (m["latency_ms_p50"], m["latency_warm_ms_p50"]) == (90.0, 9.0)
    assert (m["latency_ms_p95"], m["latency_warm_ms_p95"]) == (110.0, 11.0)
