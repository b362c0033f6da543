"""The packaged MiniLM is symmetric, which is what lets one cached vector serve both the memory
store's search (``embed_documents``) and the vector retriever (``embed_query``)."""

from __future__ import annotations

import math

from apiatlas.config import Settings
from apiatlas.rag.runtime.embeddings import QueryCachedEmbeddings, load_embeddings


def test_the_local_model_embeds_a_text_alike_as_query_and_as_document() -> None:
    cached = load_embeddings(Settings())
    assert isinstance(cached, QueryCachedEmbeddings) and cached is load_embeddings(Settings())
    text = "Never DELETE shipments in production; cancel instead."
    as_query = cached.inner.embed_query(text)
    [as_document] = cached.inner.embed_documents([text])
    assert len(as_query) == 384
    assert max(abs(a - b) for a, b in zip(as_query, as_document)) < 1e-6
    [through_cache] = cached.embed_documents([text])
    assert cached.embed_query(text) == through_cache
    assert math.isclose(sum(v * v for v in through_cache), 1.0, rel_tol=1e-4)  # normalised
