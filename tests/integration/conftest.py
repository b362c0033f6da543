"""Fixtures that start real servers (Neo4j, PostgreSQL) for the integration suites."""
from tests.integration.postgres_server_fixture import pg_url  # noqa: F401
from tests.integration.neo4j_server_fixture import neo4j_settings  # noqa: F401
