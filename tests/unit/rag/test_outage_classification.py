"""Only outages degrade an answer; a bug in a query surfaces as itself."""

from __future__ import annotations

import chromadb.errors
import psycopg

from apiatlas.errors import StoreError
from apiatlas.rag.retrieval.fusion import is_unavailable


def test_store_engine_and_connection_errors_are_outages() -> None:
    assert is_unavailable(chromadb.errors.InternalError("Error finding id"))
    assert is_unavailable(psycopg.OperationalError("connection refused"))
    assert is_unavailable(ConnectionRefusedError())
    try:
        try:
            raise psycopg.OperationalError("server closed the connection")
        except psycopg.OperationalError as e:
            raise StoreError("search failed") from e
    except StoreError as wrapped:
        assert is_unavailable(wrapped)  # the cause counts


def test_bugs_are_not_outages() -> None:
    assert not is_unavailable(TypeError("unsupported operand"))
    assert not is_unavailable(KeyError("dense_score"))
    assert not is_unavailable(psycopg.ProgrammingError("syntax error at or near"))
