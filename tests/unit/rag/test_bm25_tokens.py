"""identifier_tokens and the BM25 retriever over in-memory documents."""

from __future__ import annotations

from langchain_core.documents import Document

from apiatlas.rag.retrieval.lexical import BM25Retriever, identifier_tokens, query_terms, singular


def test_path_template_splits_into_identifier_parts() -> None:
    assert identifier_tokens("/v2/locations/{location_id}") == [
        "v2",
        "locations",
        "location",
        "location_id",
        "location",
        "id",
    ]


def test_pascal_and_camel_case_give_parts_and_whole() -> None:
    assert set(identifier_tokens("CreateLocation")) == {"createlocation", "create", "location"}
    assert {"listcustomers", "list", "customers", "customer"} <= set(
        identifier_tokens("listCustomers")
    )
    assert {"http", "server"} <= set(identifier_tokens("HTTPServer"))


def test_snake_and_kebab_case_keep_whole_and_parts() -> None:
    assert identifier_tokens("merchant_id") == ["merchant_id", "merchant", "id"]
    assert identifier_tokens("Idempotency-Key") == ["idempotency-key", "idempotency", "key"]


def test_http_methods_survive_and_stop_words_go() -> None:
    tokens = identifier_tokens("What endpoints can I use to POST a location?")
    assert tokens == ["endpoints", "endpoint", "use", "post", "location"]
    assert identifier_tokens("GET the DELETE and PUT") == ["get", "delete", "put"]


def test_crude_singular_forms() -> None:
    assert singular("locations") == "location"
    assert singular("addresses") == "address"
    assert singular("categories") == "category"
    assert singular("status") == "status"
    assert singular("access") == "access"
    assert singular("v2") == "v2"


def _docs() -> list[Document]:
    return [
        Document(
            page_content="POST /v2/locations CreateLocation: creates a location.",
            metadata={"source": "square.yaml", "title": "Create location"},
            id="a",
        ),
        Document(
            page_content="GET /v2/customers ListCustomers: lists customer profiles.",
            metadata={"source": "square.yaml", "title": "List customers"},
            id="b",
        ),
        Document(
            page_content="DELETE /v2/customers/{customer_id} DeleteCustomer.",
            metadata={"source": "square.yaml", "title": "Delete customer"},
            id="c",
        ),
    ]


def test_bm25_ranks_identifier_match_first_with_score() -> None:
    retriever = BM25Retriever.from_documents(_docs(), k=2)
    found = retriever.invoke("CreateLocation")
    assert [d.id for d in found] == ["a"]
    assert found[0].metadata["score"] > 0
    customers = retriever.invoke("delete a customer")
    assert [d.id for d in customers] == ["c", "b"]


def test_bm25_returns_nothing_for_unknown_words() -> None:
    retriever = BM25Retriever.from_documents(_docs())
    assert retriever.invoke("quasar zeppelin") == []
    assert retriever.invoke("the of and") == []


def test_bm25_over_empty_corpus_returns_nothing() -> None:
    assert BM25Retriever.from_documents([]).invoke("locations") == []


def test_bm25_per_call_k_and_async() -> None:
    retriever = BM25Retriever.from_documents(_docs())
    assert len(retriever.invoke("v2", k=1)) == 1
    assert len(retriever.invoke("v2")) == 3


async def test_bm25_async_passes_k() -> None:
    retriever = BM25Retriever.from_documents(_docs())
    found = await retriever.ainvoke("customers", k=1)
    assert len(found) == 1 and found[0].id in {"b", "c"}


def test_coverage_tells_full_identifier_match_from_a_sliver() -> None:
    retriever = BM25Retriever.from_documents(_docs())
    exact = retriever.invoke("CreateLocation")
    assert exact[0].metadata["coverage"] == 1.0
    # Only "delete" is known; "facility" is unknown and weighs as the rarest possible word.
    sliver = retriever.invoke("delete a facility")
    assert [d.id for d in sliver] == ["c"]
    assert 0 < sliver[0].metadata["coverage"] < 0.5


def test_query_terms_pair_words_with_their_singular() -> None:
    assert query_terms("list locations, locations") == [("list",), ("locations", "location")]


def test_the_detail_of_a_compact_document_is_searchable() -> None:
    card = Document(
        page_content="POST /v2/locations\nOperation: CreateLocation",
        metadata={"title": "POST /v2/locations", "detail": "- timezone (string, optional)"},
        id="p:1",
    )
    other = Document(page_content="GET /v2/customers\nOperation: ListCustomers", id="p:2")
    found = BM25Retriever.from_documents([card, other], k=2).invoke("timezone")
    assert [d.id for d in found] == ["p:1"]
