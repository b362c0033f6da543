"""Project memory on PostgreSQL: ``PostgresStore`` over a small connection pool (the
``postgres`` extra). :func:`apiatlas.rag.memory.backends.open_memory_store` opens it."""

from __future__ import annotations

from typing import Any

from apiatlas.errors import ConfigError, StoreError
from apiatlas.extras import missing_extra

try:
    import psycopg
    from langgraph.store.postgres import PostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as e:
    raise missing_extra("postgres", "project memory on PostgreSQL", e) from e

from apiatlas.rag.retrieval import pg_queries as q
from apiatlas.rag.retrieval.pgvector import libpq_conninfo, normalise_url

PG_VECTOR_TABLE = "store_vectors"
PG_POOL_MAX = 4
CONNECT_TIMEOUT_S = 10


def close_postgres_memory(store: Any) -> None:
    """Close the pool of a store opened by :func:`open_postgres_memory`."""
    if isinstance(store, PostgresStore) and isinstance(store.conn, ConnectionPool):
        store.conn.close()


def _masked(database_url: str) -> str:
    return normalise_url(database_url).render_as_string(hide_password=True)


def open_postgres_memory(database_url: str, index: dict[str, Any]) -> PostgresStore:
    """Open (setting up tables and the vector index) the memory store on ``database_url``."""
    where = _masked(database_url)
    url = normalise_url(database_url)
    conninfo = libpq_conninfo(database_url)
    try:
        # A direct probe first: a dead server fails here at once, with libpq's reason, rather
        # than after the pool's retry timeout.
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as probe:
            row = probe.execute(
                q.VECTOR_DIMENSION,
                {"schema": "public", "table": PG_VECTOR_TABLE, "column": "embedding"},
            ).fetchone()
    except psycopg.Error as e:
        raise StoreError(
            f"Could not connect to the project memory database {where}: "
            f"{_hide(str(e), url.password)}. Is the server up, and are DATABASE_URL's user, "
            "password and database right?"
        ) from e
    if row is not None and row[0] != index["dims"]:
        raise ConfigError(
            f"the project memory in {where} holds {row[0]}-dimensional vectors but the "
            f"embedding model makes {index['dims']}: use the model it was built with."
        )
    pool: ConnectionPool[Any] = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=PG_POOL_MAX,
        # What PostgresStore requires of its connections.
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        store = PostgresStore(pool, index=index)  # type: ignore[arg-type]
        store.setup()
    except (psycopg.Error, PoolTimeout) as e:
        pool.close()
        raise StoreError(
            f"Could not set up the project memory in {where}: {_hide(str(e), url.password)}. "
            "Check that the user may create tables and the pgvector extension (CREATE "
            "EXTENSION vector) in that database."
        ) from e
    return store


def _hide(message: str, password: str | None) -> str:
    """Drivers sometimes echo the connection string: never let the password reach a message."""
    return message.replace(password, "***") if password else message
