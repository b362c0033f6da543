"""VectorIndex on a real PostgreSQL + pgvector, the record manager in the same database.

The same behaviours as ``test_vectors_index.py`` checks on Chroma, with the real MiniLM model,
plus what is specific to Postgres: the table's shape and indexes, dimension checks and errors.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_postgres import PGVectorStore

from apiatlas.config import Settings
from tests.integration.rag.endpoint_cards import cards as cards_of
from tests.integration.rag.endpoint_cards import check_card_vectors
from apiatlas.errors import ConfigError, StoreError
from apiatlas.rag.runtime.embeddings import LOCAL_DIMENSIONS, load_embeddings
from apiatlas.rag.retrieval.fusion import HybridRetriever
from apiatlas.rag.retrieval.pgvector import (
    IterativeHNSWQueryOptions,
    describe,
    libpq_conninfo,
    normalise_url,
    open_pg_vector_store,
    pg_engine,
    pg_filter,
    record_manager_url,
)
from apiatlas.rag.retrieval.dense import VectorIndex, load_corpus, open_vector_store
from apiatlas.rag.retrieval.dense import record_manager_url as settings_record_manager_url

# (api, method, path, operationId, summary): see endpoint_cards.Row.
CARDS = [
    ("square", "POST", "/v2/locations", "CreateLocation", "Creates a location."),
    ("square", "GET", "/v2/locations", "ListLocations", "Lists all locations of a seller."),
    ("square", "PUT", "/v2/locations/{location_id}", "UpdateLocation", "Updates a location."),
    ("square", "POST", "/v2/customers", "CreateCustomer", "Creates a customer profile."),
    ("square", "POST", "/v2/payments", "CreatePayment", "Charges a payment source."),
    ("square", "POST", "/v2/refunds", "RefundPayment", "Refunds a payment."),
    ("lob", "POST", "/addresses", "address_create", "Creates an address."),
    ("lob", "POST", "/postcards", "postcard_create", "Creates and mails a postcard."),
    ("lob", "POST", "/letters", "letter_create", "Creates and mails a letter."),
    ("lob", "POST", "/checks", "check_create", "Prints and mails a check."),
]
N = len(CARDS)
SOURCES = ["/specs/square.yaml", "/specs/lob.yaml"]

COLUMN_TYPES = (
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %(t)s"
)
INDEX_DEFS = "SELECT indexdef FROM pg_indexes WHERE tablename = %(t)s"
RECORD_COUNT = "SELECT count(*) FROM upsertion_record WHERE namespace = %(ns)s"






def paths(store: PGVectorStore, project: str, api: str | None = None) -> list[str]:
    docs = load_corpus(store, project=project, api=api)
    return sorted(f"{d.metadata['method']} {d.metadata['path']}" for d in docs)


def query(pg_url: str, sql: str, params: dict[str, str]) -> list[tuple[object, ...]]:
    with psycopg.connect(libpq_conninfo(pg_url)) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture
def table(pg_url: str) -> Iterator[str]:
    # Unique per test and run: a DATABASE_URL server keeps its tables between sessions.
    name = f"pgindex_{uuid.uuid4().hex[:12]}"
    yield name
    pg_engine(pg_url).drop_table(name)


@pytest.fixture
def vindex(pg_url: str, table: str, embeddings: Embeddings) -> VectorIndex:
    store = open_pg_vector_store(pg_url, embeddings, table=table)
    return VectorIndex(store, record_manager_url(pg_url), namespace=table)


def test_table_has_text_ids_json_metadata_and_indexes(
    pg_url: str, table: str, embeddings: Embeddings
) -> None:
    first = open_pg_vector_store(pg_url, embeddings, table=table)
    again = open_pg_vector_store(pg_url, embeddings, table=table, vector_size=LOCAL_DIMENSIONS)
    assert again.get_table_name() == first.get_table_name() == table
    columns = dict(query(pg_url, COLUMN_TYPES, {"t": table}))
    assert columns["langchain_id"] == "text"
    assert columns["langchain_metadata"] == "json"
    assert set(columns) == {"langchain_id", "content", "embedding", "langchain_metadata"}
    indexes = [row[0] for row in query(pg_url, INDEX_DEFS, {"t": table})]
    assert any("USING hnsw" in d and "vector_cosine_ops" in d for d in indexes)
    for key in ("project", "api", "kind", "source"):
        assert any(f"->> '{key}'" in d for d in indexes), key


def test_settings_select_pgvector_and_its_record_manager(embeddings: Embeddings) -> None:
    url = "postgresql://apiatlas:pw@db.internal:5433/atlas"
    settings = Settings(vectors="pgvector", database_url=url)
    expected = "postgresql+psycopg://apiatlas:pw@db.internal:5433/atlas"
    assert settings_record_manager_url(settings) == expected
    with pytest.raises(ConfigError, match="DATABASE_URL"):
        open_vector_store(Settings(vectors="pgvector"), embeddings)


def test_url_forms_messages_and_search_settings() -> None:
    for form in ("postgres", "postgresql", "postgresql+asyncpg", "postgresql+psycopg"):
        url = normalise_url(f"{form}://me:pw@db.example:5433/atlas?sslmode=require")
        assert url.drivername == "postgresql+psycopg"
        assert describe(url) == "PostgreSQL at db.example:5433/atlas"
    assert describe(normalise_url("postgresql://postgres:@/postgres?host=/run/pg")) == (
        "PostgreSQL at /run/pg/postgres"
    )
    conninfo = libpq_conninfo("postgresql://me:pw@db.example/atlas?sslmode=require")
    assert "sslmode=require" in conninfo and "dbname=atlas" in conninfo
    assert IterativeHNSWQueryOptions().to_parameter() == [
        "hnsw.ef_search = 100",
        "hnsw.iterative_scan = strict_order",
    ]
    assert IterativeHNSWQueryOptions(iterative=False).to_parameter() == ["hnsw.ef_search = 100"]


def test_a_small_project_in_a_large_table_gets_k_results(pg_url: str, table: str) -> None:
    fake = DeterministicFakeEmbedding(size=16)
    store = open_pg_vector_store(pg_url, fake, table=table)
    texts = [f"endpoint number {i}" for i in range(600)]
    store.add_embeddings(
        texts,
        fake.embed_documents(texts),
        metadatas=[{"project": "small" if i % 100 == 0 else "big"} for i in range(600)],
        ids=[f"doc-{i}" for i in range(600)],
    )
    found = store.similarity_search("endpoint number 7", k=5, filter=pg_filter("small"))
    assert len(found) == 5
    assert {d.metadata["project"] for d in found} == {"small"}
    assert len(load_corpus(store, project="small")) == 6


def test_wrong_dimension_bad_names_and_unreachable_servers_are_explained(
    pg_url: str, table: str, embeddings: Embeddings
) -> None:
    open_pg_vector_store(pg_url, embeddings, table=table)
    with pytest.raises(ConfigError, match="holds 384-dimensional vectors but .* gives 8"):
        open_pg_vector_store(pg_url, embeddings, table=table, vector_size=8)
    with pytest.raises(ConfigError, match="not allowed"):
        open_pg_vector_store(pg_url, embeddings, table='x"; DROP TABLE y; --')
    with pytest.raises(ConfigError, match="PostgreSQL URL"):
        open_pg_vector_store("mysql://u:p@127.0.0.1/db", embeddings)
    # Port 1 on loopback refuses at once: the message names where, never the password.
    down = "postgresql://apiatlas:s3cret-pw@127.0.0.1:1/vectors"
    with pytest.raises(StoreError, match=r"(?s)127\.0\.0\.1:1/vectors.*Is the server up") as caught:
        open_pg_vector_store(down, embeddings, vector_size=LOCAL_DIMENSIONS)
    assert "s3cret-pw" not in str(caught.value)
    with pytest.raises(StoreError, match="record manager") as caught:
        VectorIndex(open_pg_vector_store(pg_url, embeddings, table=table), record_manager_url(down))
    assert "s3cret-pw" not in str(caught.value)


def test_reindex_skips_replaces_and_deletes(pg_url: str, vindex: VectorIndex) -> None:
    store = vindex.vector_store
    assert isinstance(store, PGVectorStore)
    first = vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    assert (first.num_added, first.num_skipped, first.num_deleted) == (N, 0, 0)
    stored = load_corpus(store, project="a")
    # Content-hash ids from the indexing API, in the TEXT id column, in a stable order.
    assert all(len(d.id or "") == 64 for d in stored)
    assert [d.id for d in stored] == [d.id for d in load_corpus(store, project="a")]
    # The record manager's rows are in the same database as the vectors.
    assert query(pg_url, RECORD_COUNT, {"ns": vindex.record_manager.namespace}) == [(N,)]

    again = vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    assert (again.num_added, again.num_skipped, again.num_deleted) == (0, N, 0)
    assert not again.changed

    changed = cards_of("a", CARDS)
    changed[0].page_content += "\nA location is a physical store."
    stats = vindex.index(changed, project="a", sources=SOURCES)
    assert (stats.num_added, stats.num_deleted, stats.num_skipped) == (1, 1, N - 1)
    stored = load_corpus(store, project="a")
    assert len(stored) == N
    assert any("physical store" in d.page_content for d in stored)

    fewer = [d for d in changed if d.metadata["path"] != "/checks"]
    stats = vindex.index(fewer, project="a", sources=SOURCES)
    assert (stats.num_added, stats.num_deleted) == (0, 1)
    assert "POST /checks" not in paths(store, "a")
    hits = store.similarity_search("print and mail a check", k=N)
    assert len(hits) == N - 1
    assert all(d.metadata["path"] != "/checks" for d in hits)


def test_source_with_no_documents_left_is_emptied(vindex: VectorIndex) -> None:
    store = vindex.vector_store
    assert isinstance(store, PGVectorStore)
    vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    square_only = [d for d in cards_of("a", CARDS) if d.metadata["api"] == "square"]
    stats = vindex.index(square_only, project="a", sources=SOURCES)
    lob_count = N - len(square_only)
    assert (stats.num_added, stats.num_deleted) == (0, lob_count)
    assert stats.num_skipped == len(square_only)
    assert paths(store, "a", "lob") == []
    assert len(paths(store, "a", "square")) == len(square_only)
    assert vindex.record_manager.list_keys(group_ids=["a|/specs/lob.yaml"]) == []

    emptied = vindex.index([], project="a", sources=["/specs/square.yaml"])
    assert emptied.num_deleted == len(square_only)
    assert paths(store, "a") == []


def test_card_head_vectors_are_read_back_per_project_and_api(
    vindex: VectorIndex, embeddings: Embeddings
) -> None:
    check_card_vectors(vindex, embeddings, CARDS)


def test_projects_are_isolated_in_the_index_bm25_and_hybrid(vindex: VectorIndex) -> None:
    store = vindex.vector_store
    assert isinstance(store, PGVectorStore)
    vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    into_b = vindex.index(cards_of("b", CARDS)[:3], project="b", sources=SOURCES)
    # Same text, other project: its own records, nothing of project a is skipped or deleted.
    assert (into_b.num_added, into_b.num_deleted) == (3, 0)
    assert len(paths(store, "a")) == N
    assert paths(store, "b") == [
        "GET /v2/locations",
        "POST /v2/locations",
        "PUT /v2/locations/{location_id}",
    ]

    retriever = HybridRetriever(vector_store=store, project="b", k=N)
    for strategy in ("bm25", "dense", "hybrid"):
        found = retriever.invoke("create a location", strategy=strategy)
        assert found and {d.metadata["project"] for d in found} == {"b"}, strategy
        assert len(found) <= 3
    top = retriever.invoke("CreateLocation")[0]
    assert (top.metadata["path"], top.metadata["bm25_rank"]) == ("/v2/locations", 1)
    assert -1.0 <= top.metadata["dense_score"] <= 1.0
    lob = retriever.invoke("mail a letter", project="a", api="lob", k=2)
    assert [d.metadata["path"] for d in lob][:1] == ["/letters"]
    assert {d.metadata["api"] for d in lob} == {"lob"}
    assert retriever.invoke("CreateLocation", project="nobody") == []

    cleared = vindex.index([], project="b", sources=SOURCES)
    assert cleared.num_deleted == 3
    assert paths(store, "b") == []
    assert len(paths(store, "a")) == N
    retriever.refresh()
    assert retriever.invoke("create a location") == []
