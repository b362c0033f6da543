"""The embedded and the Neo4j store give the same answers for the same ingested specs.

Each dataset is ingested through ``ingest_graph`` into a fresh SQLite file and into the
session's Neo4j; then searches (ranked, with scores), endpoint listings, dependency trails and
endpoint details must be identical, on the sample API and on real third-party specs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.neo4j.store import Neo4jGraphStore
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.models import ApiSpec, DocPage
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.agent.graph import arun_agent
from apiatlas.rag.agent.context import AgentContext
from apiatlas.sample import sample_guides_dir, sample_spec_path

SAMPLE_QUESTIONS = [
    "What endpoints can I use to create a location?", "how do I book a shipment", "list carriers",
    "cancel a shipment", "tracking events", "update a location", "delete", "webhooks",
]  # fmt: skip
SQUARE_QUESTIONS = [
    "create a location", "list customers", "refund a payment", "create an invoice", "cancel order",
    "search catalog items", "gift card activity", "loyalty points", "batch retrieve orders",
    "team member wages", "terminal checkout", "webhook subscriptions",
]  # fmt: skip
ADOBE_QUESTIONS = [
    "create inventory source", "list products", "delete a coupon", "customer group", "tax rates",
    "shipment tracking", "cart totals", "credit memo", "stock items", "sales rules",
    'quote" OR NOT (items*)',
]  # fmt: skip


@pytest.fixture
def stores(neo4j_settings: Settings, tmp_path: Path) -> Iterator[tuple[SqliteGraphStore, Neo4jGraphStore]]:
    s = neo4j_settings
    neo = Neo4jGraphStore(s.neo4j_uri, s.neo4j_username, s.neo4j_password, database=s.neo4j_database)
    lite = SqliteGraphStore(tmp_path / "g.sqlite")
    neo.delete_project("parity")
    yield lite, neo
    neo.delete_project("parity")
    neo.close()
    lite.close()


def _ingest(
    stores: tuple[SqliteGraphStore, Neo4jGraphStore],
    specs: Sequence[ApiSpec],
    docs: Mapping[str, list[DocPage]] | None = None,
) -> None:
    summaries = [ingest_graph(store, "parity", specs=specs, docs=docs) for store in stores]
    assert summaries[0] == summaries[1]


def _assert_same_answers(
    lite: KnowledgeGraphStore, neo: KnowledgeGraphStore, questions: Sequence[str], *, every: int = 1
) -> None:
    p = "parity"
    assert lite.stats(p) == neo.stats(p) and lite.scopes(p) == neo.scopes(p)
    assert lite.resources(p) == neo.resources(p)
    for question in questions:
        expected = lite.search(p, question)
        assert neo.search(p, question) == expected, question
    apis = lite.stats(p).apis
    for api in apis:
        assert neo.search(p, questions[0], api=api, limit=5) == lite.search(p, questions[0], api=api, limit=5)
    for resource in lite.resources(p):
        for kind in (None, "create"):
            found = lite.find_endpoints(p, resource=resource.key, kind=kind)
            assert neo.find_endpoints(p, resource=resource.key, kind=kind) == found, resource.key
    endpoints = lite.find_endpoints(p, limit=-1)
    assert neo.find_endpoints(p, limit=-1) == endpoints
    for endpoint in endpoints[::every]:
        assert neo.get_endpoint(p, endpoint.key) == lite.get_endpoint(p, endpoint.key), endpoint.key
        assert neo.dependency_trail(p, endpoint.key) == lite.dependency_trail(p, endpoint.key), endpoint.key


def test_sample_api_parity(stores: tuple[SqliteGraphStore, Neo4jGraphStore]) -> None:
    specs = load_openapi(sample_spec_path())
    _ingest(stores, specs, {"guides": load_docs(sample_guides_dir())})
    _assert_same_answers(*stores, SAMPLE_QUESTIONS)
    # A changed summary moves both rankings the same way.
    changed = [specs[0].model_copy(update={"endpoints": [
        e.model_copy(update={"summary": "Enumerate hauliers"}) if e.key == "GET /v2/carriers" else e
        for e in specs[0].endpoints
    ]})]  # fmt: skip
    _ingest(stores, changed)
    _assert_same_answers(*stores, [*SAMPLE_QUESTIONS, "hauliers"])


async def test_async_agent_on_neo4j_answers_as_the_sync_agent_on_sqlite(
    stores: tuple[SqliteGraphStore, Neo4jGraphStore], tmp_path: Path
) -> None:
    lite, neo = stores
    settings = Settings(home=tmp_path / "home", project="parity")
    sources = {"openapi": [sample_spec_path()], "docs": [sample_guides_dir()]}
    embedded = ApiAtlas(settings, graph_store=lite)
    embedded.ingest(**sources)
    # The same vectors; only the graph differs, and the Neo4j agent runs async.
    production = ApiAtlas(settings, graph_store=neo, embeddings=embedded.embeddings,
                          vector_store=embedded.vector_store)
    production.ingest(**sources)
    for question in SAMPLE_QUESTIONS[:5]:
        expected = embedded.ask(question)
        got = await arun_agent(production.agent, question, context=AgentContext(project="parity"))
        assert got.answer == expected.answer, question
        assert got.route == expected.route, question
    await neo.aclose()


@pytest.mark.shared_data
def test_square_parity(stores: tuple[SqliteGraphStore, Neo4jGraphStore], shared_data: Path) -> None:
    _ingest(stores, load_openapi(shared_data / "square" / "spec" / "api.json"))
    _assert_same_answers(*stores, SQUARE_QUESTIONS, every=6)


@pytest.mark.shared_data
def test_adobe_admin_parity(stores: tuple[SqliteGraphStore, Neo4jGraphStore], shared_data: Path) -> None:
    root = shared_data / "adobe-commerce"
    spec = load_openapi(root / "spec" / "src" / "openapi" / "admin-schema-2.4.8.yaml")
    _ingest(stores, spec, {"adobe": load_docs(root / "docs" / "src" / "pages")})
    _assert_same_answers(*stores, ADOBE_QUESTIONS, every=12)
