"""Hybrid retrieval: BM25 and dense similarity fused with reciprocal rank fusion (RRF).

BM25 catches exact identifiers (``CreateLocation``, ``location_id``); the dense half catches
paraphrases ("add a new facility"). RRF fuses ranks, not scores, so the two scales never need
calibrating against each other.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from langchain_core.vectorstores import VectorStore
from pydantic import PrivateAttr

from apiatlas.errors import StoreError, UsageError
from apiatlas.rag.retrieval.lexical import BM25Retriever
from apiatlas.rag.retrieval.dense import load_card_vectors, load_corpus, scope_filter
from apiatlas.rag.retrieval.snapshot import CorpusCache
from apiatlas.rag.runtime.threads import one_blas_thread

Strategy = Literal["bm25", "dense", "hybrid"]
RRF_K = 60
"""Reciprocal rank fusion's damping constant: larger values flatten the top ranks' advantage."""
FETCH_K = 30
"""Candidates each half (BM25, dense) contributes to the fusion."""
BM25_WEIGHT_POWER = 2
"""The BM25 ranking's weight in the fusion is its best hit's coverage to this power."""


def doc_key(doc: Document) -> Hashable:
    """Identity of a document across rankings: its id, else ``(source, chunk)``."""
    if doc.id:
        return doc.id
    chunk = doc.metadata.get("chunk")
    return (doc.metadata.get("source"), chunk if chunk is not None else doc.page_content)


def reciprocal_rank_fusion(
    rankings: list[list[Document]],
    *,
    k: int = RRF_K,
    weights: list[float] | None = None,
    limit: int | None = None,
) -> list[Document]:
    """Fuse rankings: ``score(d) = sum_i weights[i] / (k + rank_i(d))`` with 1-based ranks.

    Args:
        rankings: Each list best first. A document may appear in several lists.
        k: Damping constant; larger values flatten the advantage of top ranks.
        weights: One weight per ranking (default all 1.0).
        limit: Return the best ``limit`` only (all by default); only those are copied.

    Returns:
        Distinct documents, best first, as copies whose metadata carry ``rrf_score``. Ties keep
        the order of first appearance.

    Raises:
        UsageError: ``weights`` does not match ``rankings`` or ``k`` is not positive.
    """
    if k <= 0:
        raise UsageError(f"RRF k must be positive, got {k}.")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise UsageError(f"Got {len(weights)} RRF weights for {len(rankings)} rankings.")
    scores: dict[Hashable, float] = {}
    first: dict[Hashable, Document] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[Hashable] = set()
        for rank, doc in enumerate(ranking, start=1):
            key = doc_key(doc)
            if key in seen:  # a duplicate inside one list must not count twice
                continue
            seen.add(key)
            first.setdefault(key, doc)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = sorted(first, key=lambda key: -scores[key])[:limit]
    return [
        Document(
            page_content=first[key].page_content,
            metadata={**first[key].metadata, "rrf_score": scores[key]},
            id=first[key].id,
        )
        for key in order
    ]


DENSE_UNAVAILABLE_KEY = "dense_unavailable"
"""Metadata key set on hybrid results found by BM25 alone because dense search failed."""


class DenseSearchUnavailable(StoreError):
    """The vector index could not be searched (server down, index damaged): BM25 still can."""


def is_unavailable(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is an outage of a store, not a bug in a query:
    a connection or server error of PostgreSQL, or an error raised by Chroma's engine."""
    seen: BaseException | None = error
    while seen is not None:
        module = type(seen).__module__
        if module.startswith("chromadb") or isinstance(seen, ConnectionError | TimeoutError):
            return True
        if module.startswith(("psycopg", "sqlalchemy")) and type(seen).__name__ in (
            "OperationalError", "InterfaceError", "PoolTimeout"
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class HybridRetriever(BaseRetriever):
    """Project-scoped BM25 + dense retrieval over the vector store, fused with RRF.

    ``invoke(query, project=..., api=..., k=..., strategy=...)`` overrides the fields per call.
    Results carry ``rrf_score``, ``bm25_rank``/``dense_rank`` (1-based, ``None`` when that half
    did not find the document) and ``bm25_score``/``dense_score``.

    Attributes:
        vector_store: The store written by :class:`~apiatlas.rag.retrieval.dense.VectorIndex`:
            Chroma or PGVectorStore (both report cosine distances). Optional when ``corpus``
            has embeddings: it then answers both halves.
        corpus: The projects' stored snapshots (:class:`CorpusCache`): BM25 reads their
            lexical indexes instead of reading and tokenising the store's documents, and, when
            the cache has embeddings, the dense half searches their vectors exactly.
        k: How many fused documents to return.
        project: Project to search.
        api: Restrict to one API of the project, or ``None`` for all.
        fetch_k: How many candidates each half contributes to the fusion.
        strategy: ``hybrid`` fuses both halves; ``bm25`` or ``dense`` uses one (for evals).
        rrf_k: RRF damping constant.
        adaptive_bm25_weight: Weigh the BM25 ranking by the squared ``coverage`` of its best
            hit, so that keywords matching only a sliver of the query (``new`` in "add a new
            facility") cannot outvote the dense ranking; ``False`` gives plain RRF.
    """

    vector_store: VectorStore | None = None
    corpus: CorpusCache | None = None
    k: int = 8
    project: str = "default"
    api: str | None = None
    fetch_k: int = FETCH_K
    strategy: Strategy = "hybrid"
    rrf_k: int = RRF_K
    adaptive_bm25_weight: bool = True
    _bm25: dict[tuple[str, str | None], BM25Retriever] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def model_post_init(self, context: Any, /) -> None:
        """Check that something can answer the dense half."""
        if self.vector_store is None and (self.corpus is None or self.corpus.embeddings is None):
            raise UsageError(
                "HybridRetriever needs a vector_store, or a corpus cache with embeddings."
            )

    def refresh(self) -> None:
        """Forget the cached BM25 indexes and snapshots; call after indexing so new documents
        are seen."""
        with self._lock:
            self._bm25.clear()
        if self.corpus is not None:
            self.corpus.clear()

    def bm25_for(self, project: str, api: str | None = None) -> BM25Retriever:
        """The BM25 retriever over every stored document of ``project``/``api`` (from the
        corpus snapshot when there is a cache; else read from the store once and cached)."""
        key = (project, api)
        if self.corpus is not None:
            snapshot = self.corpus.get(project, api)
            with self._lock:
                kept = self._bm25.get(key)
                if kept is None or kept.index is not snapshot.lexical:
                    kept = BM25Retriever(docs=snapshot.docs, index=snapshot.lexical, k=self.fetch_k)
                    self._bm25[key] = kept
                return kept
        with self._lock:
            # Built under the lock: concurrent first queries would otherwise each read the corpus.
            if key not in self._bm25:
                docs = load_corpus(self._store(), project=project, api=api)
                self._bm25[key] = BM25Retriever.from_documents(docs, k=self.fetch_k)
            return self._bm25[key]

    def search(
        self,
        query: str,
        *,
        project: str | None = None,
        api: str | None = None,
        k: int | None = None,
        strategy: Strategy | None = None,
    ) -> list[Document]:
        """Retrieve with optional overrides of ``project``, ``api``, ``k`` and ``strategy``.

        An override of ``None`` keeps the field's value.

        Raises:
            StoreError: The vector store could not be queried.
        """
        project = self.project if project is None else project
        api = self.api if api is None else api
        limit = self.k if k is None else k
        strategy = self.strategy if strategy is None else strategy
        bm25 = self._bm25_half(query, project, api) if strategy != "dense" else []
        unavailable = ""
        try:
            dense = self._dense_half(query, project, api) if strategy != "bm25" else []
        except DenseSearchUnavailable as e:
            if strategy == "dense":
                raise
            # The lexical half still answers (it reads documents, not the vector index).
            dense, unavailable = [], str(e)
        bm25_ranks = {doc_key(d): (i, d.metadata["score"]) for i, d in enumerate(bm25, 1)}
        dense_ranks = {doc_key(d): (i, d.metadata["dense_score"]) for i, d in enumerate(dense, 1)}
        bm25_weight = 1.0
        if bm25 and self.adaptive_bm25_weight:
            # Squared (BM25_WEIGHT_POWER): with RRF_K 60 a BM25 weight w can lift a dense hit
            # ~60*w places, so a match on a fifth of the query (w=.04) moves ~2 places while a
            # full match is an equal vote.
            bm25_weight = max(d.metadata["coverage"] for d in bm25) ** BM25_WEIGHT_POWER
        fused = reciprocal_rank_fusion(
            [bm25, dense], k=self.rrf_k, weights=[bm25_weight, 1.0], limit=limit
        )
        for doc in fused:
            key = doc_key(doc)
            doc.metadata.pop("score", None)
            doc.metadata.pop("coverage", None)
            bm25_rank, bm25_score = bm25_ranks.get(key, (None, None))
            dense_rank, dense_score = dense_ranks.get(key, (None, None))
            doc.metadata.update(
                bm25_rank=bm25_rank,
                bm25_score=bm25_score,
                dense_rank=dense_rank,
                dense_score=dense_score,
            )
            if unavailable:
                doc.metadata[DENSE_UNAVAILABLE_KEY] = unavailable
        return fused

    def _bm25_half(self, query: str, project: str, api: str | None) -> list[Document]:
        return self.bm25_for(project, api).rank(query, self.fetch_k)

    def card_vectors(
        self, project: str, api: str | None = None
    ) -> dict[tuple[str, str, str], list[float]]:
        """The stored vectors of the project's endpoint card heads (see
        :func:`~apiatlas.rag.retrieval.dense.load_card_vectors`): from the corpus snapshot when
        there is one, else from the vector store."""
        if self.corpus is not None:
            return self.corpus.get(project).card_vectors(api)
        return load_card_vectors(self._store(), project, api)

    def _store(self) -> VectorStore:
        if self.vector_store is None:
            raise UsageError("this HybridRetriever has no vector_store to read documents from")
        return self.vector_store

    def _dense_half(self, query: str, project: str, api: str | None) -> list[Document]:
        if self.corpus is not None and self.corpus.embeddings is not None:
            vector = self.corpus.embeddings.embed_query(query)
            return [
                Document(page_content=doc.page_content,
                         metadata={**doc.metadata, "dense_score": similarity}, id=doc.id)
                for doc, similarity in self.corpus.get(project, api).nearest(vector, self.fetch_k)
            ]
        store = self._store()
        where = scope_filter(store, project, api)
        try:
            pairs = store.similarity_search_with_score(query, k=self.fetch_k, filter=where)
        except Exception as e:
            if is_unavailable(e):
                raise DenseSearchUnavailable(
                    f"dense search in project {project!r} is unavailable: {e}"
                ) from e
            raise  # a bug, not an outage: it must surface as itself
        return [
            Document(
                page_content=doc.page_content,
                # Cosine space: similarity = 1 - distance (can dip below 0 for unrelated text).
                metadata={**doc.metadata, "dense_score": 1.0 - float(distance)},
                id=doc.id,
            )
            for doc, distance in pairs
        ]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        with one_blas_thread():
            return self.search(query, **overrides)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        def search() -> list[Document]:
            with one_blas_thread():
                return self.search(query, **overrides)

        return await run_in_executor(None, search)
