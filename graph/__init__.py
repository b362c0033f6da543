"""The knowledge graph: deterministic builders, the store contracts, their backends and suite.

- :mod:`apiatlas.graph.build` turns loader output into backend-neutral batches of nodes and
  edges (:mod:`apiatlas.graph.model`).
- :mod:`apiatlas.graph.store` holds the two contracts:
  :class:`~apiatlas.graph.store.KnowledgeGraphStore` (persist batches, answer the graph's
  queries, sync and async) and
  :class:`~apiatlas.graph.store.MemoryLinks` (link project memories to what their refs name);
  :class:`~apiatlas.graph.store.LinkedGraphStore` is both, what project memory runs on.
- Implementations of both: :mod:`apiatlas.graph.inmemory` (the reference, a few dicts),
  :mod:`apiatlas.graph.sqlite` (the embedded default) and :mod:`apiatlas.graph.neo4j` (the
  ``neo4j`` extra); :func:`apiatlas.graph.backends.open_graph_store` opens the configured one.
- :mod:`apiatlas.graph.testing` is the conformance suite all three pass: a new backend adopts it
  in a ``Test*`` class that defines the one ``store`` fixture the tests take, yielding an empty
  store.
"""
