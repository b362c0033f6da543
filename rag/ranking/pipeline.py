"""From a question to its scored candidate pool: the steps the agent's nodes take, in one place
for the code that trains and ablates the ranker outside the agent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from langchain_core.embeddings import Embeddings

from apiatlas.files import load_or_build, revision_file
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.ranking.adapter import QueryAdapter
from apiatlas.rag.ranking.features import Pool, build_pool
from apiatlas.rag.ranking.fields import CardKey, FieldIndex, build_field_index
from apiatlas.rag.retrieval.embeddings import model_id

CardVectors = Callable[[str, str | None], Mapping[CardKey, Sequence[float]]]
"""``(project, api) -> stored card-head vectors``, e.g. a partial of
:func:`~apiatlas.rag.retrieval.dense.load_card_vectors` over the vector store."""

GRAPH_CANDIDATES = 10
"""Graph candidates in the pool (the answer shows ``k`` of the ranking)."""
VECTOR_HITS = 20
"""Hybrid hits the agent fetches for guide passages (and, without the graph, endpoint cards)."""


class FieldIndexCache:
    """One :class:`FieldIndex` per project, current with the store's revision.

    With a ``folder``, each project's index is also written there, one file per revision: an
    ingest builds it (embedding the endpoints' short texts once), and every later process
    reads it instead of building it again. An API's index is cut from its project's.

    Args:
        embeddings: Embeds the endpoints' short texts (and, at question time, the question,
            so use the same model as the vector store's).
        cards: Reads the stored card-head vectors of a project (none without it).
        folder: Where built indexes are kept (``<home>/derived``); memory only when ``None``.
    """

    def __init__(
        self,
        embeddings: Embeddings | None = None,
        cards: CardVectors | None = None,
        folder: Path | None = None,
    ) -> None:
        self.embeddings = embeddings
        self.cards = cards
        self.folder = folder
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str | None], tuple[str, FieldIndex]] = {}

    def get(self, store: KnowledgeGraphStore, project: str, api: str | None) -> FieldIndex:
        """The index of ``project`` (``api`` only, when given), current with the store."""
        revision = store.revision(project)
        with self._lock:
            found = self._indexes.get((project, api))
            if found is not None and found[0] == revision:
                return found[1]
        index = self._project_index(store, project, revision)
        with self._lock:
            self._indexes[(project, None)] = (revision, index)
        if api is not None:
            index = index.subset(api)
            with self._lock:
                self._indexes[(project, api)] = (revision, index)
        return index

    def _project_index(self, store: KnowledgeGraphStore, project: str, revision: str) -> FieldIndex:
        with self._lock:
            found = self._indexes.get((project, None))
            if found is not None and found[0] == revision:
                return found[1]
        # The vectors belong to one embedding model: another model must not read them.
        model = model_id(self.embeddings) if self.embeddings is not None else "none"
        return load_or_build(
            revision_file(self.folder, "fields", project, revision, model),
            FieldIndex.load,
            lambda: build_field_index(
                store, project, None, self.embeddings,
                self.cards(project, None) if self.cards is not None else None,
            ),
            FieldIndex.save,
        )

    def query_vector(
        self, question: str, adapter: QueryAdapter | None = None
    ) -> list[float] | None:
        """The question's vector for the dense features (``None`` without embeddings), mapped
        by ``adapter`` when it was trained for this embedding model."""
        if self.embeddings is None:
            return None
        vector = self.embeddings.embed_query(question)
        return adapter.apply(vector, model_id(self.embeddings)) if adapter is not None else vector


def question_pool(
    question: str,
    *,
    graph: KnowledgeGraphRetriever,
    fields: FieldIndexCache,
    project: str,
    api: str | None = None,
    adapter: QueryAdapter | None = None,
) -> Pool:
    """The candidate pool of ``question``, built exactly as the agent builds it (with the
    ranker's ``adapter``)."""
    intent = graph.analyse(question, project=project, api=api)
    lookup = graph.lookup(question, project=project, api=api, k=GRAPH_CANDIDATES, intent=intent)
    index = fields.get(graph.store, project, api)
    vector = fields.query_vector(question, adapter)
    return build_pool(question, lookup, lookup.primary, index, vector)
