"""The per-field lexical index: the spec's own words, field by field, from a real graph build."""

from __future__ import annotations

import math

import numpy as np
import pytest

from apiatlas.graph.model import Node
from apiatlas.rag.ranking.fields import (
    ABOUT_CHARS,
    FIELDS,
    FieldIndex,
    _doc_titles,
    dense_texts,
    name_text,
    terms,
)


def endpoint(key: str, method: str, path: str, **props: object) -> Node:
    return Node(key=key, label="Endpoint", props={"method": method, "path": path, **props})


def index(docs: dict[str, list[str]]) -> FieldIndex:
    keys = list(docs)
    from apiatlas.graph.model import EndpointRef

    refs = [EndpointRef(key=k, api="a", method="GET", path=f"/{k}") for k in keys]
    fields = {name: [terms(docs[k][i]) if i < len(docs[k]) else [] for k in keys]
              for i, name in enumerate(FIELDS)}
    return FieldIndex(endpoints=refs, fields=fields, docs_count=[0] * len(keys),
                      resource_size=[1] * len(keys))


def test_terms_split_identifiers_singularise_and_drop_stop_words() -> None:
    assert terms("createInventorySources for the_locations") == ["create", "inventory", "source",
                                                                 "location"]
    assert terms("What is it?") == []


def test_a_field_match_scores_only_in_its_own_field() -> None:
    ix = index({
        "sources": ["list inventory sources", "Sources are the physical locations"],
        "orders": ["list orders", "Orders placed by customers"],
    })
    scores = ix.field_scores(terms("physical locations"))
    assert list(np.flatnonzero(scores["description"])) == [0] and not scores["name"].any()
    assert list(np.flatnonzero(ix.field_scores(terms("orders"))["name"])) == [1]


def test_coverage_weighs_rare_words_above_common_ones() -> None:
    ix = index({
        "a": ["list widget"], "b": ["list gadget"], "c": ["list gizmo"],
    })
    query = terms("list widget")
    assert ix.coverages(query, [0])[0] == 1.0
    # "list" is everywhere (BM25's idf near 0), "widget" once: missing widget costs most of it.
    assert ix.coverages(query, [1])[1] < 0.5
    assert ix.knows("gizmo") and not ix.knows("doohickey")
    assert ix.rarity("widget") > ix.rarity("list") > 0 == ix.rarity("doohickey")
    # All candidates at once read as each one alone.
    together = ix.coverages(query, [2, 0, 1])
    assert together == {p: ix.coverages(query, [p])[p] for p in (2, 0, 1)}
    assert ix.coverages([], [0]) == {0: 0.0}


def test_positions_keep_the_order_asked_and_leave_out_unknown_keys() -> None:
    ix = index({"a": ["list widget"], "b": ["list gadget"], "c": ["list gizmo"]})
    keys = [ref.key for ref in ix.endpoints]
    assert ix.positions([keys[2], "GET /nowhere", keys[0]]) == {keys[2]: 2, keys[0]: 0}


def test_guide_sections_name_endpoints_with_or_without_the_base_prefix() -> None:
    endpoints = [endpoint("e1", "POST", "/V1/orders/{id}/cancel"), endpoint("e2", "GET", "/V1/orders")]
    sections = [
        Node(key="d1", label="DocSection", props={
            "title": "Cancelling", "section_path": ["Orders"],
            "mentions": ["POST /rest/default/v1/orders/{}/cancel", "GET /unrelated"]}),
        Node(key="d2", label="DocSection", props={"title": "Listing", "mentions": ["GET /v1/orders"]}),
    ]
    titles = _doc_titles(sections, endpoints)
    assert titles["e1"] == ["Orders Cancelling"]
    assert titles["e2"] == ["Listing"]


def test_dense_texts_name_and_describe_each_endpoint() -> None:
    node = endpoint("a/GET /v1/sources/{id}", "GET", "/v1/sources/{id}", operation_id="getSource",
                    summary="Retrieve a source",
                    description="Sources are the physical locations that hold stock.  " * 30)
    texts = dense_texts([node])
    assert texts["name"] == ["Retrieve a source | get source | sources"]
    about = texts["about"][0]
    assert about.startswith("Retrieve a source. Sources are the physical locations")
    assert len(about) == ABOUT_CHARS and "  " not in about
    bare = endpoint("a/GET /v1/x", "GET", "/v1/x", operation_id="listX")
    assert dense_texts([bare])["about"] == [name_text(bare)]


def test_similarities_are_cosines_per_dense_field() -> None:
    ix = index({"a": ["a"], "b": ["b"]})
    ix.dense = {"name": np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32),
                "card": np.array([[0.0, 0.0], [0.0, 1.0]], dtype=np.float32)}
    sims = ix.similarities([2.0, 0.0])
    assert sims["name"].tolist() == pytest.approx([1.0, 0.6])
    assert sims["card"].tolist() == pytest.approx([0.0, 0.0])  # a card without a stored vector
    assert index({"a": ["a"]}).similarities([1.0, 0.0]) == {}


def test_field_scores_equal_the_textbook_bm25_sum_to_the_bit() -> None:
    ix = index({
        "a": ["list orders of a customer", "Orders placed by customers, listed by date and order"],
        "b": ["list customers", "Customers who placed orders"],
        "c": ["cancel an order", "Cancels one order; an order already shipped cannot be"],
    })
    query = terms("list the orders a customer placed")
    for name in ("name", "description"):
        docs = ix.fields[name]
        n, average = len(docs), sum(map(len, docs)) / len(docs)
        expected = [0.0] * n
        for term in set(query):
            having = [i for i, d in enumerate(docs) if term in d]
            if not having:
                continue
            # FTS5's idf, floored for a term in half of the documents or more
            idf = max(math.log((n - len(having) + 0.5) / (len(having) + 0.5)), 1e-6)
            for i in having:
                tf = docs[i].count(term)
                norm = 1.2 * (1 - 0.75 + 0.75 * len(docs[i]) / average)
                expected[i] += idf * ((tf * (1.2 + 1.0)) / (tf + norm))
        assert ix.field_scores(query)[name].tolist() == expected
