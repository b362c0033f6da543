"""The query-vector cache in front of the embedding model: one embedding per question."""

from __future__ import annotations

import threading

from langchain_core.embeddings import DeterministicFakeEmbedding

from apiatlas.rag.runtime.embeddings import QueryCachedEmbeddings


class CountingModel(DeterministicFakeEmbedding):
    """A deterministic stand-in for the model that counts the texts it embeds."""

    embedded: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.embedded.append(text)
        return super().embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return super().embed_documents(texts)


def model() -> CountingModel:
    return CountingModel(size=8, embedded=[])


def test_a_question_embedded_by_the_memory_store_is_free_for_the_retriever() -> None:
    inner = model()
    cached = QueryCachedEmbeddings(inner)
    by_store = cached.embed_documents(["How do I delete a shipment?"])  # the memory search
    by_retriever = cached.embed_query("How do I delete a shipment?")  # the vector retriever
    assert by_store == [by_retriever] == [inner.embed_query("How do I delete a shipment?")]
    assert inner.embedded.count("How do I delete a shipment?") == 2  # once cached, once here


def test_batches_pass_through_uncached() -> None:
    inner = model()
    cached = QueryCachedEmbeddings(inner)
    texts = ["card one", "card two", "card three"]
    assert cached.embed_documents(texts) == inner.embed_documents(texts)
    cached.embed_documents(texts)
    assert inner.embedded.count("card one") == 3
    assert cached._cache == {}


def test_the_least_recently_used_vector_goes_first() -> None:
    inner = model()
    cached = QueryCachedEmbeddings(inner, size=2)
    cached.embed_query("a")
    cached.embed_query("b")
    cached.embed_query("a")  # "a" is now the most recent
    cached.embed_query("c")  # evicts "b"
    assert list(cached._cache) == ["a", "c"]
    inner.embedded.clear()
    cached.embed_query("a")
    cached.embed_query("b")
    assert inner.embedded == ["b"]


def test_returned_vectors_are_copies_callers_may_change() -> None:
    cached = QueryCachedEmbeddings(model())
    first = cached.embed_query("q")
    first[0] = 99.0
    assert cached.embed_query("q")[0] != 99.0


def test_concurrent_callers_get_the_same_vector() -> None:
    inner = model()
    cached = QueryCachedEmbeddings(inner)
    results: list[list[float]] = []

    def ask() -> None:
        results.append(cached.embed_query("shared question"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results) and len(cached._cache) == 1


def test_clear_forgets_everything_and_size_zero_caches_nothing() -> None:
    inner = model()
    cached = QueryCachedEmbeddings(inner)
    cached.embed_query("q")
    cached.clear()
    assert cached._cache == {}
    cached.size = 0
    cached.embed_query("q")
    cached.embed_query("q")
    assert cached._cache == {} and inner.embedded == ["q", "q", "q"]
