"""The eval report: ``report.json`` (the contract of issue 3), ``report.md`` and ``report.png``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from apiatlas.evals.dataset import VALIDATION
from apiatlas.extras import require
from apiatlas.evals.metrics import (
    METRIC_KEYS,
    RECALL_KS,
    CaseRecord,
    Metrics,
    case_ok,
    compute_metrics,
    confidence_metrics,
    memory_ok,
    risk_coverage,
)

FAILURES_SHOWN = 5
"""Endpoints of a failing agent case shown in report.md."""
MULTI_STEP = "multi-step"
"""The tag of the cases that need several calls, reported apart."""
RISK_THRESHOLDS: tuple[float, ...] = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9)
"""Confidence thresholds of the risk-coverage table in report.md (the curve is in
risk-coverage.png)."""


class DatasetInfo(BaseModel):
    """What was evaluated for one dataset (written under ``datasets`` in report.json)."""

    path: str = ""
    split: str | None = None
    """``dev`` (tune and calibrate on it), ``test`` (only report), or ``None`` (neither)."""
    description: str = ""
    answerable: int = 0
    unanswerable: int = 0
    endpoints: int = 0
    doc_chunks: int = 0
    ingest_seconds: float = 0.0
    home: str = ""
    memories: int = 0
    memory_cases: int = 0


class EvalReport(BaseModel):
    """Everything one ``apiatlas eval`` run produced.

    Attributes:
        generated_at: ISO 8601 UTC time of the run.
        graph_backend: ``embedded`` or ``neo4j``: the knowledge-graph backend evaluated.
        results: Dataset name -> strategy -> metrics (keys of :data:`METRIC_KEYS`).
        records: One record per dataset, case and strategy.
        datasets: Dataset name -> what was ingested and how many cases it has.
        paths: ``json``/``md``/``png`` -> the files written.
    """

    generated_at: str
    graph_backend: str = "embedded"
    results: dict[str, dict[str, Metrics]] = Field(default_factory=dict)
    records: list[CaseRecord] = Field(default_factory=list)
    datasets: dict[str, DatasetInfo] = Field(default_factory=dict)
    paths: dict[str, Path] = Field(default_factory=dict)


def report_json(report: EvalReport) -> dict[str, Any]:
    """The ``report.json`` document: the contract's keys, then ``datasets`` as an extra."""
    return {
        "generated_at": report.generated_at,
        "graph_backend": report.graph_backend,
        "results": report.results,
        "cases": [
            {
                "dataset": r.dataset,
                "id": r.case_id,
                "strategy": r.strategy,
                "ranked": r.ranked,
                "ok": case_ok(r),
                # Extras beyond the contract, for reading a failure without rerunning.
                "presented": r.presented,
                "answerable": r.answerable,
                "expected": r.expected,
                "acceptable": r.acceptable,
                "citations_valid": r.citations_valid,
                "citations_total": r.citations_total,
                "latency_ms": r.latency_ms,
                "latency_warm_ms": r.latency_warm_ms,
                "primary": r.primary,
                "confidence": r.confidence,
                "outcome": r.outcome,
                "tags": r.tags,
                "expected_memories": r.expected_memories,
                "cited_memories": r.cited_memories,
                "memory_ok": memory_ok(r),
            }
            for r in report.records
        ],
        "datasets": {name: info.model_dump() for name, info in report.datasets.items()},
    }


def format_metric(value: float | int | None) -> str:
    """A table cell: ``-`` for ``None``, counts as integers, shares with two decimals."""
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.2f}" if value <= 1.0 else f"{value:.1f}"


def table_rows(
    report: EvalReport, dataset: str, keys: Sequence[str] = METRIC_KEYS
) -> list[list[str]]:
    """One row per strategy: its name, then its metrics in ``keys`` order (every one by default)."""
    return [
        [strategy, *(format_metric(metrics.get(key)) for key in keys)]
        for strategy, metrics in report.results.get(dataset, {}).items()
    ]


def metrics_table(report: EvalReport, dataset: str, keys: Sequence[str] = METRIC_KEYS) -> str:
    """One dataset's Markdown table: a row per strategy, a column per metric of ``keys``.

    Example:
        >>> metrics_table(report, "sample", ["top1", "recall@5", "latency_ms_p50"])
    """
    lines = [
        "| strategy | " + " | ".join(keys) + " |",
        "| --- | " + " | ".join("---:" for _ in keys) + " |",
        *("| " + " | ".join(row) + " |" for row in table_rows(report, dataset, keys)),
    ]
    return "\n".join(lines)


