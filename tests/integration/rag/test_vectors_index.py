"""VectorIndex over real Chroma files, the real MiniLM model and a real SQLite record manager."""

from __future__ import annotations

import sys
from pathlib import Path

import chromadb
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from tests.integration.rag.endpoint_cards import cards as cards_of
from tests.integration.rag.endpoint_cards import check_card_vectors
from apiatlas.errors import UsageError
from apiatlas.extras import MissingExtraError
from apiatlas.rag.runtime.embeddings import (
    LOCAL_DIMENSIONS,
    LOCAL_MAX_TOKENS,
    load_embeddings,
    local_tokenizer,
)
from apiatlas.rag.retrieval import dense
from apiatlas.rag.retrieval.dense import VectorIndex, load_corpus, open_vector_store

# (api, method, path, operationId, summary): see endpoint_cards.Row.
CARDS = [
    ("square", "POST", "/v2/locations", "CreateLocation", "Creates a location."),
    ("square", "GET", "/v2/locations", "ListLocations", "Lists all locations of a seller."),
    ("square", "GET", "/v2/locations/{location_id}", "RetrieveLocation", "Retrieves a location."),
    ("square", "PUT", "/v2/locations/{location_id}", "UpdateLocation", "Updates a location."),
    ("square", "POST", "/v2/customers", "CreateCustomer", "Creates a customer profile."),
    ("square", "GET", "/v2/customers", "ListCustomers", "Lists customer profiles."),
    ("square", "DELETE", "/v2/customers/{customer_id}", "DeleteCustomer", "Deletes a customer."),
    ("square", "POST", "/v2/payments", "CreatePayment", "Charges a payment source."),
    ("square", "GET", "/v2/payments/{payment_id}", "GetPayment", "Retrieves a payment."),
    ("square", "POST", "/v2/refunds", "RefundPayment", "Refunds a payment."),
    ("square", "POST", "/v2/orders", "CreateOrder", "Creates an order."),
    ("square", "POST", "/v2/catalog/object", "UpsertCatalogObject", "Creates or updates an item."),
    ("lob", "POST", "/addresses", "address_create", "Creates an address."),
    ("lob", "GET", "/addresses", "addresses_list", "Lists addresses."),
    ("lob", "DELETE", "/addresses/{adr_id}", "address_delete", "Deletes an address."),
    ("lob", "POST", "/postcards", "postcard_create", "Creates and mails a postcard."),
    ("lob", "GET", "/postcards/{psc_id}", "postcard_retrieve", "Retrieves a postcard."),
    ("lob", "POST", "/letters", "letter_create", "Creates and mails a letter."),
    ("lob", "POST", "/checks", "check_create", "Prints and mails a check."),
    ("lob", "POST", "/us_verifications", "us_verification", "Verifies a US address."),
    ("lob", "GET", "/templates", "templates_list", "Lists HTML templates."),
    ("lob", "POST", "/webhooks", "webhook_create", "Creates a webhook subscription."),
]
N = len(CARDS)






SOURCES = ["/specs/square.yaml", "/specs/lob.yaml"]


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def vindex(settings: Settings, embeddings: Embeddings) -> VectorIndex:
    store = open_vector_store(settings, embeddings)
    return VectorIndex(store, settings.record_manager_url)


def paths(vindex: VectorIndex, project: str, api: str | None = None) -> list[str]:
    docs = load_corpus(vindex.vector_store, project=project, api=api)
    return sorted(f"{d.metadata['method']} {d.metadata['path']}" for d in docs)


def test_local_model_shape_and_tokenizer(embeddings: Embeddings) -> None:
    assert load_embeddings(Settings()) is embeddings
    vector = embeddings.embed_query("create a location")
    assert len(vector) == LOCAL_DIMENSIONS
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-4)
    assert local_tokenizer().encode("locations", add_special_tokens=False).tokens == ["locations"]
    assert LOCAL_MAX_TOKENS == 256


def test_reindex_skips_replaces_and_deletes(vindex: VectorIndex) -> None:
    first = vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    assert (first.num_added, first.num_skipped, first.num_deleted) == (N, 0, 0)

    again = vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    assert (again.num_added, again.num_skipped, again.num_deleted) == (0, N, 0)
    assert not again.changed

    changed = cards_of("a", CARDS)
    changed[0].page_content += "\nA location is a physical store."
    stats = vindex.index(changed, project="a", sources=SOURCES)
    assert (stats.num_added, stats.num_deleted, stats.num_skipped) == (1, 1, N - 1)
    stored = load_corpus(vindex.vector_store, project="a")
    assert len(stored) == N
    assert any("physical store" in d.page_content for d in stored)

    fewer = [d for d in changed if d.metadata["path"] != "/checks"]
    stats = vindex.index(fewer, project="a", sources=SOURCES)
    assert (stats.num_added, stats.num_deleted) == (0, 1)
    assert "POST /checks" not in paths(vindex, "a")
    hits = vindex.vector_store.similarity_search("print and mail a check", k=N)
    assert all(d.metadata["path"] != "/checks" for d in hits)


