"""Strategy helpers, report rendering and ``apiatlas eval`` usage errors: no model, no store."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from apiatlas.cli import EXIT_USAGE, main
from apiatlas.errors import UsageError
from apiatlas.evals.metrics import METRIC_KEYS, CaseRecord, compute_metrics
from apiatlas.evals.report import DatasetInfo, EvalReport, format_metric, markdown, report_json
from apiatlas.evals.strategies import STRATEGIES, dedupe, document_citation, parse_strategies


def test_parse_strategies_keeps_order_and_drops_repeats() -> None:
    assert parse_strategies("kg, agent,kg") == ("kg", "agent")
    assert parse_strategies(["BM25", "dense"]) == ("bm25", "dense")
    assert parse_strategies(",".join(STRATEGIES)) == STRATEGIES


@pytest.mark.parametrize("text", ["bm25,magic", "", " , "])
def test_parse_strategies_refuses_unknown_or_empty(text: str) -> None:
    with pytest.raises(UsageError, match="choose from bm25, dense, hybrid, kg, agent"):
        parse_strategies(text)


def test_dedupe_compares_method_and_path_without_parameter_names() -> None:
    ranked = ["GET /a/{id}", "get /a/{other}/", "POST /a", "GET /a/{x}", "POST /a"]
    assert dedupe(ranked) == ["GET /a/{id}", "POST /a"]


def test_document_citation_for_cards_and_doc_chunks() -> None:
    card = Document(page_content="x", metadata={
        "kind": "endpoint", "source": "/s/openapi.yaml", "pointer": "/paths/~1a/post",
        "method": "POST", "path": "/a"})
    chunk = Document(page_content="y", metadata={
        "kind": "doc", "source": "/s/guide.md", "anchor": "create", "section": "Guide > Create"})
    spec = document_citation(card, 1)
    doc = document_citation(chunk, 2)
    assert spec is not None and doc is not None
    assert (spec.kind, spec.uri, spec.pointer, spec.title) == (
        "spec", "/s/openapi.yaml#/paths/~1a/post", "/paths/~1a/post", "POST /a")
    assert (doc.kind, doc.uri, doc.pointer, doc.n) == ("doc", "/s/guide.md#create", "create", 2)
    assert document_citation(Document(page_content="z", metadata={}), 3) is None


def _report() -> EvalReport:
    good = CaseRecord(dataset="mini", case_id="ok-1", strategy="agent", question="make a thing",
                      expected=["POST /things"], ranked=["POST /things"],
                      presented=["POST /things"], citations_valid=1, citations_total=1)
    bad = CaseRecord(dataset="mini", case_id="bad|2", strategy="agent", question="a | b?",
                     answerable=False, ranked=["GET /x"], presented=["GET /x"])
    report = EvalReport(generated_at="2026-01-01T00:00:00+00:00", records=[good, bad])
    report.results["mini"] = {"agent": compute_metrics([good, bad])}
    report.datasets["mini"] = DatasetInfo(description="tiny", answerable=1, unanswerable=1)
    return report


def test_report_json_has_the_contract_keys() -> None:
    data = report_json(_report())
    assert list(data)[:4] == ["generated_at", "graph_backend", "results", "cases"]
    assert list(data["results"]["mini"]["agent"]) == list(METRIC_KEYS)
    first, second = data["cases"]
    assert {k: first[k] for k in ("dataset", "id", "strategy", "ranked", "ok")} == {
        "dataset": "mini", "id": "ok-1", "strategy": "agent", "ranked": ["POST /things"],
        "ok": True}
    assert second["ok"] is False


def test_markdown_has_a_table_and_the_failing_agent_cases() -> None:
    text = markdown(_report())
    assert "| strategy | " + " | ".join(METRIC_KEYS) + " |" in text
    assert "| agent | 2 | 1.00 |" in text
    assert "### Failing agent cases" in text
    assert "| bad|2 | a \\| b? | nothing (unanswerable) | GET /x |" in text
    assert "ok-1" not in text.split("### Failing agent cases")[1]


def test_format_metric() -> None:
    assert [format_metric(v) for v in (None, 3, 0.5, 1.0, 12.345)] == [
        "-", "3", "0.50", "1.00", "12.3"]


def test_cli_eval_exits_2_on_an_unknown_strategy(tmp_path: Path) -> None:
    assert main(["eval", str(tmp_path / "any.yaml"), "--strategies", "bm25,magic"]) == EXIT_USAGE


def test_cli_eval_exits_2_on_a_bad_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsources: {openapi: [nope.yaml]}\ncases: [{id: a, question: q}]\n")
    assert main(["eval", str(bad), "--out", str(tmp_path / "out")]) == EXIT_USAGE
    assert "bad.yaml" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()