def markdown(report: EvalReport) -> str:
    """``report.md``: a strategy table per dataset, then the failing agent cases."""
    lines = [
        f"# apiatlas eval, {report.generated_at}",
        "",
        f"Knowledge-graph backend: `{report.graph_backend}`. `top1` counts expected endpoints "
        "only (`top1_acceptable` counts acceptable ones too); latencies are cold (the "
        "question's embedding not cached), `latency_warm_*` the same call again. "
        "Metrics are over answerable cases, "
        "except `abstention_accuracy` (unanswerable cases) and `memory_precedence` (cases with "
        "`expected_memories`: the answer cites every expected memory, or none for a control "
        "case, and presents a right endpoint first); `-` means the metric does not apply. "
        "A plain strategy presents its top 3; the agent presents its answer.",
    ]
    for name, info in report.datasets.items():
        lines += [
            "",
            f"## {name} ({info.split or 'unsplit'})",
            "",
            f"{info.description}".strip(),
            "",
            f"{info.answerable} answerable and {info.unanswerable} unanswerable cases; "
            f"{info.endpoints} endpoints, {info.doc_chunks} doc chunks, ingested in "
            f"{info.ingest_seconds:.1f} s."
            + (f" {info.memories} project memories, {info.memory_cases} memory cases."
               if info.memories or info.memory_cases else ""),
            "",
            *metrics_table(report, name).splitlines(),
        ]
        failing = [
            r for r in report.records
            if r.dataset == name and r.strategy == "agent" and not case_ok(r)
        ]
        if failing:
            lines += ["", "### Failing agent cases", "",
                      "| case | question | expected | came back |", "| --- | --- | --- | --- |"]
            for r in failing:
                wanted = ", ".join(r.expected) if r.answerable else "nothing (unanswerable)"
                got = ", ".join(r.ranked[:FAILURES_SHOWN]) or "nothing (abstained)"
                question = r.question.replace("|", "\\|")
                lines.append(f"| {r.case_id} | {question} | {wanted} | {got} |")
        lines += memory_lines(report.records, name)
    lines += risk_lines(report)
    lines += tagged_lines(report, MULTI_STEP)
    return "\n".join(lines) + "\n"


def tagged_lines(report: EvalReport, tag: str) -> list[str]:
    """``all_expected@10`` and ``recall@5`` of every strategy on the cases tagged ``tag``,
    pooled by split."""
    by_split: dict[str, dict[str, list[CaseRecord]]] = {}
    for r in report.records:
        if tag in r.tags and r.answerable:
            by_split.setdefault(split_of(report, r.dataset), {}).setdefault(
                r.strategy, []).append(r)
    if not by_split:
        return []
    strategies = list(dict.fromkeys(r.strategy for r in report.records))
    lines = ["", f"## Cases tagged {tag} (all_expected@10 / recall@5)", "",
             "| split | cases | " + " | ".join(strategies) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in strategies) + " |"]
    for split, per in by_split.items():
        cells = []
        for s in strategies:
            m = compute_metrics(per.get(s, []))
            cells.append(f"{format_metric(m['all_expected@10'])} / {format_metric(m['recall@5'])}")
        n = len(next(iter(per.values())))
        lines.append(f"| {split} | {n} | " + " | ".join(cells) + " |")
    return lines


def split_of(report: EvalReport, dataset: str) -> str:
    """``dev``, ``dev (validation)`` (dev sets never trained on), ``test`` or ``unsplit``."""
    info = report.datasets.get(dataset)
    split = (info.split if info else None) or "unsplit"
    return f"{split} (validation)" if split == "dev" and dataset in VALIDATION else split


def split_records(report: EvalReport) -> dict[str, list[CaseRecord]]:
    """The agent's records pooled by :func:`split_of`."""
    out: dict[str, list[CaseRecord]] = {}
    for r in report.records:
        if r.strategy == "agent" and r.confidence is not None:
            out.setdefault(split_of(report, r.dataset), []).append(r)
    return out


def risk_lines(report: EvalReport) -> list[str]:
    """The agent's risk-coverage table per split: coverage (answerable cases answered) and
    precision (answers whose first endpoint is expected, unanswerable ones counted wrong) when
    only answers at each confidence threshold count as ``answer``."""
    pooled = split_records(report)
    if not pooled:
        return []
    lines = ["", "## Confidence: risk and coverage (agent)", "",
             "Each cell is coverage / precision when only confidences at or above the "
             "threshold are answers: coverage, the share of answerable cases answered; "
             "precision, the share of those answers (unanswerable ones included) whose first "
             "endpoint is expected. The curve: risk-coverage.png.", "",
             "| split | " + " | ".join(f"≥ {t:.1f}" for t in RISK_THRESHOLDS) + " |",
             "| --- | " + " | ".join("---:" for _ in RISK_THRESHOLDS) + " |"]
    for split, records in pooled.items():
        curve = risk_coverage(records)
        cells = []
        for t in RISK_THRESHOLDS:
            above = [(c, p) for th, c, p in curve if th >= t]
            cells.append(f"{above[-1][0]:.2f} / {above[-1][1]:.2f}" if above else "0.00 / -")
        lines.append(f"| {split} | " + " | ".join(cells) + " |")
    keys = ("confident_precision", "confident_coverage", "unanswerable_answered", "ece")
    lines += ["", "The same cases pooled by split, at the shipped threshold:", "",
              "| split | cases | " + " | ".join(keys) + " |",
              "| --- | ---: | " + " | ".join("---:" for _ in keys) + " |"]
    for split, records in pooled.items():
        m = confidence_metrics(records)
        lines.append(f"| {split} | {len(records)} | "
                     + " | ".join(format_metric(m[k]) for k in keys) + " |")
    return lines


