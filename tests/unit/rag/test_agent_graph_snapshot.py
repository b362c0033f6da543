"""The agent's topology, compared with a reviewed mermaid snapshot, and its router."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.agent.graph import build_state_graph, route_after_graph
from apiatlas.rag.agent.context import AgentContext
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.agent.state import AgentState

SNAPSHOT = Path(__file__).parent / "snapshots" / "agent.mmd"


class _TopologyOnly:
    """Node functions for drawing: the snapshot is about edges, not about what nodes do."""

    def analyse(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        return {}

    async def arank(
        self, state: AgentState, runtime: Runtime[AgentContext]
    ) -> dict[str, Any]:
        return {}

    memory = knowledge_graph = rank = review = compose = code = analyse


def test_mermaid_matches_snapshot() -> None:
    drawn = build_state_graph(_TopologyOnly()).compile().get_graph().draw_mermaid()
    assert drawn == SNAPSHOT.read_text(), (
        "The agent's routing changed: review the diff and update tests/unit/rag/snapshots/agent.mmd"
    )


def _state(question: str, found: bool) -> AgentState:
    primary = [EndpointRef(key="k", api="a", method="POST", path="/v2/locations")] if found else []
    return {"question": question,
            "lookup": GraphLookup(intent=analyse_question(question), primary=primary)}


def test_router_skips_vectors_only_for_explicit_endpoints_the_graph_found() -> None:
    assert route_after_graph(_state("What does POST /v2/locations need?", True)) == "review"
    assert route_after_graph(_state("What does POST /v9/nothing need?", False)) == "rank"
    assert route_after_graph(_state("create a location", True)) == "rank"
    assert route_after_graph(_state("How do I verify signatures?", False)) == "rank"
