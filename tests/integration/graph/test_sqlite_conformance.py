"""The SQLite graph store adopts the store conformance suite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.graph.model import LinkNotes, MemoryLink
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.graph.testing import GraphStoreTests
from apiatlas.graph.testing.base import CREATE_LOCATION, P, load


class TestSqliteGraphStore(GraphStoreTests):
    """Runs every conformance test against a fresh SQLite file."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(tmp_path / "g.sqlite")
        yield store
        store.close()


def test_a_file_linked_before_the_flags_reads_its_links_as_worth_reading(tmp_path: Path) -> None:
    """A graph file written before links carried what the memory says: opened, its links read
    back as possibly forbidding and naming (so a reader looks at the memory), and new links
    carry their flags."""
    path = tmp_path / "g.sqlite"
    store = SqliteGraphStore(path)
    load(store)
    store.close()
    old = sqlite3.connect(path)
    old.executescript(
        "DROP TABLE memory_refs; CREATE TABLE memory_refs (project TEXT NOT NULL, "
        "memory_id TEXT NOT NULL, ref TEXT NOT NULL, kind TEXT NOT NULL, match TEXT NOT NULL, "
        "PRIMARY KEY (project, memory_id, ref));"
        f"INSERT INTO memory_refs VALUES ('{P}', 'm-old', 'POST /v2/locations', 'endpoint', "
        "'POST /v2/locations');"
    )
    old.close()
    store = SqliteGraphStore(path)
    try:
        store.link_memory(P, "m-new", ["POST /v2/locations"], LinkNotes(rank="1"))
        assert store.memory_links(P, [CREATE_LOCATION]) == {CREATE_LOCATION: [
            MemoryLink("m-old", avoids=True, named=True, rank=""),
            MemoryLink("m-new", avoids=False, named=True, rank="1"),
        ]}  # fmt: skip
    finally:
        store.close()
