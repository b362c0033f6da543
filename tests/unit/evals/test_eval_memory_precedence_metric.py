"""``memory_precedence`` (issue 5) on hand-built records, and how reports show memory cases."""

from __future__ import annotations

from apiatlas.evals.memories import DatasetMemories
from apiatlas.evals.metrics import METRIC_KEYS, CaseRecord, compute_metrics, memory_ok
from apiatlas.evals.report import DatasetInfo, EvalReport, markdown, report_json
from apiatlas.rag.answer.result import Citation

V1, V2 = "POST /v1/locations", "POST /v2/locations"


def rec(
    case_id: str,
    presented: list[str],
    expected_memories: list[str] | None,
    cited: list[str] | None,
    *,
    expected: tuple[str, ...] = (V1,),
    acceptable: tuple[str, ...] = (V2,),
    superseded: tuple[str, ...] = (),
) -> CaseRecord:
    return CaseRecord(
        dataset="team", case_id=case_id, strategy="agent" if cited is not None else "dense",
        question=f"question {case_id}?", expected=list(expected), acceptable=list(acceptable),
        ranked=presented, presented=presented, expected_memories=expected_memories,
        cited_memories=cited, superseded_memories=list(superseded),
    )


def test_a_memory_case_needs_every_expected_memory_cited_and_a_right_first_endpoint() -> None:
    assert memory_ok(rec("a", [V1, V2], ["v1"], ["v1", "other"])) is True
    assert memory_ok(rec("b", [V2, V1], ["v1"], ["v1"])) is True  # acceptable first
    assert memory_ok(rec("c", ["GET /v2/locations", V1], ["v1"], ["v1"])) is False
    assert memory_ok(rec("d", [V1], ["v1", "warn"], ["v1"])) is False
    assert memory_ok(rec("e", [], ["v1"], ["v1"])) is False  # abstained


def test_citing_a_superseded_memory_fails_even_beside_the_newest() -> None:
    assert memory_ok(rec("a", [V1], ["new"], ["new"], superseded=("old",))) is True
    assert memory_ok(rec("b", [V1], ["new"], ["new", "old"], superseded=("old",))) is False


def test_a_control_case_must_cite_no_memory() -> None:
    assert memory_ok(rec("a", [V1], [], [])) is True
    assert memory_ok(rec("b", [V1], [], ["v1"])) is False
    assert memory_ok(rec("c", [V1], [], ["memory:mem_123"])) is False


def test_not_applicable_for_plain_cases_and_strategies_that_do_not_read_memory() -> None:
    assert memory_ok(rec("a", [V1], None, ["v1"])) is None
    assert memory_ok(rec("b", [V1], ["v1"], None)) is None


def test_the_metric_is_the_share_over_memory_cases_and_null_otherwise() -> None:
    agent = [
        rec("a", [V1], ["v1"], ["v1"]),
        rec("b", ["GET /v2/locations"], ["v1"], ["v1"]),
        rec("c", [V1], [], []),
        rec("d", [V1], None, []),  # not a memory case: left out
    ]
    metrics = compute_metrics(agent)
    assert list(metrics) == list(METRIC_KEYS) and METRIC_KEYS[13] == "memory_precedence"
    assert metrics["memory_precedence"] == round(2 / 3, 4)
    assert compute_metrics([rec("a", [V1], ["v1"], None)])["memory_precedence"] is None
    assert compute_metrics([rec("a", [V1], None, ["v1"])])["memory_precedence"] is None


def test_controls_citing_nothing_and_memories_cited_per_answer() -> None:
    agent = [
        rec("m", [V1], ["v1"], ["v1", "warn"]),
        rec("c1", [V1], [], []),
        rec("c2", [V1], [], ["v1"]),
        rec("c3", ["GET /x"], [], []),  # wrong first endpoint: still cites no memory
        rec("plain", [V1], None, ["v1", "v2", "v3"]),  # not a memory or control case
    ]
    metrics = compute_metrics(agent)
    assert metrics["control_clean"] == round(2 / 3, 4)
    assert metrics["memory_cited_mean"] == round(3 / 4, 4)
    only_memory = compute_metrics(agent[:1])
    assert only_memory["control_clean"] is None and only_memory["memory_cited_mean"] == 2.0
    for plain in ([rec("a", [V1], [], None)], [rec("a", [V1], None, [])]):
        assert compute_metrics(plain)["control_clean"] is None
        assert compute_metrics(plain)["memory_cited_mean"] is None


def test_citations_are_read_back_as_dataset_keys() -> None:
    loaded = DatasetMemories(ids={"v1": "mem_a", "warn": "mem_b"}, superseded=["old"])

    def cite(n: int, kind: str, uri: str) -> Citation:
        return Citation(n=n, kind=kind, source="memory", uri=uri)  # type: ignore[arg-type]

    citations = [
        cite(1, "memory", "memory:mem_b"), cite(2, "spec", "spec.yaml#/paths"),
        cite(3, "memory", "memory:mem_zzz"), cite(4, "memory", "memory:mem_b"),
        cite(5, "memory", "memory:mem_a"),
    ]
    assert loaded.cited(citations) == ["warn", "memory:mem_zzz", "v1"]
    assert loaded.cited([]) == []


def test_reports_show_the_memory_cases() -> None:
    records = [rec("m1", [V1], ["v1"], ["v1"]), rec("ctl", ["GET /x"], [], ["v1"]),
               rec("m1", [V2], ["v1"], None)]
    report = EvalReport(generated_at="2026-11-22T00:00:00+00:00", records=records)
    report.results["team"] = {"agent": compute_metrics(records[:2]),
                              "dense": compute_metrics(records[2:])}
    report.datasets["team"] = DatasetInfo(answerable=2, memories=3, memory_cases=2)
    data = report_json(report)
    assert data["results"]["team"]["agent"]["memory_precedence"] == 0.5
    assert data["results"]["team"]["dense"]["memory_precedence"] is None
    first = data["cases"][0]
    assert first["expected_memories"] == ["v1"] and first["cited_memories"] == ["v1"]
    assert first["memory_ok"] is True and data["cases"][2]["memory_ok"] is None
    assert data["datasets"]["team"]["memories"] == 3
    text = markdown(report)
    assert "3 project memories, 2 memory cases." in text
    assert "### Memory cases (agent)" in text
    assert "| m1 | question m1? | v1 | v1 | POST /v1/locations | yes |" in text
    assert "| ctl | question ctl? | none (control) | v1 | GET /x | **no** |" in text
