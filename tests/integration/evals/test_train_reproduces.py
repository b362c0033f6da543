"""`make train` reproduces the committed ranker byte for byte, and reads no test-set file.

The whole training run is audited: every file Python opens while it runs is recorded, and none
may be a test dataset or a spec of a test API.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from apiatlas.evals import train
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.rag.ranking.model import ARTIFACT

OPENED: list[str] = []
_AUDITING: list[bool] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _AUDITING and event == "open" and isinstance(args[0], (str, Path)):
        OPENED.append(str(Path(str(args[0])).resolve()))


sys.addaudithook(_audit)  # hooks cannot be removed; it records only while _AUDITING is set


def test_training_reproduces_the_artifact_and_never_reads_a_test_set(
    tmp_path: Path, shared_data: Path
) -> None:
    test_files = dataset_files(train.DATASETS / "test")
    forbidden = {str(f.resolve()) for f in test_files}
    forbidden_roots = set()
    for f in test_files:
        for source in load_dataset(f).sources.openapi + load_dataset(f).sources.docs:
            forbidden_roots.add(str(Path(source).resolve().parent))
    assert forbidden and forbidden_roots

    out = tmp_path / "ranker.json"
    _AUDITING.append(True)
    try:
        assert train.main(["--out", str(out), "--homes", str(tmp_path / "homes")]) == 0
    finally:
        _AUDITING.clear()

    read_test = sorted(p for p in OPENED if p in forbidden
                       or any(p.startswith(root) for root in forbidden_roots))
    assert not read_test, f"training read test-set files: {read_test[:5]}"
    assert any(p.endswith("sample.yaml") for p in OPENED)  # the audit did see the dev reads
    assert out.read_bytes() == ARTIFACT.read_bytes(), (
        "make train no longer reproduces rag/ranking/ranker.json: run `make train` and commit it"
    )


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
