"""The persistent Chroma store and incremental indexing through LangChain's indexing API.

Every document carries ``project`` and ``source`` metadata. Indexing groups records by
``source_id = "<project>|<source>"`` so that re-ingesting one source of one project replaces
exactly that source's documents: unchanged documents are skipped (not re-embedded), changed ones
are replaced, vanished ones deleted, and other projects are never touched.

Two backends, chosen by ``Settings.vectors``: persistent Chroma under the home directory, or
PostgreSQL + pgvector (:mod:`apiatlas.rag.retrieval.pgvector`) at ``Settings.database_url``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from apiatlas.config import Settings
from apiatlas.errors import ConfigError, StoreError, UsageError
from apiatlas.rag.runtime.embeddings import model_id
from apiatlas.rag.retrieval.index_stats import IndexStats

if TYPE_CHECKING:
    from langchain_chroma import Chroma

T = TypeVar("T")

PAGE = 5_000
"""Most records one read or delete names. The embedded store (Chroma on SQLite) refuses a
statement with more than 32,766 values, which a project of that many documents reaches."""

# chromadb, langchain-chroma and the indexing API's SQL record manager are imported where they
# are used: together they cost seconds, and commands that only read the graph or the project
# memory never need them.

COLLECTION = "apiatlas"
SOURCE_ID_KEY = "source_id"
GROUP_KEY = "group"
MODEL_KEY = "embedding_model"
"""Metadata naming the model that embedded a document (see :meth:`VectorIndex.index`)."""


def open_vector_store(settings: Settings, embeddings: Embeddings) -> VectorStore:
    """Open the vector store ``settings.vectors`` selects, creating it if needed.

    ``chroma``: the persistent ``apiatlas`` collection under ``chroma_dir``. ``pgvector``: the
    ``apiatlas_vectors`` table in the database at ``database_url``.

    Raises:
        ConfigError: ``pgvector`` is selected without a ``database_url``, or it is invalid.
        StoreError: The store cannot be created or opened.
    """
    if settings.vectors == "pgvector":
        # Imported on demand: langchain-postgres and its drivers add ~0.5 s to every start.
        from apiatlas.rag.retrieval.pgvector import open_pg_vector_store

        return open_pg_vector_store(_database_url(settings), embeddings)
    return open_chroma_store(settings, embeddings)


def record_manager_url(settings: Settings) -> str:
    """Where the indexing API's record manager lives: beside the selected vector store.

    SQLite under the home for Chroma; the same PostgreSQL database for pgvector.

    Raises:
        ConfigError: ``pgvector`` is selected without a valid ``database_url``.
    """
    if settings.vectors == "pgvector":
        from apiatlas.rag.retrieval.pgvector import record_manager_url as pg_record_manager_url

        return pg_record_manager_url(_database_url(settings))
    return settings.record_manager_url


def _database_url(settings: Settings) -> str:
    if not settings.database_url:
        raise ConfigError(
            "the pgvector backend needs a PostgreSQL URL: set DATABASE_URL "
            "(postgresql://user:password@host:5432/db)."
        )
    return settings.database_url


def open_chroma_store(settings: Settings, embeddings: Embeddings) -> Chroma:
    """Open (creating if needed) the persistent ``apiatlas`` collection under ``chroma_dir``.

    Raises:
        StoreError: The Chroma directory cannot be created or opened.
    """
    import chromadb.config
    from langchain_chroma import Chroma

    try:
        settings.chroma_dir.mkdir(parents=True, exist_ok=True)
        return Chroma(
            collection_name=COLLECTION,
            embedding_function=embeddings,
            # Absolute: Chroma caches one client per directory *string* per process, so a
            # relative ".apiatlas/chroma" opened again after a chdir would reuse the client of
            # the old directory (seen as "no such table: max_seq_id" in CI).
            persist_directory=str(settings.chroma_dir.resolve()),
            client_settings=chromadb.config.Settings(anonymized_telemetry=False),
            # Cosine so that relevance scores are 1 - cosine distance, in [0, 1] for MiniLM.
            # One construction thread: the same documents then always give the same index, so
            # rankings (and `make train`, which must reproduce its artifact) are reproducible.
            collection_configuration={"hnsw": {"space": "cosine", "num_threads": 1}},
        )
    except Exception as e:  # chromadb raises a zoo of types (sqlite, rust bindings, ValueError)
        raise StoreError(
            f"Could not open the Chroma store at {settings.chroma_dir}: {e}. Check the directory "
            "is writable and not used by another Chroma version; delete it to rebuild the index."
        ) from e


def chroma_filter(project: str, api: str | None = None) -> dict[str, Any]:
    """The Chroma ``where`` filter selecting one project, optionally one API of it."""
    if api is None:
        return {"project": project}
    return {"$and": [{"project": project}, {"api": api}]}


def scope_filter(
    vector_store: VectorStore, project: str, api: str | None = None
) -> dict[str, Any]:
    """The metadata filter selecting ``project`` (and ``api``) in ``vector_store``'s dialect.

    Raises:
        UsageError: ``vector_store`` is neither Chroma nor PGVectorStore.
    """
    from langchain_chroma import Chroma

    if isinstance(vector_store, Chroma):
        return chroma_filter(project, api)
    from apiatlas.rag.retrieval.pgvector import PGVectorStore, pg_filter  # on demand, as above

    if isinstance(vector_store, PGVectorStore):
        return pg_filter(project, api)
    raise UsageError(
        f"{type(vector_store).__name__} is not a supported vector store: apiatlas scopes "
        "searches by project on Chroma (open_chroma_store) or PGVectorStore "
        "(open_pg_vector_store)."
    )


def load_corpus(
    vector_store: VectorStore, *, project: str, api: str | None = None
) -> list[Document]:
    """Every stored document of ``project`` (and ``api``), in a stable order, with ``id`` set.

    Works on Chroma and PGVectorStore, whose ``get(where=..., include=...)`` agree.

    Raises:
        UsageError: ``vector_store`` is neither Chroma nor PGVectorStore.
        StoreError: The store cannot be read.
    """
    got = _get(vector_store, project, api, ["metadatas", "documents"])
    return [doc for doc, _ in _in_order(got, [None] * len(got["ids"]))]


def load_corpus_vectors(
    vector_store: VectorStore, project: str
) -> tuple[list[Document], np.ndarray]:
    """:func:`load_corpus` of the whole project, with each document's stored vector (one
    float32 row each, as both stores keep them).

    Raises:
        UsageError: ``vector_store`` is neither Chroma nor PGVectorStore.
        StoreError: The store cannot be read.
    """
    got = _get(vector_store, project, None, ["metadatas", "documents", "embeddings"])
    pairs = _in_order(got, list(got["embeddings"]))
    rows = [np.asarray(_floats(v) if isinstance(v, str) else v, dtype=np.float32)
            for _, v in pairs]
    matrix = np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
    return [doc for doc, _ in pairs], matrix


def _in_order(got: dict[str, Any], vectors: list[Any]) -> list[tuple[Document, Any]]:
    pairs = [
        (Document(page_content=text or "", metadata=dict(meta or {}), id=doc_id), vector)
        for doc_id, text, meta, vector in zip(
            got["ids"], got["documents"], got["metadatas"], vectors, strict=True
        )
    ]
    # Both return storage order; sorting keeps BM25 tie-breaks reproducible across runs and
    # backends.
    pairs.sort(key=lambda pair: (str(pair[0].metadata.get("source", "")), str(pair[0].id)))
    return pairs


def _floats(vector: Any) -> list[float]:
    if isinstance(vector, str):  # pgvector's text form, "[0.1,0.2,...]"
        vector = json.loads(vector)
    return [float(x) for x in vector]


def load_card_vectors(
    vector_store: VectorStore, project: str, api: str | None = None
) -> dict[tuple[str, str, str], list[float]]:
    """The stored vector of every endpoint card's head (its first chunk: method and path,
    operation, summary, tags and the start of the description) in ``project`` (and ``api``),
    by ``(api, METHOD, path)``.

    Raises:
        UsageError: ``vector_store`` is neither Chroma nor PGVectorStore.
        StoreError: The store cannot be read.
    """
    got = _get(vector_store, project, api, ["metadatas", "embeddings"])
    return card_vectors(got["metadatas"], got["embeddings"])


def load_card_texts(
    vector_store: VectorStore, project: str, api: str | None = None
) -> dict[tuple[str, str, str], str]:
    """The text of every endpoint card's head, keyed like :func:`load_card_vectors`."""
    got = _get(vector_store, project, api, ["metadatas", "documents"])
    return _cards(got["metadatas"], got["documents"], str, api)


