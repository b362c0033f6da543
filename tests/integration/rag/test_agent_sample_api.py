"""The agent end to end on the packaged sample API: real SQLite graph, Chroma and MiniLM."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from apiatlas.config import Settings
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.loaders.cards import CARD_TOKENS, endpoint_documents
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.openapi import load_openapi
from apiatlas.loaders.splitting import TokenSplitter, section_documents
from apiatlas.rag.agent.graph import arun_agent, build_agent, run_agent
from apiatlas.rag.agent.context import AgentContext
from apiatlas.rag.ranking.model import load_model
from apiatlas.rag.runtime.embeddings import LOCAL_MAX_TOKENS, load_embeddings, local_tokenizer
from apiatlas.rag.retrieval.fusion import HybridRetriever
from apiatlas.rag.answer.result import AnswerResult, Citation
from apiatlas.rag.retrieval.dense import VectorIndex, open_vector_store
from apiatlas.sample import sample_guides_dir, sample_spec_path

CTX = AgentContext(project="sample")
# Built without a memory store: the memory node runs first and says so.
FULL_ROUTE = ["memory", "analyse", "knowledge_graph", "rank", "review", "compose"]
NODES = {r for r in FULL_ROUTE if ":" not in r}


@dataclass
class Sample:
    agent: CompiledStateGraph
    store: SqliteGraphStore
    retriever: HybridRetriever
    embeddings: Embeddings


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory, embeddings: Embeddings) -> Any:
    settings = Settings(home=Path(tmp_path_factory.mktemp("agent-sample")))
    settings.ensure_home()
    specs = load_openapi(sample_spec_path())
    pages = load_docs(sample_guides_dir())
    store = SqliteGraphStore(settings.graph_path)
    ingest_graph(store, CTX.project, specs=specs, docs={"guides": pages})
    splitter = TokenSplitter(local_tokenizer(), max_tokens=LOCAL_MAX_TOKENS)
    cards = [c for spec in specs for c in endpoint_documents(spec, project=CTX.project)]
    docs = splitter.compact_documents(cards, max_tokens=CARD_TOKENS)
    docs += section_documents(pages, project=CTX.project, splitter=splitter)
    vectors = open_vector_store(settings, embeddings)
    VectorIndex(vectors, settings.record_manager_url).index(
        docs, project=CTX.project, sources=sorted({d.metadata["source"] for d in docs})
    )
    retriever = HybridRetriever(vector_store=vectors, project=CTX.project)
    agent = build_agent(store=store, vector_retriever=retriever, embeddings=embeddings)
    yield Sample(agent=agent, store=store, retriever=retriever, embeddings=embeddings)
    store.close()


def ask(sample: Sample, question: str) -> AnswerResult:
    return run_agent(sample.agent, question, context=CTX)


def signatures(result: AnswerResult, role: str = "primary") -> list[str]:
    """The endpoints of ``role``; ``primary`` means the answer's own endpoints, which an
    ``unsure`` answer calls candidates (the same list in the same order)."""
    roles = ("primary", "candidate") if role == "primary" else (role,)
    return [f"{e.method} {e.path}" for e in result.endpoints if e.role in roles]


def resolves(citation: Citation) -> bool:
    """The cited file exists and the JSON pointer / heading anchor exists inside it."""
    path = Path(citation.source)
    if not path.is_file():
        return False
    if citation.kind == "doc":
        anchors = {s.anchor for page in load_docs(path) for s in page.sections}
        return citation.pointer in anchors
    node: Any = yaml.safe_load(path.read_text()) if path.suffix != ".json" else json.loads(
        path.read_text()
    )
    for token in citation.pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return False
    return True


def test_create_a_location(sample: Sample) -> None:
    result = ask(sample, "What endpoints can I use to create a location?")
    assert not result.abstained
    assert signatures(result)[0] == "POST /v2/locations"
    assert result.examples and result.examples[0].endpoint == "POST /v2/locations"
    assert len(result.citations) >= 2
    unresolved = [c.uri for c in result.citations if not resolves(c)]
    assert unresolved == []
    assert result.route == FULL_ROUTE
    assert set(result.timings_ms) == NODES
    # The deprecated v1 create, when listed, is marked and points at v2.
    old = [e for e in result.endpoints if e.path == "/v1/locations"]
    assert all(e.deprecated for e in old)
    if old:
        assert "use `POST /v2/locations` instead" in result.answer


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do I add a new facility?", "POST /v2/locations"),
        ("register a courier", "POST /v2/carriers"),
        ("book a parcel", "POST /v2/shipments"),
        ("list all couriers", "GET /v2/carriers"),
        ("cancel a shipment", "POST /v2/shipments/{shipment_id}/cancel"),
        ("What does POST /v2/quotes need?", "POST /v2/quotes"),
        ("Explain verifyCarrier", "POST /v2/carriers/{carrier_id}/verify"),
    ],
)
def test_synonyms_and_mentions_find_the_right_endpoint(
    sample: Sample, question: str, expected: str
) -> None:
    result = ask(sample, question)
    assert not result.abstained
    assert signatures(result)[0] == expected


def test_an_endpoint_named_as_what_was_used_is_ranked_not_answered(sample: Sample) -> None:
    # The how-to clause asks for what the named endpoint does not do: the ranking answers it.
    result = ask(sample, "We list shipments with GET /v2/shipments. How do I cancel one?")
    assert result.route == FULL_ROUTE
    # Written with values, a path names the template it fills.
    filled = ask(sample, "What does GET /v2/shipments/shp_123/tracking-events return?")
    assert filled.route == ["memory", "analyse", "knowledge_graph", "review", "compose"]
    assert signatures(filled) == ["GET /v2/shipments/{shipment_id}/tracking-events"]


def test_explicit_mentions_skip_the_vectors(sample: Sample) -> None:
    result = ask(sample, "What does POST /v2/quotes need?")
    assert result.route == ["memory", "analyse", "knowledge_graph", "review", "compose"]
    assert signatures(result) == ["POST /v2/quotes"]
    # No ranking ran: the confidence is the share of dev questions naming their endpoint that
    # were answered right.
    assert result.confidence == round(load_model().named_confidence, 4)


def test_legacy_question_prefers_v1_but_names_the_replacement(sample: Sample) -> None:
    result = ask(sample, "get a location with the deprecated v1 API")
    assert signatures(result)[0] == "GET /v1/locations/{location_id}"
    assert "use `GET /v2/locations/{location_id}` instead" in result.answer


def test_shipment_lists_location_and_carrier_prerequisites(sample: Sample) -> None:
    result = ask(sample, "How do I create a shipment?")
    assert signatures(result)[0] == "POST /v2/shipments"
    prereqs = signatures(result, "prerequisite")
    assert "POST /v2/locations" in prereqs
    assert "POST /v2/carriers" in prereqs
    assert "first to get `origin_location_id`" in result.answer
    assert "first to get `carrier_id`" in result.answer
    assert all(resolves(c) for c in result.citations)


def test_a_thing_known_by_its_name_is_looked_up_before_the_call_that_needs_its_id(
    sample: Sample,
) -> None:
    result = ask(sample, "Create a shipment from the location named 'Leeds DC'")
    assert signatures(result)[:2] == ["GET /v2/locations", "POST /v2/shipments"]
    assert "find the `origin_location_id` that `POST /v2/shipments` needs" in result.answer
    # The location is found, not created: it is no longer a "call this first"; the carrier is.
    assert "first to get `origin_location_id`" not in result.answer
    assert "first to get `carrier_id`" in result.answer


def test_an_id_the_question_gives_is_neither_looked_up_nor_a_prerequisite(sample: Sample) -> None:
    result = ask(sample, "Create a shipment from location 4411")
    assert signatures(result)[0] == "POST /v2/shipments"
    assert "GET /v2/locations" not in signatures(result)
    assert "first to get `origin_location_id`" not in result.answer
    assert "first to get `carrier_id`" in result.answer


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("How do I train a neural network on a GPU cluster?", "neural network"),
        ("stream live video to a smart TV", "stream live"),
    ],
)
def test_things_far_from_the_api_abstain(sample: Sample, question: str, thing: str) -> None:
    # The learned answer model (trained on dev APIs) abstains where nothing in the API is near;
    # an unknown word alone is no reason to (dev questions use words their API never does).
    result = ask(sample, question)
    assert result.abstained
    assert result.endpoints == [] and result.examples == []
    assert "I could not find an endpoint" in result.answer and f"“{thing}" in result.answer
    assert "parcelroute-logistics-api" in result.answer
    assert result.alternatives
    existing = {f"{e.method} {e.path}" for e in sample.store.find_endpoints(CTX.project, limit=500)}
    assert all(alt.split(" — ")[0] in existing for alt in result.alternatives)


def test_guide_only_howto_goes_through_vectors_and_cites_the_guide(sample: Sample) -> None:
    result = ask(sample, "How do I verify webhook signatures?")
    assert not result.abstained
    assert result.route == FULL_ROUTE
    docs = [c for c in result.citations if c.kind == "doc"]
    assert docs and docs[0].uri.endswith("webhooks.md#verifying-the-signature")
    assert all(resolves(c) for c in result.citations)
    # Only graph endpoints are presented: no "verify webhook" endpoint exists.
    existing = {f"{e.method} {e.path}" for e in sample.store.find_endpoints(CTX.project, limit=500)}
    assert set(signatures(result)) <= existing


def test_checkpointed_thread_keeps_each_answers_route_its_own(sample: Sample) -> None:
    agent = build_agent(store=sample.store, vector_retriever=sample.retriever,
                        embeddings=sample.embeddings, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    first = run_agent(agent, "create a location", context=CTX, config=config)
    second = run_agent(agent, "What does POST /v2/quotes need?", context=CTX, config=config)
    assert first.route == FULL_ROUTE
    assert second.route == ["memory", "analyse", "knowledge_graph", "review", "compose"]
    assert set(second.timings_ms) == set(second.route) and second.notes == ["memory: none"]


async def test_async_run_matches_sync(sample: Sample) -> None:
    question = "register a courier"
    result = await arun_agent(sample.agent, question, context=CTX)
    assert result.answer == ask(sample, question).answer
