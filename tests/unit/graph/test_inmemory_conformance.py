"""The in-memory reference store adopts the store conformance suite (no database: a unit test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apiatlas.graph.inmemory import InMemoryGraphStore
from apiatlas.graph.testing import GraphStoreTests


class TestInMemoryGraphStore(GraphStoreTests):
    """Runs every conformance test against a fresh reference store."""

    @pytest.fixture
    def store(self) -> Iterator[InMemoryGraphStore]:
        store = InMemoryGraphStore()
        yield store
        store.close()
