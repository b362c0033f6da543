"""Keyword retrieval (BM25) with a tokenizer that understands API identifiers.

Developers type ``CreateLocation``, ``location_id`` or ``/v2/locations`` as often as prose; a plain
word tokenizer would treat each as one opaque word. :func:`identifier_tokens` emits the whole
identifier *and* its parts, so ``create location`` finds ``CreateLocation`` and the reverse.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor

from apiatlas.graph.lexicon import STOP_WORDS
from apiatlas.graph.words import singular
from apiatlas.graph import fts
from apiatlas.rag.retrieval.topk import top_positions

# Words joined by "_" or "-" form one identifier; "/", "{", "." and spaces separate identifiers.
_RAW = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")
# Case boundaries: "HTTPServer" -> HTTP, Server; "getV2Items" -> get, V2, Items.
_CAMEL = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+")

def identifier_tokens(text: str) -> list[str]:
    """Lowercase search tokens of ``text``, splitting paths and identifiers into their parts.

    Each identifier yields itself and, when compound, its snake/kebab/camel parts; plural words
    are followed by a singular form; stop words and single letters are dropped.

    Example:
        ``identifier_tokens("/v2/locations/{location_id}")`` gives
        ``["v2", "locations", "location", "location_id", "location", "id"]``.
    """
    return [token for term in _terms(text) for token in term]


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The distinct terms of a query; a term is a word with its singular form, if different."""
    return list(dict.fromkeys(_terms(text)))


def _terms(text: str) -> list[tuple[str, ...]]:
    terms: list[tuple[str, ...]] = []
    for raw in _RAW.findall(text):
        pieces = [p for part in re.split(r"[_-]", raw) for p in _CAMEL.findall(part)]
        words = [raw.lower()]
        if len(pieces) > 1:
            words.extend(p.lower() for p in pieces)
        for word in words:
            if word in STOP_WORDS or (len(word) == 1 and word.isalpha()):
                continue
            one = singular(word)
            terms.append((word, one) if one != word else (word,))
    return terms


def document_tokens(doc: Document) -> list[str]:
    """The tokens BM25 indexes for ``doc``: its ``title`` metadata, its text and its ``detail``
    metadata (the part of a compact document that was not embedded)."""
    parts = [doc.metadata.get("title"), doc.page_content, doc.metadata.get("detail")]
    return identifier_tokens("\n".join(p for p in parts if isinstance(p, str) and p))


