"""The ablation scores the learned variants in the order the agent presents them."""

from __future__ import annotations

from apiatlas.evals.ablation import ranking_metrics
from apiatlas.evals.dataset import Case
from apiatlas.evals.train import Example, labels
from apiatlas.graph.model import EndpointRef
from apiatlas.rag.ranking.features import FEATURES, Pool
from apiatlas.rag.ranking.model import presented_order

EXPLICIT = FEATURES.index("explicit")


def ref(signature: str) -> EndpointRef:
    method, path = signature.split(" ", 1)
    return EndpointRef(key=f"a/endpoint/{signature}", api="a", method=method, path=path)


def example(expected: str, refs: list[str], named: str | None = None) -> Example:
    case = Case(id="c", question="q", expected_endpoints=[expected])
    vectors = [[0.0] * len(FEATURES) for _ in refs]
    if named is not None:
        vectors[refs.index(named)][EXPLICIT] = 1.0
    pool = Pool(refs=[ref(r) for r in refs], vectors=vectors, explicit=named is not None)
    return Example("d", case, pool, labels(case, pool))


def test_a_named_endpoint_comes_first_only_in_the_presented_order() -> None:
    ex = example("GET /things/{id}", ["GET /things", "GET /things/{id}"], named="GET /things/{id}")
    scores = [[0.9, 0.4]]
    by_score = ranking_metrics([ex], scores, [True])
    presented = ranking_metrics([ex], scores, [True], presented=True)
    assert by_score["top1"] == 0.0 and presented["top1"] == 1.0


def test_ties_go_to_the_shorter_path_as_the_agent_breaks_them() -> None:
    ex = example("GET /b", ["GET /a/things/{id}", "GET /b"])
    assert presented_order(ex.pool, [0.5, 0.5]) == [1, 0]
    assert ranking_metrics([ex], [[0.5, 0.5]], [True], presented=True)["top1"] == 1.0
    assert ranking_metrics([ex], [[0.5, 0.5]], [True])["top1"] == 0.0  # ties by key
