"""The SQLite graph store adopts the store conformance suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.graph.testing import GraphStoreTests


class TestSqliteGraphStore(GraphStoreTests):
    """Runs every conformance test against a fresh SQLite file."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(tmp_path / "g.sqlite")
        yield store
        store.close()