def card_vectors(
    metadatas: Sequence[Mapping[str, Any] | None], vectors: Sequence[Any], api: str | None = None
) -> dict[tuple[str, str, str], list[float]]:
    """:func:`load_card_vectors` of documents already read: their metadata and vectors."""
    return _cards(metadatas, vectors, _floats, api)


def _cards(
    metadatas: Sequence[Mapping[str, Any] | None],
    values: Sequence[Any],
    read: Callable[[Any], T],
    api: str | None,
) -> dict[tuple[str, str, str], T]:
    """``read(value)`` of every endpoint card's head, by ``(api, METHOD, path)``."""
    out: dict[tuple[str, str, str], T] = {}
    for meta, value in zip(metadatas, values, strict=True):
        meta = meta or {}
        if meta.get("kind") != "endpoint" or meta.get("chunk", 0) != 0:
            continue
        if api is not None and meta.get("api") != api:
            continue
        key = (str(meta.get("api", "")), str(meta.get("method", "")), str(meta.get("path", "")))
        out[key] = read(value)
    return out


def _get(
    vector_store: VectorStore, project: str, api: str | None, include: list[str]
) -> dict[str, Any]:
    where = scope_filter(vector_store, project, api)
    try:
        if not _is_chroma(vector_store):
            return vector_store.get(  # type: ignore[attr-defined, no-any-return]  # has get()
                where=where, include=include
            )
        # Chroma names every record it returns in one SQLite statement: read in pages.
        got: dict[str, list[Any]] = {key: [] for key in ("ids", *include)}
        while True:
            page = vector_store.get(  # type: ignore[attr-defined]
                where=where, include=include, limit=PAGE, offset=len(got["ids"])
            )
            for key, values in got.items():
                values.extend(page[key])
            if len(page["ids"]) < PAGE:
                return got
    except Exception as e:
        raise StoreError(f"Could not read project {project!r} from the vector store: {e}") from e


