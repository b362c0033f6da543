"""LexicalIndex: the same BM25 as rank_bm25's BM25Okapi, column-wise, subsettable and saveable."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from apiatlas.rag.retrieval.lexical import LexicalIndex

WORDS = ["location", "customer", "payment", "refund", "order", "invoice", "id", "create",
         "list", "delete", "update", "card", "team", "member", "catalog", "object"]


def corpus(seed: int, documents: int = 60) -> list[list[str]]:
    rng = random.Random(seed)
    # A few very common words make some idfs negative, so the epsilon floor is exercised.
    return [rng.choices(WORDS, weights=[1 + 8 * (i < 3) for i in range(len(WORDS))],
                        k=rng.randint(0, 30)) for _ in range(documents)]


QUERIES = [["location"], ["refund", "payment"], ["customer", "customer", "id"],
           ["missing"], [], ["location", "missing", "order"]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_and_idf_equal_bm25okapi_exactly(seed: int) -> None:
    docs = corpus(seed)
    reference, index = BM25Okapi(docs), LexicalIndex.build(docs)
    assert list(index.terms) == list(reference.idf)
    for term, idf in reference.idf.items():
        assert index.term_idf(term) == idf
    # The floor is exercised: some word is in more than half of the documents.
    assert any(len(index.documents_with(w)) > len(docs) / 2 for w in index.terms)
    for query in QUERIES:
        assert np.array_equal(index.scores(query), reference.get_scores(query))
    assert index.term_idf("missing") is None


@pytest.mark.parametrize("seed", [4, 5])
def test_a_subset_equals_an_index_built_from_its_documents(seed: int) -> None:
    docs = corpus(seed)
    keep = sorted(random.Random(seed).sample(range(len(docs)), 25))
    part = LexicalIndex.build(docs).subset(keep)
    fresh = LexicalIndex.build([docs[i] for i in keep])
    reference = BM25Okapi([docs[i] for i in keep])
    assert part.terms == fresh.terms
    for name in ("indptr", "rows", "counts", "ranks", "lengths"):
        assert np.array_equal(getattr(part, name), getattr(fresh, name)), name
    for query in QUERIES:
        assert np.array_equal(part.scores(query), reference.get_scores(query))


def test_documents_with_a_token_are_listed_in_order() -> None:
    index = LexicalIndex.build([["a1", "b2"], ["b2"], [], ["a1", "a1"]])
    assert index.documents_with("a1").tolist() == [0, 3]
    assert index.documents_with("b2").tolist() == [0, 1]
    assert index.documents_with("zz").tolist() == []


def test_round_trip_through_npz() -> None:
    index = LexicalIndex.build(corpus(6))
    buffer = io.BytesIO()
    np.savez(buffer, **index.arrays())
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as data:
        back = LexicalIndex.from_arrays(dict(data))
    assert back.terms == index.terms
    for query in QUERIES:
        assert np.array_equal(back.scores(query), index.scores(query))
