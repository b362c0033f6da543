"""The agent on Square's real spec (shared data): knowledge graph and endpoint cards, no guides."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.graph.state import CompiledStateGraph

from apiatlas.config import Settings
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.loaders.cards import endpoint_documents
from apiatlas.loaders.openapi import load_openapi
from apiatlas.loaders.splitting import TokenSplitter
from apiatlas.rag.agent.graph import build_agent, run_agent
from apiatlas.rag.agent.context import AgentContext
from apiatlas.rag.retrieval.embeddings import LOCAL_MAX_TOKENS, load_embeddings, local_tokenizer
from apiatlas.rag.retrieval.fusion import HybridRetriever
from apiatlas.rag.retrieval.dense import VectorIndex, open_vector_store

pytestmark = pytest.mark.shared_data
CTX = AgentContext(project="square")


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module")
def agent(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory, embeddings: Embeddings
) -> Iterator[CompiledStateGraph]:
    settings = Settings(home=Path(tmp_path_factory.mktemp("square")))
    settings.ensure_home()
    specs = load_openapi(shared_data / "square" / "spec" / "api.json")
    store = SqliteGraphStore(settings.graph_path)
    ingest_graph(store, CTX.project, specs=specs)
    splitter = TokenSplitter(local_tokenizer(), max_tokens=LOCAL_MAX_TOKENS)
    cards = splitter.split_documents(
        [c for spec in specs for c in endpoint_documents(spec, project=CTX.project)]
    )
    vectors = open_vector_store(settings, embeddings)
    VectorIndex(vectors, settings.record_manager_url).index(
        cards, project=CTX.project, sources=sorted({d.metadata["source"] for d in cards})
    )
    retriever = HybridRetriever(vector_store=vectors, project=CTX.project)
    yield build_agent(store=store, vector_retriever=retriever, embeddings=embeddings)
    store.close()


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
