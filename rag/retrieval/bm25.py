"""The one BM25 of the library's own indexes: Lucene's ``BM25Similarity`` formula.

Two indexes score with it: the ranker's per-field and whole-text index
(:mod:`apiatlas.rag.ranking.fields`) and the corpus snapshot's lexical index behind the hybrid
retriever (:class:`apiatlas.rag.retrieval.lexical.LexicalIndex`). The graph stores search with
their own full-text ranking instead: SQLite FTS5's native ``bm25()``, whose formula the Neo4j and
in-memory stores reproduce term for term so that every backend ranks alike
(:mod:`apiatlas.graph.fts`). The two differ only in the idf: FTS5's
``log((N - n + 0.5) / (n + 0.5))`` is floored near zero for a term in more than half of the
documents, where Lucene's ``log(1 + (N - n + 0.5) / (n + 0.5))`` stays positive. Lucene's was
kept because it leaves the ranker's field scores, and so the ranker, exactly as they were. On
dev, FTS5's formula in both indexes measured level with it once the primary threshold was
chosen stably (``experiments/2026-11-28-one-bm25``): one formula for every BM25 is an option.
"""

from __future__ import annotations

import math

import numpy as np

from apiatlas.graph.fts import B, K1  # one parameter set: FTS5's fixed k1 1.2, b 0.75

__all__ = ["B", "K1", "idf", "length_norms", "term_scores"]


def idf(documents: int, having: int) -> float:
    """Lucene's idf of a term found in ``having`` of ``documents`` documents (always > 0)."""
    return math.log(1.0 + (documents - having + 0.5) / (having + 0.5))


def length_norms(lengths: np.ndarray, average: float) -> np.ndarray:
    """The denominator's length part, ``k1 * (1 - b + b * length / average)``, per document."""
    return K1 * (1 - B + B * lengths / (average or 1.0))


def term_scores(term_idf: float, frequencies: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """One term's BM25 contribution to each document that has it, given its frequencies
    there and their :func:`length_norms`."""
    return term_idf * frequencies * (K1 + 1) / (frequencies + norms)
