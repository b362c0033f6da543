"""Retrieval: lexical (BM25), dense (vector stores, embeddings), their fusion, and the
knowledge-graph lookup with the question analysis it rests on."""
