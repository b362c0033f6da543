"""``python -m apiatlas.evals.memory_relevance`` reproduces the committed relevance model, and
reads no test-set file.

Every file Python opens during the fit is recorded; none may be a test dataset or one of its
sources. On another kind of processor the embeddings differ in their last bits, so the numbers
are compared within :data:`TOLERANCES` (the ranker's, ``test_train_reproduces.py``), and the
threshold within one step of its grid.
"""

from __future__ import annotations

import json
from pathlib import Path

from apiatlas.evals import memory_relevance
from apiatlas.rag.review.relevance import ARTIFACT
from tests.integration.evals.file_audit import opened_files, reads_of_test_sets

TOLERANCES = {"coef": 0.05, "intercept": 0.03, "mean": 1e-3, "scale": 1e-3}


def test_the_fit_reproduces_the_artifact_and_never_reads_a_test_set(
    tmp_path: Path, shared_data: Path
) -> None:
    out = tmp_path / "relevance.json"
    with opened_files() as opened:
        memory_relevance.main(["--out", str(out), "--root", str(tmp_path / "homes")])
    read_test = reads_of_test_sets(opened, memory_relevance.DEV.parent / "test")
    assert not read_test, f"the fit read test-set files: {read_test[:5]}"
    assert any(p.endswith("memory-scale.yaml") for p in opened)  # the audit saw the dev reads

    stale = ("python -m apiatlas.evals.memory_relevance no longer reproduces "
             "rag/review/relevance.json: run it and commit the artifact")
    produced, committed = json.loads(out.read_text()), json.loads(ARTIFACT.read_text())
    assert produced["fitted_on"] == committed["fitted_on"], stale
    assert abs(produced["threshold"] - committed["threshold"]) <= 0.05 + 1e-9, stale
    new, old = produced["model"], committed["model"]
    assert new["features"] == old["features"], stale
    far = [f"{key}[{i}]: {a} vs {b}" for key, tolerance in TOLERANCES.items()
           for i, (a, b) in enumerate(zip(_list(new[key]), _list(old[key]), strict=True))
           if abs(a - b) > tolerance]
    assert not far, f"{stale} (beyond tolerance: {far[:5]})"


def _list(value: float | list[float]) -> list[float]:
    return value if isinstance(value, list) else [value]
