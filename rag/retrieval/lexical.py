"""Keyword retrieval (BM25) with a tokenizer that understands API identifiers.

Developers type ``CreateLocation``, ``location_id`` or ``/v2/locations`` as often as prose; a plain
word tokenizer would treat each as one opaque word. :func:`identifier_tokens` emits the whole
identifier *and* its parts, so ``create location`` finds ``CreateLocation`` and the reverse.
"""

from __future__ import annotations

import math
import re
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import PrivateAttr
from rank_bm25 import BM25Okapi

from apiatlas.graph.lexicon import STOP_WORDS
from apiatlas.graph.words import singular

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


class BM25Retriever(BaseRetriever):
    """BM25Okapi over :func:`identifier_tokens`, returning only documents that share a token.

    Returned documents are copies whose metadata carry the BM25 ``score`` and ``coverage``: the
    share of the query's information (IDF mass of its terms; a term absent from the corpus
    weighs as much as the rarest possible one) that the document matches. Coverage tells a
    document matching ``CreateLocation`` (1.0) from one matching only the ``new`` of
    "add a new facility" (close to 0), which raw BM25 scores cannot.

    Attributes:
        docs: The corpus, in ranking tie-break order.
        k: How many documents to return.
    """

    docs: list[Document]
    k: int = 10
    _bm25: BM25Okapi | None = PrivateAttr(default=None)
    _vocab: list[frozenset[str]] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        """Tokenise the corpus once."""
        corpus = [document_tokens(doc) for doc in self.docs]
        self._vocab = [frozenset(tokens) for tokens in corpus]
        # BM25Okapi divides by the average length and the vocabulary size: both must be > 0.
        if any(corpus):
            self._bm25 = BM25Okapi(corpus)

    @classmethod
    def from_documents(cls, docs: list[Document], *, k: int = 10, **kwargs: Any) -> BM25Retriever:
        """Build a retriever over ``docs``."""
        return cls(docs=list(docs), k=k, **kwargs)

    def rank(self, query: str, k: int | None = None) -> list[Document]:
        """The best ``k`` documents for ``query``; empty when no query token is in the corpus."""
        limit = self.k if k is None else k
        terms = query_terms(query)
        if self._bm25 is None or not terms or limit <= 0:
            return []
        wanted = {token for term in terms for token in term}
        scores = self._bm25.get_scores(identifier_tokens(query))
        # Presence, not score > 0: with tiny corpora BM25Okapi's idf floor can be negative.
        hits = [i for i, vocab in enumerate(self._vocab) if not wanted.isdisjoint(vocab)]
        hits.sort(key=lambda i: -float(scores[i]))
        weights = [_term_weight(self._bm25, term) for term in terms]
        total = sum(weights)
        found = []
        for i in hits[:limit]:
            matched = sum(w for w, t in zip(weights, terms) if not self._vocab[i].isdisjoint(t))
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


def _term_weight(bm25: BM25Okapi, term: tuple[str, ...]) -> float:
    idfs = [bm25.idf[t] for t in term if t in bm25.idf]
    if not idfs:
        # Unknown to the corpus: weigh it like a word found in no document at all.
        return math.log((bm25.corpus_size + 0.5) / 0.5)
    # Floored: a word in most documents still counts a little (BM25Okapi's floor can be < 0).
    return max(max(idfs), 0.01)
