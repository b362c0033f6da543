"""CI guard: the agent follows project memory on the shipped memory-precedence dataset.

``sample-memory`` records a team's memories on the sample API (a deprecated endpoint it still
uses, an endpoint the docs recommend that it forbids, a procedure, a preference, a superseded
decision) and asks memory cases, controls no memory is about, and questions the API cannot
answer. The floors are the measured scores (evals/README.md) minus 0.03, so a regression fails
CI; plain strategies do not read memory, so their ``memory_precedence`` is null.
"""

from __future__ import annotations

import json
from pathlib import Path

from apiatlas.config import Settings
from apiatlas.evals.runner import run_eval
from apiatlas.rag.runtime.embeddings import load_embeddings

DATASET = Path(__file__).resolve().parents[3] / "evals" / "datasets" / "dev" / "sample-memory.yaml"

# Measured on the embedded backend, 2026-11-29, with the round-two encoder and the ranker refit
# on it without a query adapter (issue 33; evals/README.md): memory_precedence 0.94 (17/18; 0.89
# with round one's encoder and the adapter, 0.83 before a memory that leads by naming a presented
# endpoint had to name one of the kind the question asks, rag/review/relevance.py), top1 0.94
# (expected endpoints only); minus a 0.03 margin. Abstention has no floor: it measures 0 of the
# two unanswerable cases since the adapter of 2026-11-24 (it was 0.50 before; CHANGELOG.md).
FLOORS = {"memory_precedence": 0.9144, "top1": 0.9144}


def test_the_agent_follows_project_memory_above_its_floor(tmp_path: Path) -> None:
    report = run_eval(
        [DATASET], strategies=("kg", "agent"), out_dir=tmp_path, progress=False,
        embeddings=load_embeddings(Settings()),
    )
    agent = report.results["sample-memory"]["agent"]
    assert agent["citation_validity"] == 1.0  # memory:<id> citations resolve too
    for metric, floor in FLOORS.items():
        assert agent[metric] is not None and agent[metric] >= floor, (
            f"sample-memory agent {metric} = {agent[metric]} fell below its floor {floor}"
        )
    assert report.results["sample-memory"]["kg"]["memory_precedence"] is None

    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    cases = {c["id"]: c for c in written["cases"] if c["strategy"] == "agent"}
    memory_cases = [c for c in cases.values() if c["expected_memories"]]
    assert len(memory_cases) >= 12
    # Every memory case's answer cites memories by their dataset keys (no unknown ids), and the
    # superseded tracking decision is never cited: only its newest version may win.
    cited = {key for c in cases.values() for key in c["cited_memories"]}
    assert cited and not any(key.startswith("memory:") for key in cited)
    assert "tracking-poll" not in cited
    assert written["datasets"]["sample-memory"]["memories"] == 7
    assert "### Memory cases (agent)" in (tmp_path / "report.md").read_text(encoding="utf-8")
