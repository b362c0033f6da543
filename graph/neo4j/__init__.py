"""The production knowledge-graph store on Neo4j 5 (sync and async reads)."""
