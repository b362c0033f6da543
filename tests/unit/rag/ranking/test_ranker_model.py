"""The learned ranker's scoring, decision and artifact, on hand-made models and pools."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from apiatlas.errors import UsageError
from apiatlas.graph.model import EndpointRef
from apiatlas.rag.ranking.confidence import CONFIDENCE_FEATURES
from apiatlas.rag.ranking.features import FEATURES, GROUPS, Pool
from apiatlas.rag.ranking.model import (
    ANSWER_FEATURES,
    ARTIFACT,
    Linear,
    RankerModel,
    answer_vector,
    load_model,
    masked,
)


def linear(names: tuple[str, ...], weights: dict[str, float], intercept: float = 0.0) -> Linear:
    n = len(names)
    return Linear(names, (0.0,) * n, (1.0,) * n, tuple(weights.get(f, 0.0) for f in names),
                  intercept)


def vector(**values: float) -> list[float]:
    return [values.get(f, 0.0) for f in FEATURES]


def ref(path: str) -> EndpointRef:
    return EndpointRef(key=f"a/endpoint/GET {path}", api="a", method="GET", path=path)


MODEL = RankerModel(
    candidate=linear(FEATURES, {"lex_name": 4.0, "name_dense": 2.0}, intercept=-3.0),
    answer=linear(ANSWER_FEATURES, {"top": 6.0, "unknown_share": -6.0}, intercept=-2.0),
    confidence=linear(CONFIDENCE_FEATURES, {"margin": 8.0}, intercept=-1.0),
    answer_threshold=0.5,
    primary_threshold=0.6,
    confidence_threshold=0.8,
    named_confidence=0.9,
)


def test_linear_is_a_standardised_logistic_model() -> None:
    model = Linear(("x",), (1.0,), (2.0,), (4.0,), 0.0)
    assert model.probability([1.0]) == 0.5
    assert model.probability([3.0]) == pytest.approx(1 / (1 + math.exp(-4.0)))  # (3-1)/2*4
    assert model.probability([1e9]) == pytest.approx(1.0)  # clipped, no overflow


def test_decide_ranks_answers_and_splits_confident_from_related() -> None:
    pool = Pool(
        refs=[ref("/weak"), ref("/best"), ref("/good")],
        vectors=[vector(lex_name=0.1), vector(lex_name=1.0, name_dense=0.9),
                 vector(lex_name=0.8, name_dense=0.8)],
    )
    decision = MODEL.decide(pool)
    assert [r.path for r, _ in decision.ranked] == ["/best", "/good", "/weak"]
    assert decision.answer and decision.answer_probability > 0.5
    assert [r.path for r in decision.primary] == ["/best", "/good"]  # /weak is only related


def test_the_confidence_grows_with_the_first_candidates_lead() -> None:
    close = Pool(refs=[ref("/a"), ref("/b")],
                 vectors=[vector(lex_name=1.0, name_dense=0.9), vector(lex_name=1.0, name_dense=0.85)])
    clear = Pool(refs=[ref("/a"), ref("/b")],
                 vectors=[vector(lex_name=1.0, name_dense=0.9), vector(lex_name=0.1)])
    assert 0.0 < MODEL.decide(close).confidence < MODEL.decide(clear).confidence < 1.0


def test_an_unknown_subject_lowers_the_answer_probability_until_it_abstains() -> None:
    pool = Pool(refs=[ref("/x")], vectors=[vector(lex_name=0.5)])
    known = MODEL.decide(pool)
    pool.unknown_share = 1.0
    unknown = MODEL.decide(pool)
    assert unknown.answer_probability < known.answer_probability
    assert not unknown.answer and unknown.primary  # the ranking is kept for "did you mean"


def test_an_explicitly_named_endpoint_is_answered_and_first() -> None:
    pool = Pool(refs=[ref("/likely"), ref("/named")],
                vectors=[vector(lex_name=1.0), vector(explicit=1.0)], unknown_share=1.0,
                explicit=True)
    decision = MODEL.decide(pool)
    assert decision.answer and decision.ranked[0][0].path == "/named"


def test_an_empty_pool_is_never_answered() -> None:
    assert not MODEL.decide(Pool()).answer


def test_masked_zeroes_whole_groups() -> None:
    v = vector(name_dense=0.7, name_dense_rr=1.0, lex_name=0.3)
    off = masked(v, ["dense:name"])
    assert all(off[FEATURES.index(f)] == 0.0 for f in GROUPS["dense:name"])
    assert off[FEATURES.index("lex_name")] == 0.3 and masked(v, []) == v


def test_answer_vector_reads_the_best_candidates() -> None:
    pool = Pool(unknown_share=0.25, unmatched_share=0.5)
    pool.vectors = [vector(name_dense=0.3, graph_score=1.0, resource_match=0.8, kind_any=1.0,
                           about_dense=0.6),
                    vector(name_dense=0.7, resource_match=1.0, card_dense=0.4)]
    row = answer_vector(pool, [0.9, 0.4], vector(cov_all=0.5))
    assert row == pytest.approx([0.9, 0.5, 0.25, 0.5, 0.0, 0.7, 0.6, 0.4, 1.0, 0.5, 0.8])


def test_the_artifact_round_trips_and_rejects_other_features(tmp_path: Path) -> None:
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(MODEL.to_json()))
    assert load_model(path) == MODEL
    data = MODEL.to_json()
    data["candidate"]["features"] = ["something_else"]
    path.write_text(json.dumps(data))
    load_model.cache_clear()
    with pytest.raises(UsageError, match="make train"):
        load_model(path)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(UsageError, match="broken.json"):
        load_model(tmp_path / "broken.json")


def test_the_packaged_artifact_loads() -> None:
    model = load_model(ARTIFACT)
    assert 0.0 < model.answer_threshold < 1.0 and 0.0 < model.primary_threshold <= 1.0
    assert 0.0 < model.confidence_threshold <= 1.0 and 0.0 < model.named_confidence < 1.0
    assert model.meta and "digests" in model.meta
