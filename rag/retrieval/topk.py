"""Exact best-``k`` positions and ranks of a score vector, without sorting all of it.

A question over a large API scores every endpoint, but reads only the best few and the ranks of
the few dozen candidates it keeps. Both are worked out here with a partition and binary
searches; they equal what a full stable descending sort gives (ties in position order), so the
rankings and the ranker's features do not change with the method.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def top_positions(scores: np.ndarray, k: int, *, among: np.ndarray | None = None) -> list[int]:
    """Positions of the ``k`` highest scores, best first, ties in position order: the first
    ``k`` of ``np.argsort(-scores, kind="stable")`` (of ``among`` only, when given).

    Args:
        scores: One score per position.
        k: How many to return at most.
        among: Ascending positions to choose from (those a lexical query matched); every
            position when ``None``.
    """
    if k <= 0 or not len(scores):
        return []
    candidates = np.arange(len(scores)) if among is None else among
    if len(candidates) > k:
        values = scores[candidates]
        # The k-th highest value: every position at or above it is a contender (ties included).
        kth = np.partition(values, len(values) - k)[len(values) - k]
        candidates = candidates[values >= kth]
    # Candidates are in position order, so a stable sort leaves ties in that order.
    best = candidates[np.argsort(-scores[candidates], kind="stable")]
    return [int(p) for p in best[:k]]


def ranks(scores: np.ndarray, positions: Sequence[int]) -> list[int]:
    """The rank (1 = best) of each of ``positions`` in a stable descending sort of ``scores``:
    one more than the number of higher scores and of equal ones at earlier positions."""
    if not len(positions):
        return []
    ascending = np.sort(scores)
    values = scores[np.asarray(positions, dtype=np.int64)]
    after = np.searchsorted(ascending, values, side="right")
    above = len(scores) - after
    equal = after - np.searchsorted(ascending, values, side="left")
    out = []
    for position, value, higher, same in zip(positions, values, above, equal, strict=True):
        before = int(np.count_nonzero(scores[:position] == value)) if same > 1 else 0
        out.append(int(higher) + before + 1)
    return out
