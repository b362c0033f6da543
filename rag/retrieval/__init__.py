"""Retrieval: lexical (BM25), dense (vector stores), their fusion, and the knowledge-graph
lookup. The model runtime they embed with is :mod:`apiatlas.rag.runtime`; the question
analysis they rest on is :mod:`apiatlas.rag.question`."""
