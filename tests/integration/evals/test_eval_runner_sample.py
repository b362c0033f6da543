"""``apiatlas eval`` end to end on the bundled sample API: real SQLite graph, Chroma and MiniLM.

One ingest for the module, through the CLI: every strategy runs on a handful of obvious cases,
and the written report.json is checked key by key against the contract of issue 3.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from apiatlas.atlas import ApiAtlas
from apiatlas.cli import EXIT_OK, main
from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.evals.metrics import METRIC_KEYS
from apiatlas.evals.runner import CitationChecker, run_eval
from apiatlas.evals.strategies import STRATEGIES
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.answer.result import Citation
from apiatlas.sample import write_sample_api

DATASET = """\
name: sample-obvious
description: Obvious questions over the sample API.
sources:
  openapi: [sample/openapi.yaml]
  docs: [sample/guides]
cases:
  - id: location-create
    question: "What endpoints can I use to create a location?"
    expected_endpoints: ["POST /v2/locations"]
    acceptable_endpoints: ["POST /v1/locations"]
  - id: courier-register
    question: "register a new courier"
    expected_endpoints: ["POST /v2/carriers"]
  - id: shipment-cancel
    question: "How do I cancel a shipment?"
    expected_endpoints: ["post /v2/shipments/{id}/cancel/"]
  - id: shipment-create
    question: "How do I create a shipment?"
    expected_endpoints: ["POST /v2/shipments", "POST /v2/locations"]
    acceptable_endpoints: ["GET /v2/locations", "POST /v2/carriers", "GET /v2/carriers"]
    tags: [multi-step]
  - id: off-topic
    question: "How do I train a neural network on a GPU cluster?"
    answerable: false
