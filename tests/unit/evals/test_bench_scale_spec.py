"""The scale benchmark's synthetic specs: the size asked for, loadable, with real shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiatlas.evals.bench.scale import questions, synthetic_spec
from apiatlas.loaders.openapi import load_openapi


@pytest.mark.parametrize("size", [1, 7, 250])
def test_synthetic_spec_has_exactly_the_operations_asked_for(tmp_path: Path, size: int) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(synthetic_spec(size)), encoding="utf-8")
    (spec,) = load_openapi(path)
    assert len(spec.endpoints) == size
    assert not spec.warnings


def test_synthetic_spec_has_the_shapes_of_a_real_api(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(synthetic_spec(700)), encoding="utf-8")
    (spec,) = load_openapi(path)
    methods = {e.method for e in spec.endpoints}
    assert methods == {"GET", "POST", "PATCH", "DELETE"}
    create = next(e for e in spec.endpoints if e.method == "POST" and e.request_body)
    assert create.request_body is not None and create.request_body.schema_name
    assert any("{" in e.path and e.path.count("/") > 4 for e in spec.endpoints)  # item actions
    assert len({t for e in spec.endpoints for t in e.tags}) > 1


def test_the_largest_size_fits_the_word_lists_and_questions_spread_over_it() -> None:
    spec = synthetic_spec(10_000)
    assert sum(len(item) for item in spec["paths"].values()) == 10_000
    asked = questions(spec)
    assert len(asked) == 20 and len(set(asked)) == 20
    with pytest.raises(ValueError, match="fewer than"):
        synthetic_spec(100_000)
