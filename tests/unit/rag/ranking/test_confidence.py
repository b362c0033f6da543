"""The confidence model's features and the three outcomes."""

from __future__ import annotations

import math

import pytest

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.ranking.confidence import CONFIDENCE_FEATURES, confidence_vector
from apiatlas.rag.ranking.features import FEATURES, Pool


def vector(**values: float) -> list[float]:
    return [values.get(name, 0.0) for name in FEATURES]


def pool() -> Pool:
    refs = [EndpointRef(key=f"a/endpoint/GET /{n}", api="a", method="GET", path=f"/{n}",
                        resource=resource, kind="list")
            for n, resource in (("x", "a/resource/x"), ("y", "a/resource/x"), ("z", "a/resource/z"))]
    return Pool(refs=refs, vectors=[
        vector(card_dense=0.9, card_dense_rr=1.0, about_dense=0.7, name_dense=0.2, text_rr=1.0,
               graph_rr=1.0, cov_all=0.5, cov_head=1.0, resource_match=1.0, kind_any=1.0,
               kind_first=1.0),
        vector(card_dense=0.5, card_dense_gap=0.4, about_dense=0.6, name_dense=0.8,
               name_dense_rr=1.0),
        vector(card_dense=0.1, card_dense_gap=0.8),
    ], unknown_share=0.25, unmatched_share=0.5)


def test_the_features_read_margins_competitors_and_agreement() -> None:
    row = dict(zip(CONFIDENCE_FEATURES, confidence_vector(pool(), [0, 1, 2], [0.8, 0.7, 0.1],
                                                         0.6), strict=True))
    assert (row["p_first"], row["p_second"], row["p_answer"]) == (0.8, 0.7, 0.6)
    assert row["margin"] == pytest.approx(0.1)
    assert row["card"] == 0.9 and row["card_margin"] == pytest.approx(0.4)
    assert row["card_gap"] == 0.0 and row["about_margin"] == pytest.approx(0.1)
    # The card, the text rank and the graph put it first over the API; the name does not.
    assert row["agree"] == 3.0 and row["text_rr"] == 1.0
    assert (row["coverage"], row["coverage_head"]) == (0.5, 1.0)
    assert (row["first_resource"], row["first_kind"], row["kind_on_subject"]) == (1.0, 1.0, 1.0)
    assert row["family"] == pytest.approx(math.log1p(1))  # /y lists the same resource
    assert row["pool"] == pytest.approx(math.log1p(3))
    assert (row["unknown_share"], row["unmatched_share"], row["explicit"]) == (0.25, 0.5, 0.0)


def test_the_first_presented_candidate_is_the_one_read() -> None:
    row = dict(zip(CONFIDENCE_FEATURES, confidence_vector(pool(), [1, 0, 2], [0.8, 0.7, 0.1],
                                                         0.6), strict=True))
    assert row["p_first"] == 0.7 and row["margin"] == pytest.approx(-0.1)
    assert row["card"] == 0.5 and row["card_gap"] == 0.4 and row["agree"] == 1.0


def test_an_empty_pool_reads_zero() -> None:
    assert confidence_vector(Pool(), [], [], 0.0) == [0.0] * len(CONFIDENCE_FEATURES)
