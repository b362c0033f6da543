"""Endpoint search for the Neo4j store, ranked exactly like the embedded store's FTS5 index.

The embedded store ranks with SQLite FTS5's ``bm25()`` over five weighted columns, with words cut
and stemmed by FTS5's ``porter unicode61`` tokenizer. To give the same answers on Neo4j, the
Neo4j store keeps an inverted index beside the graph: one ``:ApiAtlasTerm`` node per (project,
API scope, stemmed term) holding the posting list of the endpoints that use the term, each with
its weighted term frequency and its length in tokens. A search reads only the posting lists of
the question's terms (an index seek each) and scores them with FTS5's formula; Lucene cannot
return per-term weights, and reading each candidate endpoint's own term statistics instead was
the slow part of the query. Stemming uses the very same FTS5 tokenizer, in a private in-memory
SQLite database, so no second stemmer can disagree with it.

One deliberate difference: FTS5 takes its corpus statistics from the whole SQLite file (every
project), Neo4j from the project searched, so one project's ranking never depends on another's.
They agree whenever the SQLite file holds one project.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apiatlas.graph.neo4j import queries as q
from apiatlas.graph.records import fts_query, search_columns

SEARCH_LEN = "search_len"
"""The endpoint property holding its length in tokens (the corpus statistics sum it)."""
# The embedded store's bm25 column weights (sqlite_queries.FTS_SEARCH), same column order.
WEIGHTS = (3.0, 3.0, 4.0, 1.0, 5.0)
K1, B = 1.2, 0.75


class Fts5Tokenizer:
    """FTS5's ``porter unicode61`` tokenizer, run in a private in-memory SQLite database."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        for statement in q.TOKENIZER_SCHEMA:
            self._conn.execute(statement)

    def tokenize(self, rows: Sequence[Sequence[str]]) -> list[list[list[str]]]:
        """The terms of each of the (up to five) columns of each row, in text order."""
        out: list[list[list[str]]] = [[[] for _ in range(5)] for _ in rows]
        padded = [(i, *row, *[""] * (5 - len(row))) for i, row in enumerate(rows)]
        with self._lock:
            self._conn.execute(q.TOKENIZER_CLEAR)
            self._conn.executemany(q.TOKENIZER_INSERT, padded)
            for doc, col, term in self._conn.execute(q.TOKENIZER_TERMS).fetchall():
                out[doc][int(col[1:])].append(term)
        return out


@dataclass
class ScopeIndex:
    """The search index of one API scope: endpoint lengths and the posting list of each term.

    Attributes:
        lengths: Endpoint key -> its length in tokens.
        postings: Term -> (endpoint keys, their weighted term frequencies), keys sorted.
    """

    lengths: dict[str, int] = field(default_factory=dict)
    postings: dict[str, tuple[list[str], list[float]]] = field(default_factory=dict)

    def term_rows(self) -> list[dict[str, Any]]:
        """The ``:ApiAtlasTerm`` rows of :data:`neo4j_queries.CREATE_TERMS`, sorted by term."""
        return [
            {"term": term, "keys": keys, "weights": weights,
             "lens": [self.lengths[k] for k in keys]}  # fmt: skip
            for term, (keys, weights) in sorted(self.postings.items())
        ]


def scope_index(
    tokenizer: Fts5Tokenizer,
    endpoints: Mapping[str, Mapping[str, Any]],
    resources: Mapping[str, Mapping[str, Any]],
) -> ScopeIndex:
    """The :class:`ScopeIndex` of one scope's endpoints.

    Args:
        tokenizer: The shared FTS5 tokenizer.
        endpoints: Key -> props of the scope's endpoints.
        resources: Key -> props of the scope's resources (their names are searchable).
    """
    keys = sorted(endpoints)
    columns = [
        search_columns(endpoints[k], resources.get(endpoints[k].get("resource", ""), {}))
        for k in keys
    ]
    index = ScopeIndex()
    for key, terms in zip(keys, tokenizer.tokenize(columns), strict=True):
        freq: dict[str, float] = {}
        for weight, words in zip(WEIGHTS, terms, strict=True):
            for word in words:
                freq[word] = freq.get(word, 0.0) + weight
        index.lengths[key] = sum(len(words) for words in terms)
        for term, weight in freq.items():
            posting = index.postings.setdefault(term, ([], []))
            posting[0].append(key)
            posting[1].append(weight)
    return index


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


def bm25_idfs(rows: int, n_hits: Sequence[int]) -> list[float]:
    """FTS5's idf of each phrase, from the rows in the corpus and the rows each phrase hits."""
    idfs = []
    for n_hit in n_hits:
        idf = math.log((rows - n_hit + 0.5) / (n_hit + 0.5))
        idfs.append(idf if idf > 0.0 else 1e-6)
    return idfs


def bm25_score(weights: Sequence[float], length: int, idfs: Sequence[float], avgdl: float) -> float:
    """FTS5's ``bm25()`` (k1 1.2, b 0.75) of one row, term for term and in the same float order.

    Args:
        weights: The row's weighted frequency of each phrase (0.0 when absent).
        length: The row's length in tokens.
        idfs: :func:`bm25_idfs` of the phrases.
        avgdl: Mean row length in the corpus.
    """
    score = 0.0
    for f, idf in zip(weights, idfs, strict=True):
        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * float(length) / avgdl)))
    return score
