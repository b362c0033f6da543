"""The reference implementation of the knowledge-graph store contracts, held in memory.

:class:`InMemoryGraphStore` implements :class:`~apiatlas.graph.store.KnowledgeGraphStore` and
:class:`~apiatlas.graph.store.MemoryLinks` in a few dicts, for reading beside the contracts and
for tests that need a graph but not a database; it passes the same conformance suite
(:mod:`apiatlas.graph.testing`) as the SQLite and Neo4j stores. It needs nothing beyond the
core install.
"""

from apiatlas.graph.inmemory.store import InMemoryGraphStore

__all__ = ["InMemoryGraphStore"]
