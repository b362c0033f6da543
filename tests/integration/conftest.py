"""Fixtures that start real servers (Neo4j, PostgreSQL) for the integration suites."""