def plot_risk(report: EvalReport, path: Path) -> None:
    """``risk-coverage.png``: the agent's precision against coverage, one curve per split."""
    Figure = require("matplotlib.figure", purpose="the eval report's plot").Figure  # noqa: N806
    figure = Figure(figsize=(6.0, 4.5), layout="constrained")
    axes = figure.add_subplot()
    pooled = split_records(report)
    for split, records in pooled.items():
        curve = risk_coverage(records)
        axes.plot([c for _, c, _ in curve], [p for _, _, p in curve], marker=".", label=split)
    axes.axhline(0.9, color="grey", linestyle=":", linewidth=1)
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("coverage (answerable cases answered)")
    axes.set_ylabel("precision of the answers")
    axes.set_title("agent: risk-coverage by confidence")
    if pooled:  # a run without the agent has no curve to name
        axes.legend()
    figure.savefig(path, dpi=100)


def memory_lines(records: list[CaseRecord], dataset: str) -> list[str]:
    """The agent's memory cases of one dataset: what each expected, cited and put first."""
    cases = [
        r for r in records
        if r.dataset == dataset and r.strategy == "agent" and memory_ok(r) is not None
    ]
    if not cases:
        return []
    lines = ["", "### Memory cases (agent)", "",
             "| case | question | expects memories | cited | first endpoint | ok |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in cases:
        question = r.question.replace("|", "\\|")
        expects = ", ".join(r.expected_memories or []) or "none (control)"
        cited = ", ".join(r.cited_memories or []) or "none"
        first = r.presented[0] if r.presented else "nothing (abstained)"
        ok = "yes" if memory_ok(r) else "**no**"
        lines.append(f"| {r.case_id} | {question} | {expects} | {cited} | {first} | {ok} |")
    return lines


def plot(report: EvalReport, path: Path) -> None:
    """``report.png``: recall@k per strategy for each dataset, and latency per strategy."""
    names = list(report.results)
    strategies = list(dict.fromkeys(s for per in report.results.values() for s in per))
    Figure = require("matplotlib.figure", purpose="the eval report's plot").Figure  # noqa: N806
    figure = Figure(figsize=(max(6.0, 4.5 * len(names)), 8.0), layout="constrained")
    grid = figure.add_gridspec(2, max(1, len(names)))
    width = 0.8 / max(1, len(strategies))
    for column, name in enumerate(names):
        axes = figure.add_subplot(grid[0, column])
        for i, strategy in enumerate(strategies):
            metrics = report.results[name].get(strategy, {})
            values = [metrics.get(f"recall@{k}") or 0.0 for k in RECALL_KS]
            xs = [x + (i - (len(strategies) - 1) / 2) * width for x in range(len(RECALL_KS))]
            axes.bar(xs, values, width, label=strategy)
        axes.set_xticks(range(len(RECALL_KS)), [f"recall@{k}" for k in RECALL_KS])
        axes.set_ylim(0, 1.05)
        axes.set_title(name)
        if column == 0:
            handles, labels = axes.get_legend_handles_labels()
            # Outside the axes: inside, the legend hides the bars it explains.
            figure.legend(handles, labels, loc="outside upper center", ncols=len(strategies))
    latency = figure.add_subplot(grid[1, :])
    samples = [[r.latency_ms for r in report.records if r.strategy == s] for s in strategies]
    latency.boxplot(samples, tick_labels=strategies)
    latency.set_yscale("log")
    latency.set_ylabel("latency, ms (cold question, log scale)")
    latency.set_title("latency per strategy, all datasets")
    figure.savefig(path, dpi=100)


def write_reports(report: EvalReport, out_dir: Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.png`` into ``out_dir``."""
    paths = {
        "json": out_dir / "report.json",
        "md": out_dir / "report.md",
        "png": out_dir / "report.png",
        "risk": out_dir / "risk-coverage.png",
    }
    paths["json"].write_text(json.dumps(report_json(report), indent=2) + "\n", encoding="utf-8")
    paths["md"].write_text(markdown(report), encoding="utf-8")
    plot(report, paths["png"])
    plot_risk(report, paths["risk"])
    return paths
