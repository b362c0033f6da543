"""The near-duplicate threshold is the one its calibration chooses on the dev memory sets."""

from __future__ import annotations

from apiatlas.config import Settings
from apiatlas.evals.memory_touches import calibrate
from apiatlas.rag.review.touches import NEAR_DUPLICATE_SCORE
from apiatlas.rag.runtime.embeddings import load_embeddings


def test_the_shipped_threshold_is_the_one_calibrated_on_dev() -> None:
    chosen, table = calibrate(load_embeddings(Settings()))
    assert chosen == NEAR_DUPLICATE_SCORE, table
    assert "memory-square" not in table  # test sets are not read