def test_source_with_no_documents_left_is_emptied(vindex: VectorIndex) -> None:
    vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    square_only = [d for d in cards_of("a", CARDS) if d.metadata["api"] == "square"]
    stats = vindex.index(square_only, project="a", sources=SOURCES)
    lob_count = N - len(square_only)
    assert (stats.num_added, stats.num_deleted) == (0, lob_count)
    assert stats.num_skipped == len(square_only)
    assert paths(vindex, "a", "lob") == []
    assert len(paths(vindex, "a", "square")) == len(square_only)
    assert vindex.record_manager.list_keys(group_ids=["a|/specs/lob.yaml"]) == []

    emptied = vindex.index([], project="a", sources=["/specs/square.yaml"])
    assert emptied.num_deleted == len(square_only)
    assert paths(vindex, "a") == []


def test_card_head_vectors_are_read_back_per_project_and_api(
    vindex: VectorIndex, embeddings: Embeddings
) -> None:
    check_card_vectors(vindex, embeddings, CARDS)


def test_projects_are_isolated(vindex: VectorIndex) -> None:
    vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    into_b = vindex.index(cards_of("b", CARDS)[:3], project="b", sources=SOURCES)
    # Same text, other project: its own records, nothing of project a is skipped or deleted.
    assert (into_b.num_added, into_b.num_deleted) == (3, 0)
    assert len(paths(vindex, "a")) == N
    assert len(paths(vindex, "b")) == 3

    cleared = vindex.index([], project="b", sources=SOURCES)
    assert cleared.num_deleted == 3
    assert paths(vindex, "b") == []
    assert len(paths(vindex, "a")) == N


def test_reopening_from_disk_keeps_everything(settings: Settings, embeddings: Embeddings) -> None:
    settings.ensure_home()
    first = VectorIndex(open_vector_store(settings, embeddings), settings.record_manager_url)
    first.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    # Drop Chroma's in-process client cache so the reopened store really reads the files.
    chromadb.api.client.SharedSystemClient.clear_system_cache()

    reopened = VectorIndex(open_vector_store(settings, embeddings), settings.record_manager_url)
    assert len(paths(reopened, "a")) == N
    stats = reopened.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    assert (stats.num_added, stats.num_skipped, stats.num_deleted) == (0, N, 0)
    top = reopened.vector_store.similarity_search("add a store location", k=1)
    assert top[0].metadata["project"] == "a"


class _Upgraded(Embeddings):
    """The same vectors under another model's name, as after a model upgrade of equal size."""

    model_id = "minilm-upgraded"

    def __init__(self, inner: Embeddings) -> None:
        self.vectors = inner
        self.embedded = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return self.vectors.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.vectors.embed_query(text)


def test_another_embedding_model_embeds_every_document_again(
    settings: Settings, embeddings: Embeddings
) -> None:
    settings.ensure_home()
    first = VectorIndex(open_vector_store(settings, embeddings), settings.record_manager_url)
    first.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    chromadb.api.client.SharedSystemClient.clear_system_cache()

    upgraded = _Upgraded(embeddings)
    reopened = VectorIndex(open_vector_store(settings, upgraded), settings.record_manager_url)
    stats = reopened.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    # No vector of the old model is kept beside the new ones.
    assert (stats.num_added, stats.num_skipped, stats.num_deleted) == (N, 0, N)
    assert upgraded.embedded == N
    stored = load_corpus(reopened.vector_store, project="a")
    assert {d.metadata["embedding_model"] for d in stored} == {"minilm-upgraded"}
    assert len(stored) == N


def test_documents_must_name_their_source_and_project(vindex: VectorIndex) -> None:
    nameless = Document(page_content="GET /x", metadata={"project": "a"})
    with pytest.raises(UsageError, match="source"):
        vindex.index([nameless], project="a", sources=[])
    with pytest.raises(UsageError, match="project"):
        vindex.index(cards_of("b", CARDS)[:1], project="a", sources=SOURCES)
    assert paths(vindex, "a") == []


def test_openai_without_the_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # as when it is not installed
    with pytest.raises(MissingExtraError, match=r"apiatlas\[openai\]"):
        load_embeddings(Settings(embeddings="openai"))


def test_reads_in_pages_and_a_checkpoint_puts_the_groups_back(
    vindex: VectorIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages of 5: Chroma refuses one statement naming more than 32,766 records, so a project
    # of that many documents is read in pages (here 22 documents in five of them).
    monkeypatch.setattr(dense, "PAGE", 5)
    vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    vindex.index(cards_of("b", CARDS[:3]), project="b", sources=SOURCES[:1])
    assert len(load_corpus(vindex.vector_store, project="a")) == N
    before = sorted((d.id, d.page_content) for d in load_corpus(vindex.vector_store, project="a"))
    saved = vindex.checkpoint("a", SOURCES)
    assert len(saved.documents) == N
    keys = sorted(vindex.record_manager.list_keys(group_ids=list(saved.groups)))

    changed = [d for d in cards_of("a", CARDS) if d.metadata["api"] == "square"]
    changed[0].page_content += "\nA location is a physical store."
    vindex.index(changed, project="a", sources=SOURCES)  # one changed, the lob cards gone
    assert sorted((d.id, d.page_content)
                  for d in load_corpus(vindex.vector_store, project="a")) != before

    vindex.restore(saved)
    assert sorted((d.id, d.page_content)
                  for d in load_corpus(vindex.vector_store, project="a")) == before
    assert sorted(vindex.record_manager.list_keys(group_ids=list(saved.groups))) == keys
    assert len(load_corpus(vindex.vector_store, project="b")) == 3  # another project untouched
    again = vindex.index(cards_of("a", CARDS), project="a", sources=SOURCES)
    assert (again.num_added, again.num_skipped, again.num_deleted) == (0, N, 0)
