"""The vector store on PostgreSQL + pgvector: langchain-postgres ``PGVectorStore``, ``PGEngine``.

One table holds every project's documents: a TEXT id (the indexing API writes content-hash ids,
which the library's default UUID id column rejects), the text, a ``vector(n)`` embedding with an
HNSW index (cosine) and all metadata in one JSON column. Filter keys (``project``, ``api``,
``kind``, ``source``) get expression indexes on that JSON column rather than columns of their
own: PGVectorStore returns every metadata column on every document, so a document without an
``api`` would come back with ``api: None`` and round trips (LangChain's standard suite, and
answers identical to Chroma's) would break. Searches run with pgvector's iterative HNSW scan
(pgvector >= 0.8) so that a project filter matching a small share of the table still yields
``k`` results.

The indexing API's record manager lives in the same database (:func:`record_manager_url`).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from langchain_core.embeddings import Embeddings
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from apiatlas.errors import ConfigError, StoreError
from apiatlas.extras import missing_extra

try:
    import psycopg
    from langchain_postgres import Column, PGEngine, PGVectorStore
    from langchain_postgres.v2.indexes import HNSWIndex, QueryOptions
    from psycopg import sql
except ImportError as e:
    raise missing_extra("postgres", "the pgvector backend", e) from e
from apiatlas.rag.retrieval import pg_queries as q

TABLE = "apiatlas_vectors"
SCHEMA = "public"
ID_COLUMN = "langchain_id"
EMBEDDING_COLUMN = "embedding"
METADATA_JSON_COLUMN = "langchain_metadata"
INDEXED_KEYS = ("project", "api", "kind", "source")
"""Metadata keys with an expression index: the ones retrieval filters on."""

_DRIVER = "postgresql+psycopg"
_ACCEPTED_DRIVERS = frozenset(
    {"postgres", "postgresql", "postgresql+psycopg", "postgresql+psycopg2", "postgresql+asyncpg"}
)
# Short enough that "<table>_<key>_idx" and the HNSW index name fit Postgres's 63-byte limit.
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")

_lock = threading.Lock()
_engines: dict[str, PGEngine] = {}


@dataclass
class IterativeHNSWQueryOptions(QueryOptions):
    """HNSW search settings applied (``SET LOCAL``) before every similarity query.

    Attributes:
        ef_search: Candidate list size of the HNSW scan (pgvector's default is 40).
        iterative: Use iterative index scans (pgvector >= 0.8 only).
    """

    ef_search: int = 100
    iterative: bool = True

    def to_parameter(self) -> list[str]:
        """The settings, one ``name = value`` string each."""
        settings = [f"hnsw.ef_search = {int(self.ef_search)}"]
        if self.iterative:
            # strict_order: keep scanning the graph until enough rows pass the metadata filter,
            # in exact distance order. Without it, when the planner picks the HNSW index, a
            # project holding 1% of the rows got 0 of 10 results (measured on 5,000 rows).
            settings.append("hnsw.iterative_scan = strict_order")
        return settings

    def to_string(self) -> str:
        """The settings as one comma-separated string."""
        return ", ".join(self.to_parameter())


def open_pg_vector_store(
    database_url: str,
    embeddings: Embeddings,
    *,
    table: str = TABLE,
    vector_size: int | None = None,
) -> PGVectorStore:
    """Open (creating if needed) the vector table ``table`` in the database at ``database_url``.

    Creates the ``vector`` extension, the table (TEXT ids, JSON metadata), its HNSW cosine index
    and the metadata-key indexes when missing. Safe to call again on an existing table.

    Args:
        database_url: ``postgresql://user:password@host:5432/db`` (``postgres://`` and the
            ``+psycopg``/``+asyncpg`` driver forms are accepted too).
        embeddings: The embedding model; its vectors must match the table's dimension.
        table: Table name: lower-case letters, digits and ``_``, at most 40 characters.
        vector_size: Embedding dimension; measured by embedding a probe string when ``None``.

    Returns:
        A LangChain ``PGVectorStore`` with cosine distance.

    Raises:
        ConfigError: The URL or table name is invalid, or the table holds vectors of another
            dimension.
        StoreError: The server cannot be reached or the pgvector extension is unavailable.
    """
    check_table_name(table)
    url = normalise_url(database_url)
    where = describe(url)
    size = vector_size if vector_size is not None else len(embeddings.embed_query("dimension"))
    exists, iterative = _prepare_database(url, where, table, size)
    engine = pg_engine(database_url)
    try:
        if not exists:
            _create_table(engine, url, table, size)
        store = PGVectorStore.create_sync(
            engine,
            embeddings,
            table,
            schema_name=SCHEMA,
            id_column=ID_COLUMN,
            embedding_column=EMBEDDING_COLUMN,
            metadata_json_column=METADATA_JSON_COLUMN,
            index_query_options=IterativeHNSWQueryOptions(iterative=iterative),
        )
        if not store.is_valid_index():
            _apply_hnsw_index(store)
        _create_key_indexes(url, table)
    except Exception as e:  # psycopg, SQLAlchemy (wrapping the driver) and ValueError
        raise StoreError(
            f"Could not open the vector table {table!r} on {where}: {e}. Check that the "
            "server is up and the user may create tables and indexes in the database."
        ) from e
    return store


def record_manager_url(database_url: str) -> str:
    """The SQLAlchemy URL of the indexing API's record manager in the same database.

    Raises:
        ConfigError: The URL is not a PostgreSQL URL.
    """
    return normalise_url(database_url).render_as_string(hide_password=False)


def pg_engine(database_url: str) -> PGEngine:
    """The process-wide ``PGEngine`` (one async connection pool) for ``database_url``.

    Raises:
        ConfigError: The URL is not a PostgreSQL URL.
    """
    key = record_manager_url(database_url)
    with _lock:
        # One pool per database: an engine per store would open connections until the server's
        # max_connections is exhausted in long sessions.
        if key not in _engines:
            _engines[key] = PGEngine.from_connection_string(key, pool_pre_ping=True)
        return _engines[key]


def normalise_url(database_url: str) -> URL:
    """``database_url`` as a SQLAlchemy URL using the psycopg 3 driver.

    Raises:
        ConfigError: The URL cannot be parsed or is not a PostgreSQL URL.
    """
    try:
        url = make_url(database_url)
    except (ArgumentError, ValueError) as e:
        raise ConfigError(
            "DATABASE_URL is not a valid URL: use postgresql://user:password@host:5432/db."
        ) from e
    if url.drivername not in _ACCEPTED_DRIVERS:
        raise ConfigError(
            f"DATABASE_URL uses {url.drivername!r}: pgvector needs a PostgreSQL URL "
            "(postgresql://user:password@host:5432/db)."
        )
    return url.set(drivername=_DRIVER)


def describe(url: URL) -> str:
    """Where ``url`` points, for messages: host (or socket directory), port and database only."""
    host = url.host or url.query.get("host") or "localhost"
    port = f":{url.port}" if url.port else ""
    return f"PostgreSQL at {host}{port}/{url.database or ''}"


def check_table_name(table: str) -> None:
    """Reject table names that are not plain lower-case SQL identifiers.

    Raises:
        ConfigError: ``table`` is not ``[a-z_][a-z0-9_]*`` of at most 40 characters.
    """
    if not _TABLE_NAME.fullmatch(table):
        raise ConfigError(
            f"Vector table name {table!r} is not allowed: use lower-case letters, digits and "
            "underscores (at most 40 characters, not starting with a digit)."
        )


def libpq_conninfo(database_url: str) -> str:
    """``database_url`` as a libpq connection string, for ``psycopg.connect``.

    Raises:
        ConfigError: The URL is not a PostgreSQL URL.
    """
    return _conninfo(normalise_url(database_url))


def _conninfo(url: URL) -> str:
    params: dict[str, Any] = {
        "user": url.username,
        "password": url.password,
        "host": url.host,
        "port": url.port,
        "dbname": url.database,
    }
    for name, value in url.query.items():  # e.g. host=/socket/dir, sslmode=require
        params[name] = value if isinstance(value, str) else value[-1]
    return psycopg.conninfo.make_conninfo(
        "", **{k: v for k, v in params.items() if v not in (None, "")}
    )


def _connect(url: URL) -> psycopg.Connection[Any]:
    return psycopg.connect(_conninfo(url), autocommit=True, connect_timeout=10)


def _prepare_database(url: URL, where: str, table: str, size: int) -> tuple[bool, bool]:
    """Create the extension, check an existing table's dimension.

    Returns:
        Whether the table exists, and whether pgvector supports iterative scans (>= 0.8).
    """
    try:
        conn = _connect(url)
    except psycopg.Error as e:
        raise StoreError(
            f"Could not connect to {where}: {e}. Is the server up, and are DATABASE_URL's "
            "user, password and database right?"
        ) from e
    with conn:
        try:
            conn.execute(q.CREATE_VECTOR_EXTENSION)
        except psycopg.Error as e:
            raise StoreError(
                f"The pgvector extension is not available on {where}: {e}. Install pgvector "
                "on the server (e.g. the pgvector/pgvector image) and let the user run "
                "CREATE EXTENSION vector, or have an administrator create it."
            ) from e
        try:
            version = conn.execute(q.VECTOR_EXTENSION_VERSION).fetchone()
            row = conn.execute(
                q.VECTOR_DIMENSION,
                {"schema": SCHEMA, "table": table, "column": EMBEDDING_COLUMN},
            ).fetchone()
        except psycopg.Error as e:
            raise StoreError(f"Could not inspect table {table!r} on {where}: {e}") from e
    if row is not None and row[0] != size:
        raise ConfigError(
            f"Vector table {table!r} on {where} holds {row[0]}-dimensional vectors but the "
            f"embedding model gives {size}: use another table for this model, or drop the "
            "table (and the record manager's rows) and ingest again."
        )
    return row is not None, _at_least(version[0] if version else "0", (0, 8))


def _at_least(version: str, wanted: tuple[int, int]) -> bool:
    parts = re.findall(r"\d+", version)[:2]
    return tuple(int(p) for p in parts) >= wanted


def _table_exists(url: URL, table: str) -> bool:
    with _connect(url) as conn:
        row = conn.execute(q.TABLE_EXISTS, {"schema": SCHEMA, "table": table}).fetchone()
    return row is not None


def _create_table(engine: PGEngine, url: URL, table: str, size: int) -> None:
    try:
        engine.init_vectorstore_table(
            table,
            size,
            schema_name=SCHEMA,
            embedding_column=EMBEDDING_COLUMN,
            metadata_json_column=METADATA_JSON_COLUMN,
            id_column=Column(ID_COLUMN, "TEXT", nullable=False),
        )
    except Exception:
        # Another process may have created it between our check and CREATE TABLE.
        if not _table_exists(url, table):
            raise


def _apply_hnsw_index(store: PGVectorStore) -> None:
    try:
        store.apply_vector_index(HNSWIndex())  # cosine distance is HNSWIndex's default
    except Exception:
        if not store.is_valid_index():  # lost a race with another process: theirs is fine
            raise


def _create_key_indexes(url: URL, table: str) -> None:
    with _connect(url) as conn:
        for key in INDEXED_KEYS:
            conn.execute(
                q.CREATE_METADATA_KEY_INDEX.format(
                    index=sql.Identifier(f"{table}_{key}_idx"),
                    schema=sql.Identifier(SCHEMA),
                    table=sql.Identifier(table),
                    column=sql.Identifier(METADATA_JSON_COLUMN),
                    key=sql.Literal(key),
                )
            )


def pg_filter(project: str, api: str | None = None) -> dict[str, Any]:
    """The PGVectorStore metadata filter selecting one project, optionally one API of it."""
    if api is None:
        return {"project": {"$eq": project}}
    return {"$and": [{"project": {"$eq": project}}, {"api": {"$eq": api}}]}
