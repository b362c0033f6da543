"""The production knowledge-graph store on Neo4j 5 (sync and async reads): the ``neo4j`` extra."""

from apiatlas.extras import require

require("neo4j", purpose="the Neo4j graph backend")