def _is_chroma(vector_store: VectorStore) -> bool:
    from langchain_chroma import Chroma

    return isinstance(vector_store, Chroma)


def _pages(items: Sequence[T]) -> list[Sequence[T]]:
    return [items[i:i + PAGE] for i in range(0, len(items), PAGE)]


@dataclass(frozen=True)
class VectorCheckpoint:
    """What a set of groups held in the vector store, to put back if an ingest fails.

    Attributes:
        project: The project.
        groups: The group ids (``<project>|<group>``) it covers.
        documents: Every document those groups held, with ``id`` set (the record key).
    """

    project: str
    groups: tuple[str, ...]
    documents: list[Document]


class VectorIndex:
    """Incremental, project-scoped indexing into a vector store.

    Attributes:
        vector_store: Where documents and embeddings live.
        record_manager: Remembers the hash and group of every indexed document.
    """

    def __init__(
        self, vector_store: VectorStore, record_manager_url: str, *, namespace: str = "apiatlas"
    ) -> None:
        """Connect to the record manager database and create its table if needed.

        Raises:
            StoreError: The record manager database cannot be opened.
        """
        from langchain_classic.indexes import SQLRecordManager

        self.vector_store = vector_store
        try:
            self.record_manager = SQLRecordManager(namespace, db_url=record_manager_url)
            self.record_manager.create_schema()
        except Exception as e:
            where = _without_password(record_manager_url)
            raise StoreError(
                f"Could not open the record manager at {where}: {e}. Check that the database "
                "is reachable and writable."
            ) from e

    def index(self, docs: list[Document], *, project: str, sources: list[str]) -> IndexStats:
        """Make the store hold exactly ``docs`` for every source they (and ``sources``) name.

        Args:
            docs: The complete new documents of the ingested sources. Each needs a ``source``
                metadata value; ``project`` metadata is set when missing.
            project: The project the documents belong to.
            sources: The groups (``group`` metadata, else ``source``) this ingest covers, including ones that now
                produce no documents at all; those are emptied.

        Returns:
            How many documents were added, updated, skipped (unchanged) and deleted.

        Raises:
            UsageError: A document has no ``source`` or belongs to another project.
            StoreError: The vector store or record manager failed.
        """
        from langchain_core.indexing import index as lc_index

        # The embedding model is part of every document's hash: vectors of another model (an
        # earlier one, before an upgrade) are embedded again, never kept beside new ones.
        embeddings = self.vector_store.embeddings
        model = model_id(embeddings) if embeddings is not None else None
        prepared = [_prepare(doc, project, model) for doc in docs]
        try:
            result = lc_index(
                prepared,
                self.record_manager,
                self.vector_store,
                cleanup="scoped_full",
                source_id_key=SOURCE_ID_KEY,
                key_encoder="sha256",
            )
            seen = {doc.metadata[SOURCE_ID_KEY] for doc in prepared}
            gone = [_group_id(project, s) for s in dict.fromkeys(sources)]
            deleted = self._delete_groups([g for g in gone if g not in seen])
        except Exception as e:
            raise StoreError(f"Indexing project {project!r} failed: {e}") from e
        return IndexStats(
            num_added=result["num_added"],
            num_updated=result["num_updated"],
            num_skipped=result["num_skipped"],
            num_deleted=result["num_deleted"] + deleted,
        )

    def checkpoint(self, project: str, groups: Sequence[str]) -> VectorCheckpoint:
        """What ``groups`` of ``project`` hold now, for :meth:`restore`.

        Raises:
            StoreError: The vector store or record manager failed.
        """
        ids = tuple(_group_id(project, g) for g in dict.fromkeys(groups))
        try:
            keys = self.record_manager.list_keys(group_ids=list(ids)) if ids else []
            documents = [doc for page in _pages(keys)
                         for doc in self.vector_store.get_by_ids(page)]  # fmt: skip
        except Exception as e:
            raise StoreError(f"Could not read project {project!r} from the vector store: {e}") from e
        return VectorCheckpoint(project, ids, documents)

    def restore(self, saved: VectorCheckpoint) -> None:
        """Make the groups of ``saved`` hold what they held when it was taken: documents added
        since go, documents removed since come back (their vectors from the embedding cache,
        where the store has one).

        Raises:
            StoreError: The vector store or record manager failed.
        """
        by_key = {str(doc.id): doc for doc in saved.documents}
        try:
            now = set(self.record_manager.list_keys(group_ids=list(saved.groups)))
            self._delete_keys([key for key in now if key not in by_key])
            gone = [doc for key, doc in by_key.items() if key not in now]
            for page in _pages(gone):
                self.vector_store.add_documents(list(page), ids=[str(d.id) for d in page])
            keys = list(by_key)
            for page in _pages(keys):
                self.record_manager.update(
                    page, group_ids=[by_key[k].metadata.get(SOURCE_ID_KEY) for k in page]
                )
        except Exception as e:
            raise StoreError(
                f"Could not put project {saved.project!r}'s vectors back: {e}"
            ) from e

    def _delete_groups(self, group_ids: list[str]) -> int:
        # scoped_full only cleans sources that still yield a document; a source that now yields
        # none would keep its stale records forever, so its keys are removed here directly.
        if not group_ids:
            return 0
        keys = self.record_manager.list_keys(group_ids=group_ids)
        self._delete_keys(keys)
        return len(keys)

    def _delete_keys(self, keys: Sequence[str]) -> None:
        for page in _pages(keys):
            self.vector_store.delete(list(page))
            self.record_manager.delete_keys(list(page))


def _without_password(url: str) -> str:
    # The URL may be a PostgreSQL one with credentials: messages must never show them.
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not even parseable: say so rather than echo it
        return "an unparseable database URL"


def _group_id(project: str, source: str) -> str:
    return f"{project}|{source}"


def _prepare(doc: Document, project: str, model: str | None) -> Document:
    meta = dict(doc.metadata)
    if model is not None:
        meta[MODEL_KEY] = model
    source = meta.get("source")
    if not isinstance(source, str) or not source:
        raise UsageError(
            f"Document {doc.page_content[:60]!r} has no 'source' metadata: every indexed "
            "document must name the file or URL it came from."
        )
    owner = meta.setdefault("project", project)
    if owner != project:
        raise UsageError(
            f"Document from {source} has metadata project={owner!r} but is being indexed into "
            f"project {project!r}: index it under its own project."
        )
    # An ingest location (a spec root with its $ref'd files, a docs directory) is cleaned as a
    # whole, so documents may name that location as their "group"; otherwise the source is it.
    meta[SOURCE_ID_KEY] = _group_id(project, str(meta.get(GROUP_KEY) or source))
    return Document(page_content=doc.page_content, metadata=meta)
