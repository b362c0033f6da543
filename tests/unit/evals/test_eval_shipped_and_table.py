"""Finding a curated dataset from anywhere, and one dataset's metrics as a Markdown table."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import UsageError
from apiatlas.evals.dataset import DATASETS_DIR, load_dataset, shipped_dataset
from apiatlas.evals.report import DatasetInfo, EvalReport, markdown, metrics_table

REPO = Path(__file__).resolve().parents[3]


def test_shipped_dataset_finds_the_file_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = shipped_dataset("sample")
    assert path == REPO / "evals" / "datasets" / "dev" / "sample.yaml"
    assert load_dataset(path).split == "dev"
    assert shipped_dataset("square", split="test").parent == DATASETS_DIR / "test"


def test_shipped_dataset_names_what_exists() -> None:
    with pytest.raises(UsageError, match=r"no dev dataset 'nope'.*choose one of .*sample"):
        shipped_dataset("nope")
    with pytest.raises(UsageError, match="no dev dataset '../test/square'"):
        shipped_dataset("../test/square")  # a name, not a path
    with pytest.raises(UsageError, match="use one of dev, test"):
        shipped_dataset("sample", split="train")


def _report() -> EvalReport:
    return EvalReport(
        generated_at="2026-11-24T00:00:00+00:00",
        results={"d": {"kg": {"top1": 0.5, "recall@5": 0.75, "cases": 4, "latency_ms_p50": 12.5},
                       "agent": {"top1": 1.0, "recall@5": None, "cases": 4}}},
    )  # fmt: skip


def test_metrics_table_has_the_chosen_columns_in_order() -> None:
    assert metrics_table(_report(), "d", ["top1", "recall@5", "latency_ms_p50"]).splitlines() == [
        "| strategy | top1 | recall@5 | latency_ms_p50 |",
        "| --- | ---: | ---: | ---: |",
        "| kg | 0.50 | 0.75 | 12.5 |",
        "| agent | 1.00 | - | - |",
    ]
    assert metrics_table(_report(), "unknown", ["top1"]).count("\n") == 1  # header only


def test_report_md_carries_the_full_table() -> None:
    report = _report()
    report.datasets = {"d": DatasetInfo()}
    assert metrics_table(report, "d") in markdown(report)
