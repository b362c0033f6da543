"""The one full-text ranking every store uses: SQLite FTS5's ``bm25()`` over an endpoint's five
searchable texts, with FTS5's own ``porter unicode61`` tokenizer.

The embedded store asks FTS5 itself (:data:`apiatlas.graph.sqlite.queries.FTS_SEARCH`, with
:data:`WEIGHTS`). Neo4j cannot, so its store keeps posting lists of the terms this tokenizer
makes and scores them with :func:`bm25_score`, FTS5's formula term for term; the in-memory
reference store scores its rows the same way (:func:`rank_rows`). Stemming runs in a private
in-memory SQLite database, so no second stemmer can disagree with FTS5. The texts are those of
:func:`~apiatlas.graph.records.search_columns`, the question's words those of
:func:`~apiatlas.graph.records.fts_query`.

The library's own indexes in ``rag/`` (the ranker's per-field and whole-text scores, the hybrid
retriever's lexical half) score with this module's :func:`idf`, :func:`length_norm` and
:func:`term_score` too, in numpy: every BM25 in the project is this one formula, with one
parameter set (``experiments/2026-11-28-one-bm25``).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from apiatlas.graph.records import fts_query

WEIGHTS = (3.0, 3.0, 4.0, 1.0, 5.0)
"""Column weights, in :func:`~apiatlas.graph.records.search_columns` order (path, operation,
summary, description, resource names): names and summaries outweigh long descriptions."""
K1, B = 1.2, 0.75
"""FTS5's bm25 parameters (fixed in SQLite)."""

TOKENIZER_SCHEMA = (
    "CREATE VIRTUAL TABLE words USING fts5(c0, c1, c2, c3, c4, tokenize = 'porter unicode61')",
    "CREATE VIRTUAL TABLE word_instances USING fts5vocab(words, 'instance')",
)
TOKENIZER_CLEAR = "DELETE FROM words"
TOKENIZER_INSERT = "INSERT INTO words (rowid, c0, c1, c2, c3, c4) VALUES (?, ?, ?, ?, ?, ?)"
TOKENIZER_TERMS = "SELECT doc, col, term FROM word_instances ORDER BY doc, col, offset"


class Fts5Tokenizer:
    """FTS5's ``porter unicode61`` tokenizer, run in a private in-memory SQLite database."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        for statement in TOKENIZER_SCHEMA:
            self._conn.execute(statement)

    def tokenize(self, rows: Sequence[Sequence[str]]) -> list[list[list[str]]]:
        """The terms of each of the (up to five) columns of each row, in text order."""
        out: list[list[list[str]]] = [[[] for _ in range(5)] for _ in rows]
        padded = [(i, *row, *[""] * (5 - len(row))) for i, row in enumerate(rows)]
        with self._lock:
            self._conn.execute(TOKENIZER_CLEAR)
            self._conn.executemany(TOKENIZER_INSERT, padded)
            for doc, col, term in self._conn.execute(TOKENIZER_TERMS).fetchall():
                out[doc][int(col[1:])].append(term)
        return out


def query_phrases(tokenizer: Fts5Tokenizer, text: str) -> list[str]:
    """The stemmed terms FTS5 would search for ``text``: one per OR'ed phrase, repeats kept.

    The tokens are :func:`~apiatlas.graph.records.fts_query`'s, so stopwords and the token
    cap are the embedded store's. A token that stems to no term or to several (possible only
    for exotic Unicode) is dropped rather than treated as a phrase.
    """
    match = fts_query(text)
    if match is None:
        return []
    raw = [token[1:-1] for token in match.split(" OR ")]  # fts_query quotes bare tokens
    return [cols[0][0] for cols in tokenizer.tokenize([(t,) for t in raw]) if len(cols[0]) == 1]


def idf(rows: int, having: int) -> float:
    """FTS5's idf of a term found in ``having`` of ``rows`` rows: ``log((N - n + 0.5) / (n +
    0.5))``, floored at 1e-6 for a term in half of the rows or more."""
    value = math.log((rows - having + 0.5) / (having + 0.5))
    return value if value > 0.0 else 1e-6


def length_norm(length: Any, average: float) -> Any:
    """The denominator's length part, ``k1 * (1 - b + b * length / average)``, for one length
    or a numpy array of them."""
    return K1 * (1 - B + B * length / (average or 1.0))


def term_score(term_idf: float, frequency: Any, norm: Any) -> Any:
    """One term's contribution to a row with ``frequency`` (weighted) and :func:`length_norm`
    ``norm``, in FTS5's float order; numpy arrays score many rows at once."""
    return term_idf * ((frequency * (K1 + 1.0)) / (frequency + norm))


def bm25_idfs(rows: int, n_hits: Sequence[int]) -> list[float]:
    """FTS5's idf of each phrase, from the rows in the corpus and the rows each phrase hits."""
    return [idf(rows, n_hit) for n_hit in n_hits]


def bm25_score(weights: Sequence[float], length: int, idfs: Sequence[float], avgdl: float) -> float:
    """FTS5's ``bm25()`` (k1 1.2, b 0.75) of one row, term for term and in the same float order.

    Args:
        weights: The row's weighted frequency of each phrase (0.0 when absent).
        length: The row's length in tokens.
        idfs: :func:`bm25_idfs` of the phrases.
        avgdl: Mean row length in the corpus.
    """
    score = 0.0
    norm = length_norm(float(length), avgdl)
    for f, term_idf in zip(weights, idfs, strict=True):
        score += term_score(term_idf, f, norm)
    return score


def weighted_frequencies(columns: Sequence[Sequence[str]]) -> dict[str, float]:
    """Term -> its weighted frequency in one row's tokenized columns."""
    freq: dict[str, float] = {}
    for weight, words in zip(WEIGHTS, columns, strict=True):
        for word in words:
            freq[word] = freq.get(word, 0.0) + weight
    return freq


def rank_rows(
    tokenizer: Fts5Tokenizer, text: str, rows: Mapping[str, Sequence[str]]
) -> list[tuple[float, str]]:
    """``(score, key)`` of the rows that hold a term of ``text``, best first (ties by key),
    the corpus statistics taken from ``rows`` alone.

    Args:
        tokenizer: The FTS5 tokenizer.
        text: The question.
        rows: Key -> its five searchable texts (:func:`~apiatlas.graph.records.search_columns`).
    """
    phrases = query_phrases(tokenizer, text)
    if not phrases or not rows:
        return []
    keys = sorted(rows)
    tokenized = tokenizer.tokenize([rows[k] for k in keys])
    lengths = [sum(len(words) for words in columns) for columns in tokenized]
    frequencies = [weighted_frequencies(columns) for columns in tokenized]
    if not sum(lengths):
        return []
    hits = [[f.get(p, 0.0) for p in phrases] for f in frequencies]
    idfs = bm25_idfs(len(keys), [sum(1 for h in hits if h[i] > 0) for i in range(len(phrases))])
    avgdl = sum(lengths) / len(keys)
    scored = [
        (bm25_score(h, length, idfs, avgdl), key)
        for key, h, length in zip(keys, hits, lengths, strict=True)
        if any(h)
    ]
    return sorted(scored, key=lambda s: (-s[0], s[1]))
