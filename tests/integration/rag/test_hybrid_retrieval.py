"""HybridRetriever over real Chroma and real pgvector stores indexed with the real MiniLM model."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from tests.integration.rag.endpoint_cards import card
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.retrieval.fusion import HybridRetriever
from apiatlas.rag.retrieval.pgvector import open_pg_vector_store, pg_engine, record_manager_url
from apiatlas.rag.retrieval.dense import VectorIndex, open_vector_store

SQUARE = "/specs/square.yaml"
LOB = "/specs/lob.yaml"

# (api, method, path, operationId, description): endpoint cards written like the card builder's.
CARDS = [
    ("square", "POST", "/v2/locations", "CreateLocation",
     "Creates a location. Locations are physical stores or sites where a seller does business."),
    ("square", "GET", "/v2/locations", "ListLocations",
     "Provides details about all of the seller's locations."),
    ("square", "GET", "/v2/locations/{location_id}", "RetrieveLocation",
     "Retrieves details of a single location by its id."),
    ("square", "PUT", "/v2/locations/{location_id}", "UpdateLocation",
     "Updates a location: its name, address and business hours."),
    ("square", "POST", "/v2/customers", "CreateCustomer",
     "Creates a new customer for a business, with name, email and phone number."),
    ("square", "GET", "/v2/customers", "ListCustomers", "Lists customer profiles of a business."),
    ("square", "DELETE", "/v2/customers/{customer_id}", "DeleteCustomer",
     "Deletes a customer profile from a business."),
    ("square", "POST", "/v2/payments", "CreatePayment",
     "Creates a payment using the provided source, such as a card nonce."),
    ("square", "POST", "/v2/payments/{payment_id}/cancel", "CancelPayment",
     "Cancels (voids) a payment that is not yet completed."),
    ("square", "POST", "/v2/refunds", "RefundPayment", "Refunds a payment, in full or in part."),
    ("square", "POST", "/v2/orders", "CreateOrder",
     "Creates a new order with line items, taxes and discounts."),
    ("square", "POST", "/v2/catalog/object", "UpsertCatalogObject",
     "Creates a new or updates an existing catalog item, variation or category."),
    ("square", "POST", "/v2/team-members", "CreateTeamMember", "Creates a new team member."),
    ("square", "POST", "/v2/invoices", "CreateInvoice", "Creates a draft invoice for an order."),
    ("lob", "POST", "/addresses", "address_create", "Creates a new address given information."),
    ("lob", "GET", "/addresses", "addresses_list", "Returns a list of your saved addresses."),
    ("lob", "DELETE", "/addresses/{adr_id}", "address_delete", "Deletes the address."),
    ("lob", "POST", "/postcards", "postcard_create", "Creates a new postcard and mails it."),
    ("lob", "POST", "/letters", "letter_create", "Creates a new letter to be printed and mailed."),
    ("lob", "POST", "/checks", "check_create", "Creates a new check to be printed and mailed."),
    ("lob", "POST", "/us_verifications", "us_verification",
     "Validates a US address and corrects it for mail deliverability."),
    ("lob", "POST", "/webhooks", "webhook_create",
     "Creates a webhook to be notified of tracking events."),
]




def signature(doc: Document) -> str:
    return f"{doc.metadata['method']} {doc.metadata['path']}"


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module", params=["chroma", "pgvector"])
def indexed(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embeddings: Embeddings,
) -> Iterator[VectorIndex]:
    """The same cards indexed on each backend: every test here runs on Chroma and on pgvector."""
    table = f"hybrid_{uuid.uuid4().hex[:12]}"
    if request.param == "pgvector":
        pg_url = request.getfixturevalue("pg_url")
        store = open_pg_vector_store(pg_url, embeddings, table=table)
        vindex = VectorIndex(store, record_manager_url(pg_url), namespace=table)
    else:
        settings = Settings(home=Path(tmp_path_factory.mktemp("hybrid")))
        vindex = VectorIndex(open_vector_store(settings, embeddings), settings.record_manager_url)
    vindex.index([card("a", *row) for row in CARDS], project="a", sources=[SQUARE, LOB])
    widgets = card("b", "acme", "POST", "/v1/widgets", "CreateWidget", "Creates a widget.")
    widgets.metadata["source"] = "/specs/acme.yaml"
    vindex.index([widgets], project="b", sources=["/specs/acme.yaml"])
    yield vindex
    if request.param == "pgvector":
        pg_engine(request.getfixturevalue("pg_url")).drop_table(table)


@pytest.fixture
def retriever(indexed: VectorIndex) -> HybridRetriever:
    return HybridRetriever(vector_store=indexed.vector_store, project="a", k=5)


def test_dense_half_finds_a_paraphrase_bm25_misses(retriever: HybridRetriever) -> None:
    query = "add a new facility"
    keyword_only = [signature(d) for d in retriever.invoke(query, strategy="bm25")]
    assert "POST /v2/locations" not in keyword_only[:3]
    found = retriever.invoke(query)
    assert signature(found[0]) == "POST /v2/locations"
    assert found[0].metadata["dense_rank"] == 1
    assert found[0].metadata["bm25_rank"] is None


def test_bm25_half_votes_for_an_exact_operation_id(retriever: HybridRetriever) -> None:
    found = retriever.invoke("CreateLocation")
    top = found[0]
    assert signature(top) == "POST /v2/locations"
    assert top.metadata["bm25_rank"] == 1
    # A full keyword match is an equal vote: the score is more than the dense rank alone gives.
    assert top.metadata["rrf_score"] > 1 / (60 + top.metadata["dense_rank"])
    assert top.metadata["bm25_score"] > 0
    assert -1.0 <= top.metadata["dense_score"] <= 1.0


def test_result_metadata_and_k(retriever: HybridRetriever) -> None:
    found = retriever.invoke("what endpoints can I use to create a location?")
    assert len(found) == 5
    assert signature(found[0]) == "POST /v2/locations"
    scores = [d.metadata["rrf_score"] for d in found]
    assert scores == sorted(scores, reverse=True)
    for doc in found:
        assert {"rrf_score", "bm25_rank", "dense_rank", "bm25_score", "dense_score"} <= set(
            doc.metadata
        )
        assert doc.metadata["project"] == "a"
        assert "score" not in doc.metadata and "coverage" not in doc.metadata


def test_projects_are_isolated_in_every_strategy(retriever: HybridRetriever) -> None:
    assert retriever.invoke("store locations", project="b", strategy="bm25") == []
    for strategy in ("dense", "hybrid"):
        found = retriever.invoke("store locations", project="b", strategy=strategy)
        assert [signature(d) for d in found] == ["POST /v1/widgets"]
    assert retriever.invoke("CreateLocation", project="nobody") == []
    assert all(d.metadata["project"] == "a" for d in retriever.invoke("widget", k=30))


def test_per_call_api_and_k_overrides(retriever: HybridRetriever) -> None:
    found = retriever.invoke("create", api="lob", k=3)
    assert len(found) == 3
    assert {d.metadata["api"] for d in found} == {"lob"}
    assert {d.metadata["api"] for d in retriever.invoke("create", k=30)} == {"lob", "square"}


async def test_async_invoke_passes_overrides(retriever: HybridRetriever) -> None:
    found = await retriever.ainvoke("void a payment", api="square", k=2)
    assert len(found) == 2
    assert signature(found[0]) == "POST /v2/payments/{payment_id}/cancel"


def test_refresh_makes_new_documents_visible_to_bm25(indexed: VectorIndex) -> None:
    retriever = HybridRetriever(vector_store=indexed.vector_store, project="c", strategy="bm25")
    assert retriever.invoke("RotateKeys") == []
    rotate = card("c", "vault", "POST", "/v1/keys/rotate", "RotateKeys", "Rotates the keys.")
    indexed.index([rotate], project="c", sources=[rotate.metadata["source"]])
    # The BM25 index is cached per project until refresh(): that is what keeps queries cheap.
    assert retriever.invoke("RotateKeys") == []
    retriever.refresh()
    assert [signature(d) for d in retriever.invoke("RotateKeys")] == ["POST /v1/keys/rotate"]
