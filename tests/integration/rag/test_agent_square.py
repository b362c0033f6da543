"""The agent on Square's real spec (shared data), in the home the eval runner ingests."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.graph.state import CompiledStateGraph

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.runner import run_eval
from apiatlas.rag.agent.graph import run_agent
from apiatlas.rag.agent.context import AgentContext
from apiatlas.rag.runtime.embeddings import load_embeddings

pytestmark = pytest.mark.shared_data
CTX = AgentContext(project="square")
DATASETS = Path(__file__).resolve().parents[3] / "evals" / "datasets"


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module")
def agent(
    shared_data: Path, eval_out: Path, embeddings: Embeddings
) -> Iterator[CompiledStateGraph]:
    # Square's eval home, ingested once per session (the eval floors test reads it too).
    run_eval([DATASETS / "test" / "square.yaml"], strategies=("bm25",), out_dir=eval_out,
             keep_homes=True, progress=False, embeddings=embeddings)  # fmt: skip
    settings = Settings(home=eval_out / "homes" / "square", project=CTX.project)
    with ApiAtlas(settings, embeddings=embeddings) as atlas:
        yield atlas.agent


def test_create_a_location_on_square(agent: CompiledStateGraph) -> None:
    result = run_agent(agent, "What endpoints can I use to create a location?", context=CTX)
    assert not result.abstained
    first = result.endpoints[0]
    assert (first.method, first.path, first.role) == ("POST", "/v2/locations", "primary")
    spec = result.citations[first.citation - 1]
    assert spec.source.endswith("api.json") and spec.pointer == "/paths/~1v2~1locations/post"
    assert result.examples and result.examples[0].endpoint == "POST /v2/locations"


def test_create_a_customer_on_square(agent: CompiledStateGraph) -> None:
    result = run_agent(agent, "How do I add a new customer?", context=CTX)
    assert [(e.method, e.path) for e in result.endpoints][0] == ("POST", "/v2/customers")


def test_a_question_far_from_square_abstains(agent: CompiledStateGraph) -> None:
    # The learned answer model abstains where nothing in the API is near; a word Square never
    # uses is, alone, no reason to (dev questions often use words their API does not).
    result = run_agent(agent, "How do I train a neural network on a GPU cluster?", context=CTX)
    assert result.abstained and result.endpoints == []


def test_a_refund_rule_written_without_refs_leads_the_answer(
    agent: CompiledStateGraph, eval_out: Path, embeddings: Embeddings
) -> None:
    # Issue 54: recorded as a chat tool records it, with the endpoints only in its text. Under
    # its own agent type, so that no other reader of Square's eval home sees it.
    refund, cancel = "POST /v2/refunds", "POST /v2/payments/{payment_id}/cancel"
    settings = Settings(home=eval_out / "homes" / "square", project=CTX.project)
    with ApiAtlas(settings, embeddings=embeddings) as atlas:
        memory = atlas.memory(agent_type="refund-rules").remember(
            f"Refunds never go through {refund} here: a payment that is not completed yet is "
            f"cancelled with {cancel} instead, and finance refunds the rest from the dashboard.",
            kind="decision", scope="agent_type",
        )
        try:
            assert memory.refs == [] and memory.inferred_refs == [refund, cancel]
            result = atlas.ask("How do I refund a payment?", agent_type="refund-rules")
        finally:
            atlas.memory(agent_type="refund-rules").forget(memory.id)
    first = result.endpoints[0]
    assert f"{first.method} {first.path}" == cancel
    assert refund not in [f"{e.method} {e.path}" for e in result.endpoints]
    [used] = result.memories
    assert used.id == memory.id and used.stances == {refund: "avoid", cancel: "prefer"}
    assert "Memory and docs disagree" in result.answer and "**Forbidden by your team**" in result.answer
