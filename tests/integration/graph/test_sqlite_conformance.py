"""The SQLite graph store adopts the store conformance suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.graph.sqlite.store import SqliteGraphStore
from tests.integration.graph.async_conformance import AsyncStoreConformance
from tests.integration.graph.conformance import StoreConformance


class TestSqliteGraphStore(StoreConformance, AsyncStoreConformance):
    """Runs every conformance test against a fresh SQLite file."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(tmp_path / "g.sqlite")
        yield store
        store.close()