class LexicalIndex:
    """BM25 statistics of a tokenised corpus, stored column-wise (term -> documents).

    Scores are the project's one BM25 (:mod:`apiatlas.graph.fts`, FTS5's formula);
    a query only touches the documents that contain its tokens, and the index round-trips
    through an ``.npz`` file, so a process that opens a project reads it instead of tokenising
    the corpus again.

    Attributes:
        terms: Token -> column, in order of first appearance in the corpus.
        indptr: Column ``c``'s documents are ``rows[indptr[c]:indptr[c + 1]]`` (ascending).
        rows: Document numbers, column after column.
        counts: How often the column's token occurs in each of those documents.
        ranks: Where the token first appears among each of those documents' distinct tokens
            (so that a subset orders its columns exactly as a new build would).
        lengths: Tokens per document.
        idf: Per column, the inverse document frequency.
        norms: Per document, the BM25 length norm.
    """

    def __init__(
        self,
        terms: dict[str, int],
        indptr: np.ndarray,
        rows: np.ndarray,
        counts: np.ndarray,
        ranks: np.ndarray,
        lengths: np.ndarray,
    ) -> None:
        self.terms = terms
        self.indptr = indptr
        self.rows = rows
        self.counts = counts
        self.ranks = ranks
        self.lengths = lengths
        n = len(lengths)
        self.avgdl = float(lengths.sum()) / n if n else 0.0
        self.idf = np.array([fts.idf(n, df) for df in np.diff(indptr).tolist()],
                            dtype=np.float64)
        self.norms = fts.length_norm(lengths.astype(np.float64), self.avgdl)

    @classmethod
    def build(cls, corpus: Sequence[Sequence[str]]) -> LexicalIndex:
        """Index ``corpus``, one token list per document."""
        terms: dict[str, int] = {}
        postings: list[list[tuple[int, int, int]]] = []
        for row, tokens in enumerate(corpus):
            for rank, (token, count) in enumerate(Counter(tokens).items()):
                column = terms.setdefault(token, len(terms))
                if column == len(postings):
                    postings.append([])
                postings[column].append((row, count, rank))
        indptr = np.zeros(len(postings) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(p) for p in postings])
        flat = [pair for column in postings for pair in column]
        table = np.array(flat, dtype=np.int64).reshape(-1, 3)
        lengths = np.array([len(tokens) for tokens in corpus], dtype=np.int64)
        return cls(terms, indptr, *(table[:, i].copy() for i in range(3)), lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    def documents_with(self, token: str) -> np.ndarray:
        """The documents containing ``token``, ascending."""
        column = self.terms.get(token)
        if column is None:
            return self.rows[:0]
        return self.rows[self.indptr[column]:self.indptr[column + 1]]

    def term_idf(self, token: str) -> float | None:
        """The idf of ``token``; ``None`` when no document has it."""
        column = self.terms.get(token)
        return None if column is None else float(self.idf[column])

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 of every document for ``query``'s tokens (a repeated token counts again)."""
        score = np.zeros(len(self.lengths))
        for token in query:
            column = self.terms.get(token)
            if column is None:
                continue
            span = slice(self.indptr[column], self.indptr[column + 1])
            rows = self.rows[span]
            score[rows] += fts.term_score(float(self.idf[column]),
                                         self.counts[span].astype(np.float64), self.norms[rows])
        return score

    def subset(self, keep: Sequence[int]) -> LexicalIndex:
        """The index of documents ``keep`` (ascending), renumbered from 0, with statistics over
        those documents only."""
        number = np.full(len(self.lengths), -1, dtype=np.int64)
        number[np.asarray(keep, dtype=np.int64)] = np.arange(len(keep))
        columns = np.repeat(np.arange(len(self.terms)), np.diff(self.indptr))
        mapped = number[self.rows]
        mask = mapped >= 0
        counts_per_column = np.bincount(columns[mask], minlength=len(self.terms))
        present = np.flatnonzero(counts_per_column)
        # Columns in order of first appearance among the kept documents, as a new build would:
        # by the first kept document that has the token, then by its place in that document.
        place = mapped * (int(self.ranks.max(initial=0)) + 1) + self.ranks
        first = np.full(len(self.terms), np.iinfo(np.int64).max)
        np.minimum.at(first, columns[mask], place[mask])
        order = present[np.argsort(first[present], kind="stable")]
        names = list(self.terms)
        new_column = np.full(len(self.terms), -1, dtype=np.int64)
        new_column[order] = np.arange(len(order))
        kept_columns = new_column[columns[mask]]
        sort = np.lexsort((mapped[mask], kept_columns))
        indptr = np.zeros(len(order) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum(counts_per_column[order])
        return LexicalIndex(
            {names[c]: i for i, c in enumerate(order.tolist())},
            indptr,
            mapped[mask][sort],
            self.counts[mask][sort],
            self.ranks[mask][sort],
            self.lengths[np.asarray(keep, dtype=np.int64)],
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """The index as arrays (for ``np.savez``; no pickles)."""
        text = "\n".join(self.terms).encode("utf-8")
        return {"terms": np.frombuffer(text, dtype=np.uint8), "indptr": self.indptr,
                "rows": self.rows, "counts": self.counts, "ranks": self.ranks,
                "lengths": self.lengths}

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray]) -> LexicalIndex:
        """The index :meth:`arrays` wrote."""
        text = data["terms"].tobytes().decode("utf-8")
        names = text.split("\n") if text else []
        return cls({t: i for i, t in enumerate(names)}, data["indptr"], data["rows"],
                   data["counts"], data["ranks"], data["lengths"])


class BM25Retriever(BaseRetriever):
    """BM25 over :func:`identifier_tokens`, returning only documents that share a token.

    Returned documents are copies whose metadata carry the BM25 ``score`` and ``coverage``: the
    share of the query's information (IDF mass of its terms; a term absent from the corpus
    weighs as much as the rarest possible one) that the document matches. Coverage tells a
    document matching ``CreateLocation`` (1.0) from one matching only the ``new`` of
    "add a new facility" (close to 0), which raw BM25 scores cannot.

    Attributes:
        docs: The corpus, in ranking tie-break order.
        k: How many documents to return.
        index: The corpus's :class:`LexicalIndex` (built from ``docs`` when not given).
    """

    docs: list[Document]
    k: int = 10
    index: LexicalIndex | None = None

    def model_post_init(self, context: Any, /) -> None:
        """Tokenise the corpus once, unless its index came with it."""
        if self.index is None:
            self.index = LexicalIndex.build([document_tokens(doc) for doc in self.docs])

    @classmethod
    def from_documents(cls, docs: list[Document], *, k: int = 10, **kwargs: Any) -> BM25Retriever:
        """Build a retriever over ``docs``."""
        return cls(docs=list(docs), k=k, **kwargs)

    def rank(self, query: str, k: int | None = None) -> list[Document]:
        """The best ``k`` documents for ``query``; empty when no query token is in the corpus."""
        limit = self.k if k is None else k
        terms = query_terms(query)
        index = self.index
        if index is None or not index.terms or not terms or limit <= 0:
            return []
        # Presence, not score > 0: a token's documents, whatever their scores.
        having = {token: index.documents_with(token)
                  for token in dict.fromkeys(t for term in terms for t in term)}
        hits = np.unique(np.concatenate([index.rows[:0], *having.values()]))
        scores = index.scores(identifier_tokens(query))
        best = top_positions(scores, limit, among=hits)
        members = {token: set(rows.tolist()) for token, rows in having.items()}
        weights = [_term_weight(index, term) for term in terms]
        total = sum(weights)
        found = []
        for i in best:
            matched = sum(w for w, term in zip(weights, terms)
                          if any(i in members[t] for t in term))
            doc = self.docs[i]
            meta = {**doc.metadata, "score": float(scores[i]), "coverage": matched / total}
            found.append(Document(page_content=doc.page_content, metadata=meta, id=doc.id))
        return found

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return self.rank(query, k)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        return await run_in_executor(None, self.rank, query, k)


def _term_weight(index: LexicalIndex, term: tuple[str, ...]) -> float:
    idfs = [idf for t in term if (idf := index.term_idf(t)) is not None]
    if not idfs:
        # Unknown to the corpus: weigh it like a word found in no document at all.
        return fts.idf(len(index), 0)
    return max(idfs)
