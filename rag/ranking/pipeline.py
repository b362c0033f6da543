"""From a question to its scored candidate pool: the steps the agent's nodes take, in one place
for the code that trains and ablates the ranker outside the agent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from langchain_core.embeddings import Embeddings

from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.ranking.features import Pool, build_pool
from apiatlas.rag.ranking.fields import CardKey, FieldIndex, build_field_index

CardVectors = Callable[[str, str | None], Mapping[CardKey, Sequence[float]]]
"""``(project, api) -> stored card-head vectors``, e.g. a partial of
:func:`~apiatlas.rag.retrieval.dense.load_card_vectors` over the vector store."""

GRAPH_CANDIDATES = 10
"""Graph candidates in the pool (the answer shows ``k`` of the ranking)."""
VECTOR_HITS = 20
"""Hybrid hits the agent fetches for guide passages (and, without the graph, endpoint cards)."""


class FieldIndexCache:
    """One :class:`FieldIndex` per project and API, rebuilt when the store's revision moves.

    Args:
        embeddings: Embeds the endpoints' short texts (and, at question time, the question,
            so use the same model as the vector store's).
        cards: Reads the stored card-head vectors of a project (none without it).
    """

    def __init__(
        self, embeddings: Embeddings | None = None, cards: CardVectors | None = None
    ) -> None:
        self.embeddings = embeddings
        self.cards = cards
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str | None], tuple[str, FieldIndex]] = {}

    def get(self, store: KnowledgeGraphStore, project: str, api: str | None) -> FieldIndex:
        """The index of ``project`` (``api`` only, when given), current with the store."""
        revision = store.revision(project)
        with self._lock:
            found = self._indexes.get((project, api))
            if found is not None and found[0] == revision:
                return found[1]
        cards = self.cards(project, api) if self.cards is not None else None
        index = build_field_index(store, project, api, self.embeddings, cards)
        with self._lock:
            self._indexes[(project, api)] = (revision, index)
        return index

    def query_vector(self, question: str) -> list[float] | None:
        """The question's vector for the name similarities (``None`` without embeddings)."""
        return self.embeddings.embed_query(question) if self.embeddings is not None else None


def question_pool(
    question: str,
    *,
    graph: KnowledgeGraphRetriever,
    fields: FieldIndexCache,
    project: str,
    api: str | None = None,
) -> Pool:
    """The candidate pool of ``question``, built exactly as the agent builds it."""
    intent = graph.analyse(question, project=project, api=api)
    lookup = graph.lookup(question, project=project, api=api, k=GRAPH_CANDIDATES, intent=intent)
    index = fields.get(graph.store, project, api)
    return build_pool(question, lookup, lookup.primary, index, fields.query_vector(question))
