"""Choose the knowledge-graph backend from settings: the embedded SQLite store or Neo4j."""

from __future__ import annotations

from apiatlas.config import Settings
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.graph.store import LinkedGraphStore


def open_graph_store(settings: Settings) -> LinkedGraphStore:
    """Open the store ``settings.graph`` names.

    Raises:
        StoreError: The store cannot be opened (for Neo4j: the server is unreachable or
            refuses the credentials; the message names the URI).
    """
    if settings.graph == "neo4j":
        # Imported here so the embedded default never loads the Neo4j driver.
        from apiatlas.graph.neo4j.store import Neo4jGraphStore

        return Neo4jGraphStore(
            settings.neo4j_uri,
            settings.neo4j_username,
            settings.neo4j_password,
            database=settings.neo4j_database,
        )
    return SqliteGraphStore(settings.graph_path)
