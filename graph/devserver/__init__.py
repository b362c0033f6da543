"""A local Neo4j Community server for development and tests (``apiatlas neo4j``).

The library never imports this package: the stores connect to whatever server
``Settings.neo4j_uri`` names."""

from apiatlas.extras import require

require("neo4j", purpose="the local Neo4j server")
