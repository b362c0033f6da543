"""LangChain's standard vector-store suite against our Chroma and pgvector configurations.

Each class overrides only the ``vectorstore`` fixture: an empty store opened exactly as apiatlas
opens its own, with the suite's deterministic fake embeddings. Every standard test runs (sync and
async, ``get_by_ids`` included) on both backends; nothing is skipped or expected to fail.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from apiatlas.config import Settings
from apiatlas.rag.retrieval.pgvector import open_pg_vector_store, pg_engine
from apiatlas.rag.retrieval.dense import open_vector_store

_tables = itertools.count()


class TestChromaStandard(VectorStoreIntegrationTests):
    """Persistent Chroma under a fresh home, as ``open_vector_store`` makes it."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:
        settings = Settings(home=tmp_path / "home")
        store = open_vector_store(settings, self.get_embeddings())
        yield store
        store.delete_collection()


class TestPgVectorStandard(VectorStoreIntegrationTests):
    """``open_pg_vector_store`` (TEXT ids, JSON metadata, HNSW) on a fresh table per test."""

    @pytest.fixture
    def vectorstore(self, pg_url: str) -> Iterator[VectorStore]:
        table = f"standard_suite_{next(_tables)}"
        engine = pg_engine(pg_url)
        # A server given by DATABASE_URL outlives the session: start from a table of our own.
        engine.drop_table(table)
        yield open_pg_vector_store(pg_url, self.get_embeddings(), table=table)
        engine.drop_table(table)
