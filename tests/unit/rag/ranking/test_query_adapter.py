"""The query adapter: a low-rank residual map on question vectors, stored with the ranker."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from apiatlas.rag.ranking.adapter import QueryAdapter
from apiatlas.rag.ranking.model import ARTIFACT, load_model
from apiatlas.rag.runtime import onnx_minilm
from tests.unit.rag.ranking.test_ranker_model import MODEL


def _adapter(model: str = "m") -> QueryAdapter:
    up = np.zeros((4, 1))
    up[1, 0] = 1.0  # the first coordinate of the question, copied onto the second
    down = np.zeros((1, 4))
    down[0, 0] = 1.0
    return QueryAdapter(model=model, up=up, down=down)


def test_it_maps_and_normalises_vectors_of_its_own_model_only() -> None:
    adapter = _adapter()
    assert adapter.apply([1.0, 0.0, 0.0, 0.0], "m") == pytest.approx([2**-0.5, 2**-0.5, 0, 0])
    assert adapter.apply([0.0, 0.0, 1.0, 0.0], "m") == [0.0, 0.0, 1.0, 0.0]
    # Another model's vectors, or vectors of another size, are left as they are.
    assert adapter.apply([1.0, 0.0, 0.0, 0.0], "other") == [1.0, 0.0, 0.0, 0.0]
    assert adapter.apply([1.0, 0.0], "m") == [1.0, 0.0]


def test_a_zero_map_changes_no_ranking() -> None:
    zero = QueryAdapter(model="m", up=np.zeros((3, 2)), down=np.ones((2, 3)))
    assert zero.apply([0.6, 0.8, 0.0], "m") == pytest.approx([0.6, 0.8, 0.0])


def test_it_round_trips_through_the_ranker_artifact(tmp_path: Path) -> None:
    adapter = QueryAdapter(model="m", up=np.array([[0.123456789], [-1.0]]),
                           down=np.array([[2.5, -0.000004]]))
    stored = adapter.rounded()
    assert stored.up[0, 0] == 0.12346 and stored.down[0, 1] == 0.0
    assert stored.rounded() == stored  # rounding is stable: retraining writes the same bytes
    model = dataclasses.replace(MODEL, adapter=stored)
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(model.to_json()))
    load_model.cache_clear()
    assert load_model(path) == model
    assert load_model(path) != dataclasses.replace(MODEL, adapter=_adapter())


def test_the_packaged_ranker_is_trained_as_make_train_says() -> None:
    from apiatlas.evals.train import ADAPTER, DISABLED

    load_model.cache_clear()
    model = load_model(ARTIFACT)
    assert model.disabled == DISABLED
    adapter = model.adapter
    if not ADAPTER:
        assert adapter is None
        return
    # Fitted on the packaged encoder's vectors: another model's questions are not mapped.
    assert adapter is not None
    assert adapter.model == onnx_minilm.weights_id(onnx_minilm.model_dir())
    assert adapter.up.shape[0] == adapter.down.shape[1] == 384
    assert adapter.up.shape[1] == adapter.down.shape[0] < 384  # low rank: a small artifact
