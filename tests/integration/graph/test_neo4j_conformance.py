"""The Neo4j graph store adopts the store conformance suite, on the session's real Neo4j."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apiatlas.config import Settings
from apiatlas.graph.neo4j.store import Neo4jGraphStore
from apiatlas.graph.testing import PROJECTS, GraphStoreTests


class TestNeo4jGraphStore(GraphStoreTests):
    """Runs every conformance test against an emptied Neo4j database."""

    @pytest.fixture
    def store(self, neo4j_settings: Settings) -> Iterator[Neo4jGraphStore]:
        s = neo4j_settings
        store = Neo4jGraphStore(s.neo4j_uri, s.neo4j_username, s.neo4j_password, database=s.neo4j_database)
        for project in PROJECTS:
            store.delete_project(project)
        yield store
        cleaner = Neo4jGraphStore(s.neo4j_uri, s.neo4j_username, s.neo4j_password, database=s.neo4j_database)
        for project in PROJECTS:
            cleaner.delete_project(project)
        cleaner.close()
        store.close()
