"""Open the LangGraph store that holds project memory: ``SqliteStore`` or ``PostgresStore``.

Both stores get a semantic index on the ``search_text`` field of every memory (see
:mod:`apiatlas.rag.memory.store`), embedded with the same model as the vectors.

- ``settings.memory == "sqlite"``: ``SqliteStore`` in ``settings.memory_path``. Its vector index
  needs the ``sqlite-vec`` extension, and the standard library's ``sqlite3`` here cannot load
  extensions, so the store runs on a ``pysqlite3`` connection (same DB-API, its own SQLite).
- ``settings.memory == "postgres"``: ``PostgresStore`` on ``settings.database_url`` through a
  small connection pool, so a long-lived app survives a dropped connection.

Whatever :func:`open_memory_store` opens, :func:`close_memory_store` closes::

    store = open_memory_store(settings, embeddings)
    try:
        ProjectMemory(store, "acme").remember("We create locations with v2", kind="decision")
    finally:
        close_memory_store(store)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pysqlite3.dbapi2 as sqlite  # type: ignore[import-untyped]
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.sqlite import SqliteStore

from apiatlas.config import Settings
from apiatlas.errors import ConfigError, StoreError
from apiatlas.rag.memory.store import INDEX_FIELD

# Concurrent writers (the CLI while an app runs) wait instead of failing with "database is
# locked"; WAL lets readers proceed while one process writes.
SQLITE_BUSY_TIMEOUT = "PRAGMA busy_timeout = 10000"
SQLITE_WAL = "PRAGMA journal_mode = WAL"
SQLITE_VECTOR_BYTES = "SELECT length(embedding) FROM store_vectors LIMIT 1"
SQLITE_HAS_VECTORS = (
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_vectors'"
)


def open_memory_store(
    settings: Settings, embeddings: Embeddings, *, dims: int | None = None
) -> BaseStore:
    """Open (creating tables and the vector index if needed) the project-memory store.

    Args:
        settings: ``memory`` picks the backend; ``memory_path`` or ``database_url`` says where.
        embeddings: The model the semantic index embeds ``search_text`` with; its dimension
            must match an existing store's.
        dims: The model's vector size, when known (else one probe text is embedded).

    Returns:
        A set-up ``SqliteStore`` or ``PostgresStore``; close it with :func:`close_memory_store`.

    Raises:
        ConfigError: ``memory == "postgres"`` without a ``database_url``, or the store holds
            vectors of another dimension (another embedding model).
        StoreError: The file cannot be created or written, or Postgres cannot be reached.
    """
    if dims is None:
        dims = len(embeddings.embed_query("dimension"))
    index: dict[str, Any] = {"dims": dims, "embed": embeddings, "fields": [INDEX_FIELD]}
    if settings.memory == "postgres":
        if not settings.database_url:
            raise ConfigError(
                "the postgres memory backend needs a PostgreSQL URL: set DATABASE_URL "
                "(postgresql://user:password@host:5432/db), or use memory='sqlite'."
            )
        # The Postgres half comes with the `postgres` extra, imported only when chosen.
        from apiatlas.rag.memory.postgres import open_postgres_memory

        return open_postgres_memory(settings.database_url, index)
    return _open_sqlite(settings.memory_path, index)


class UnavailableStore(BaseStore):
    """A memory store that could not be opened: every operation raises the error that said why,
    so that the agent answers from the docs and says the memory was not read."""

    def __init__(self, error: StoreError) -> None:
        self.error = error

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise StoreError(str(self.error))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise StoreError(str(self.error))


def close_memory_store(store: BaseStore) -> None:
    """Close the connection (or pool) of a store opened by :func:`open_memory_store`.

    Stores of any other kind (an ``InMemoryStore`` in tests) are left as they are.
    """
    if isinstance(store, SqliteStore):
        store.conn.close()
    elif type(store).__name__ == "PostgresStore":
        from apiatlas.rag.memory.postgres import close_postgres_memory

        close_postgres_memory(store)


def _open_sqlite(path: Path, index: dict[str, Any]) -> SqliteStore:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # SqliteStore expects autocommit (it issues BEGIN/COMMIT itself) and may be used from
        # the agent's worker threads; its own lock serialises access to the connection.
        conn = sqlite.connect(str(path), check_same_thread=False, isolation_level=None)
    except (OSError, sqlite.Error) as e:
        raise StoreError(
            f"Could not open the project memory at {path}: {e}. Check that the directory "
            "exists and is writable, or point APIATLAS_HOME elsewhere."
        ) from e
    try:
        conn.execute(SQLITE_BUSY_TIMEOUT)
        conn.execute(SQLITE_WAL)
        store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
        store.setup()
        _check_sqlite_dims(conn, path, index["dims"])
    except sqlite.Error as e:
        conn.close()
        raise StoreError(
            f"Could not set up the project memory at {path}: {e}. Check that the file is "
            "writable and not an unrelated SQLite database; move it aside to start afresh."
        ) from e
    except ConfigError:
        conn.close()
        raise
    return store


def _check_sqlite_dims(conn: Any, path: Path, dims: int) -> None:
    if conn.execute(SQLITE_HAS_VECTORS).fetchone() is None:
        return
    row = conn.execute(SQLITE_VECTOR_BYTES).fetchone()
    stored = None if row is None or row[0] is None else row[0] // 4  # float32 vectors
    if stored is not None and stored != dims:
        raise ConfigError(
            f"the project memory at {path} holds {stored}-dimensional vectors but the "
            f"embedding model makes {dims}: use the model it was built with, or move the file "
            "aside to start a new memory."
        )
