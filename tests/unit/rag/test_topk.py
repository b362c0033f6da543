"""Best-k positions and ranks equal a full stable descending sort, ties included."""

from __future__ import annotations

import numpy as np
import pytest

from apiatlas.rag.retrieval.topk import ranks, top_positions


def stable_order(scores: np.ndarray) -> list[int]:
    return [int(p) for p in np.argsort(-scores, kind="stable")]


@pytest.mark.parametrize("seed", range(20))
def test_they_equal_a_full_stable_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Few distinct values: many ties, at the cut-off too; float32 like stored vectors' cosines.
    scores = rng.integers(-3, 6, size=int(rng.integers(1, 60))).astype(np.float32) / 4
    order = stable_order(scores)
    for k in (1, 5, 20, 100):
        assert top_positions(scores, k) == order[:k]
    positions = [int(p) for p in rng.permutation(len(scores))[:10]]
    assert ranks(scores, positions) == [order.index(p) + 1 for p in positions]


def test_among_keeps_only_the_given_positions() -> None:
    scores = np.array([0.0, 2.0, 0.0, 1.0, 2.0])
    assert top_positions(scores, 10, among=np.flatnonzero(scores)) == [1, 4, 3]
    assert top_positions(scores, 2, among=np.flatnonzero(scores)) == [1, 4]
    assert top_positions(scores, 5, among=np.array([0, 2, 3])) == [3, 0, 2]
    assert top_positions(np.zeros(3), 5, among=np.flatnonzero(np.zeros(3))) == []


def test_empty_inputs() -> None:
    assert top_positions(np.array([]), 3) == [] and top_positions(np.ones(3), 0) == []
    assert ranks(np.ones(3), []) == []
