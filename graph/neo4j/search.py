"""Endpoint search for the Neo4j store, ranked exactly like the embedded store's FTS5 index.

The embedded store ranks with SQLite FTS5's ``bm25()`` over five weighted columns, with words cut
and stemmed by FTS5's ``porter unicode61`` tokenizer. To give the same answers on Neo4j, the
Neo4j store keeps an inverted index beside the graph: one ``:ApiAtlasTerm`` node per (project,
API scope, stemmed term) holding the posting list of the endpoints that use the term, each with
its weighted term frequency and its length in tokens. A search reads only the posting lists of
the question's terms (an index seek each) and scores them with FTS5's formula
(:mod:`apiatlas.graph.fts`); Lucene cannot return per-term weights, and reading each candidate
endpoint's own term statistics instead was the slow part of the query. Stemming uses the very
same FTS5 tokenizer, in a private in-memory SQLite database, so no second stemmer can disagree
with it.

One deliberate difference: FTS5 takes its corpus statistics from the whole SQLite file (every
project), Neo4j from the project searched, so one project's ranking never depends on another's.
They agree whenever the SQLite file holds one project.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apiatlas.graph.fts import Fts5Tokenizer, weighted_frequencies
from apiatlas.graph.records import search_columns

SEARCH_LEN = "search_len"
"""The endpoint property holding its length in tokens (the corpus statistics sum it)."""


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
        freq = weighted_frequencies(terms)
        index.lengths[key] = sum(len(words) for words in terms)
        for term, weight in freq.items():
            posting = index.postings.setdefault(term, ([], []))
            posting[0].append(key)
            posting[1].append(weight)
    return index
