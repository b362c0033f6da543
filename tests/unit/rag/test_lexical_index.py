"""LexicalIndex: the project's one BM25 (FTS5's formula), column-wise, subsettable and saveable."""

from __future__ import annotations

import io
import math
import random
from collections import Counter

import numpy as np
import pytest

from apiatlas.rag.retrieval.lexical import LexicalIndex

WORDS = ["location", "customer", "payment", "refund", "order", "invoice", "id", "create",
         "list", "delete", "update", "card", "team", "member", "catalog", "object"]


def corpus(seed: int, documents: int = 60) -> list[list[str]]:
    rng = random.Random(seed)
    # A few very common words: terms in more than half of the documents get FTS5's idf floor.
    return [rng.choices(WORDS, weights=[1 + 8 * (i < 3) for i in range(len(WORDS))],
                        k=rng.randint(0, 30)) for _ in range(documents)]


QUERIES = [["location"], ["refund", "payment"], ["customer", "customer", "id"],
           ["missing"], [], ["location", "missing", "order"]]


def textbook_idf(docs: list[list[str]]) -> dict[str, float]:
    """FTS5's idf of every term, from its definition (floored at 1e-6)."""
    df = Counter(t for doc in docs for t in set(doc))
    return {t: max(math.log((len(docs) - d + 0.5) / (d + 0.5)), 1e-6) for t, d in df.items()}


def textbook_scores(docs: list[list[str]], query: list[str]) -> list[float]:
    """BM25 (k1 1.2, b 0.75, FTS5's idf) of every document, one document and term at a time."""
    idf, avgdl = textbook_idf(docs), sum(len(d) for d in docs) / len(docs)
    out = []
    for doc in docs:
        tf = Counter(doc)
        score = 0.0
        for term in query:  # a repeated query term counts again
            if tf[term]:
                norm = 1.2 * (1 - 0.75 + 0.75 * len(doc) / avgdl)
                score += idf[term] * tf[term] * 2.2 / (tf[term] + norm)
        out.append(score)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_and_idf_equal_the_textbook_bm25(seed: int) -> None:
    docs = corpus(seed)
    index = LexicalIndex.build(docs)
    idf = textbook_idf(docs)
    assert set(index.terms) == set(idf)
    for term, value in idf.items():
        assert index.term_idf(term) == pytest.approx(value, rel=1e-12)
    # Some word is in more than half of the documents, and its idf is FTS5's floor.
    common = [w for w in index.terms if len(index.documents_with(w)) > len(docs) / 2]
    assert common and all(index.term_idf(w) == 1e-6 for w in common)
    for query in QUERIES:
        np.testing.assert_allclose(index.scores(query), textbook_scores(docs, query),
                                   rtol=1e-12, atol=0)
    assert index.term_idf("missing") is None


@pytest.mark.parametrize("seed", [4, 5])
def test_a_subset_equals_an_index_built_from_its_documents(seed: int) -> None:
    docs = corpus(seed)
    keep = sorted(random.Random(seed).sample(range(len(docs)), 25))
    part = LexicalIndex.build(docs).subset(keep)
    fresh = LexicalIndex.build([docs[i] for i in keep])
    assert part.terms == fresh.terms
    for name in ("indptr", "rows", "counts", "ranks", "lengths"):
        assert np.array_equal(getattr(part, name), getattr(fresh, name)), name
    for query in QUERIES:
        assert np.array_equal(part.scores(query), fresh.scores(query))
        np.testing.assert_allclose(part.scores(query),
                                   textbook_scores([docs[i] for i in keep], query),
                                   rtol=1e-12, atol=0)


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
