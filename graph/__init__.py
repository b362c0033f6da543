"""The knowledge graph: deterministic builders, the store contract, and its backends."""