"""

CONFIDENCE_KEYS = ("confident_precision", "confident_coverage", "unanswerable_answered", "ece")
MEMORY_KEYS = ("memory_precedence", "control_clean", "memory_cited_mean")


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eval-sample")
    write_sample_api(root / "sample")
    (root / "dataset.yaml").write_text(DATASET, encoding="utf-8")
    return root


@dataclass
class Run:
    code: int
    printed: str
    out: Path
    report: dict[str, Any]


@pytest.fixture(scope="module")
def run(folder: Path) -> Run:
    # Through the CLI, so that one ingest covers the runner, the reports and the printed table.
    out = folder / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["eval", str(folder / "dataset.yaml"), "--out", str(out),
                     "--strategies", ",".join(STRATEGIES)])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return Run(code, printed.getvalue(), out, report)


@pytest.fixture(scope="module")
def written(run: Run) -> dict[str, Any]:
    return run.report


def test_report_json_follows_the_contract_key_by_key(written: dict[str, Any]) -> None:
    assert isinstance(written["generated_at"], str) and written["generated_at"][:2] == "20"
    assert written["graph_backend"] == "embedded"
    assert list(written["results"]) == ["sample-obvious"]
    per_strategy = written["results"]["sample-obvious"]
    assert list(per_strategy) == list(STRATEGIES)
    for strategy, metrics in per_strategy.items():
        assert list(metrics) == list(METRIC_KEYS), strategy
        assert metrics["cases"] == 5
        for key in METRIC_KEYS[1:]:
            if key in MEMORY_KEYS:  # null: this dataset has no memory cases
                assert metrics[key] is None, strategy
                continue
            if key in CONFIDENCE_KEYS:  # the agent's outcomes; a plain strategy has none
                value = metrics[key]
                assert value is None if strategy != "agent" else (
                    value is None and key in ("confident_precision", "unanswerable_answered")
                    or 0.0 <= value <= 1.0), (strategy, key, value)
                continue
            assert isinstance(metrics[key], float), (strategy, key)
        for key in METRIC_KEYS[1:11]:
            assert 0.0 <= metrics[key] <= 1.0, (strategy, key)
    cases = written["cases"]
    assert len(cases) == 5 * len(STRATEGIES)
    for case in cases:
        assert {"dataset", "id", "strategy", "ranked", "ok"} <= set(case)
        assert case["dataset"] == "sample-obvious"
        assert case["strategy"] in STRATEGIES
        assert isinstance(case["ok"], bool)
        if case["strategy"] == "agent":
            assert case["outcome"] in ("answer", "unsure", "none")
            assert 0.0 <= case["confidence"] <= 1.0
        else:
            assert case["outcome"] is None and case["confidence"] is None
        assert all(isinstance(s, str) and " /" in s for s in case["ranked"])
        assert len(case["ranked"]) == len(set(case["ranked"]))


def test_markdown_and_png_reports_exist(run: Run) -> None:
    text = (run.out / "report.md").read_text(encoding="utf-8")
    assert "## sample-obvious" in text and "| agent |" in text and "| dense |" in text
    assert (run.out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_cli_exits_0_and_prints_a_table_and_the_report_paths(run: Run) -> None:
    assert run.code == EXIT_OK
    assert "sample-obvious" in run.printed and "recall@5" in run.printed
    assert all(s in run.printed for s in STRATEGIES)
    for name in ("json", "md", "png"):
        assert f"{name}: {run.out / f'report.{name}'}\n" in run.printed
    assert (run.out / "homes" / "sample-obvious" / "graph.sqlite").is_file()


def test_the_agent_gets_the_obvious_cases_right(written: dict[str, Any]) -> None:
    agent = written["results"]["sample-obvious"]["agent"]
    assert agent["top1"] == 1.0
    assert agent["recall@5"] == 1.0
    assert agent["all_expected@10"] == 1.0
    assert agent["abstention_accuracy"] == 1.0
    assert agent["false_abstention"] == 0.0
    assert agent["citation_validity"] == 1.0
    # By default the agent names ten endpoints (five in full, the ranker's next five a line
    # each, issue 52): on these five cases that is one expected endpoint among about seven, so
    # precision sits near 0.18 (0.25 when it named five). Naming the next five raised the
    # multi-step cases' all-expected@10 on every split (experiments/2026-12-01-confidence);
    # this floor guards today's level.
    assert agent["precision"] >= 0.15
    assert agent["latency_ms_p95"] >= agent["latency_ms_p50"] > 0.0
    by_id = {c["id"]: c for c in written["cases"] if c["strategy"] == "agent"}
    assert by_id["off-topic"]["ranked"] == [] and by_id["off-topic"]["ok"]
    assert by_id["shipment-cancel"]["ranked"][0] == "POST /v2/shipments/{shipment_id}/cancel"


def test_plain_vector_rag_always_presents_something(written: dict[str, Any]) -> None:
    # The baseline has no notion of "this does not exist": that is what the graph adds.
    dense = written["results"]["sample-obvious"]["dense"]
    assert dense["abstention_accuracy"] == 0.0
    assert dense["citation_validity"] == 1.0
    assert written["results"]["sample-obvious"]["kg"]["abstention_accuracy"] == 1.0


def test_citation_checker_resolves_real_items_and_rejects_others(
    written: dict[str, Any], folder: Path, embeddings: Embeddings
) -> None:
    home = Path(written["datasets"]["sample-obvious"]["home"])
    spec = str((folder / "sample" / "openapi.yaml").resolve())
    guide = str((folder / "sample" / "guides" / "locations.md").resolve())
    with ApiAtlas(Settings(home=home), embeddings=embeddings) as atlas:
        checker = CitationChecker(atlas, "sample-obvious")

        def ok(kind: str, source: str, pointer: str) -> bool:
            return checker.valid(Citation(n=1, kind=kind, source=source,  # type: ignore[arg-type]
                                          uri=f"{source}#{pointer}", pointer=pointer))

        assert ok("spec", spec, "/paths/~1v2~1locations/post")
        assert not ok("spec", spec, "/paths/~1v2~1invoices/post")
        assert not ok("spec", spec + ".missing", "/paths")
        anchors = [s for s in guide_anchors(guide) if s]
        assert anchors and ok("doc", guide, anchors[0])
        assert ok("doc", guide, "")
        assert not ok("doc", guide, "no-such-heading")
        assert not ok("doc", "https://docs.example.com/guide", "intro")
        assert not ok("spec", "https://api.example.com/openapi.json", "/paths")


def guide_anchors(path: str) -> list[str]:
    from apiatlas.loaders.docs import load_docs

    return [s.anchor for page in load_docs(path) for s in page.sections]


def test_a_foreign_homes_folder_is_never_deleted(folder: Path, embeddings: Embeddings) -> None:
    out = folder / "foreign"
    mine = out / "homes" / "sample-obvious" / "keep.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("not yours")
    with pytest.raises(UsageError, match="choose another --out"):
        run_eval([folder / "dataset.yaml"], strategies="kg", out_dir=out, progress=False,
                 embeddings=embeddings)
    assert mine.read_text() == "not yours"
