"""CI guard: the agent's scores on every test dataset, and on the sample (dev).

The floors are the scores measured on the embedded backend (evals/README.md) minus 0.03, so a
regression fails CI. Test datasets are only scored: nothing is tuned against them, and these
floors are not targets (issue 10's targets are in the README, beside the measured figures).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.config import Settings
from apiatlas.evals.runner import run_eval
from apiatlas.rag.runtime.embeddings import load_embeddings

DATASETS = Path(__file__).resolve().parents[3] / "evals" / "datasets"
MARGIN = 0.03

# Measured 2026-11-29 with the round-two encoder (issue 33) and the ranker refit on it without a
# query adapter, its coverage weighted by BM25's idf (evals/README.md): top1 counts expected
# endpoints only. The sample is a dev set the ranker is fitted on: its figures fell from 0.90 /
# 0.95 when the adapter, which could learn its very questions, went. Abstention has no floor
# where the measured accuracy is 0 (a floor below 0 could not fail). The test sets' figures
# were measured again on 2026-12-01, when an independent tester's multi-step cases joined them
# (on their earlier cases the figures did not change).
MEASURED = {
    ("dev", "sample"): {"top1": 0.7692, "recall@5": 0.8942, "abstention_accuracy": 0.375},
    ("test", "square"): {"top1": 0.5938, "recall@5": 0.7682},
    ("test", "lob"): {"top1": 0.7727, "recall@5": 0.9091},
    ("test", "adyen"): {"top1": 0.6818, "recall@5": 0.8409, "abstention_accuracy": 0.5},
    ("test", "adobe-commerce"): {"top1": 0.5625, "recall@5": 0.7682},
}


@pytest.mark.parametrize(("split", "name"), sorted(MEASURED))
def test_agent_stays_above_its_floor(
    split: str, name: str, eval_out: Path, request: pytest.FixtureRequest
) -> None:
    if name != "sample":
        request.getfixturevalue("shared_data")  # the real APIs read ../shared/data
    report = run_eval(
        [DATASETS / split / f"{name}.yaml"],
        strategies=("agent",),
        out_dir=eval_out,  # the session's homes: another test reuses Square's
        keep_homes=True,
        progress=False,
        embeddings=load_embeddings(Settings()),
    )
    assert report.datasets[name].split == split
    metrics = report.results[name]["agent"]
    assert metrics["citation_validity"] == 1.0
    for metric, measured in MEASURED[(split, name)].items():
        floor = round(measured - MARGIN, 4)
        assert metrics[metric] is not None and metrics[metric] >= floor, (
            f"{name} ({split}) agent {metric} = {metrics[metric]} fell below its floor {floor}"
        )
