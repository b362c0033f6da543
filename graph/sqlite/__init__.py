"""The embedded knowledge-graph store: SQLite (FTS5) under the home directory."""
