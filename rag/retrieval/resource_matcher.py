"""Mapping a question's resource terms onto the graph's resources: names and aliases first,
then embedding similarity.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel

from apiatlas.graph.model import ResourceInfo
from apiatlas.graph.words import singular, split_words
from apiatlas.rag.runtime.embeddings import unit_rows

# Calibrated with all-MiniLM-L6-v2 against the sample API's resource names and aliases
# (carrier, location, quote, shipment, tracking event, webhook + their prose aliases), cosine of
# single terms. True synonyms that are not aliases: quotation 0.76, price 0.80, transporter 0.64,
# freight 0.63, package 0.63, shipper 0.60, store 0.54, hub 0.42. Unrelated words: invoice 0.50,
# payment 0.53, account 0.56, user 0.48, customer 0.47, email 0.48, product 0.45, method 0.38,
# payment method 0.36 (outliers: order 0.62 -> shipment, discount 0.73 -> pricing). 0.60 keeps
# the strong synonyms and leaves >= 0.04 margin above every unrelated word but those two
# commerce near-synonyms: missing things must abstain, so precision wins over recall here;
# aliases mined from the spec's prose ("also called couriers") cover most synonyms lexically.
SEMANTIC_THRESHOLD = 0.60


class ResourceMatch(BaseModel):
    """A question term matched to a graph resource.

    Attributes:
        resource: The matched resource.
        term: The question term that matched.
        score: 1.0 for a lexical match, the cosine similarity for a semantic one.
        how: ``lexical`` (name or alias) or ``semantic`` (embedding similarity).
    """

    resource: ResourceInfo
    term: str
    score: float
    how: Literal["lexical", "semantic"]


def _norm(phrase: str) -> str:
    words = split_words(phrase)
    if words:
        words[-1] = singular(words[-1])
    return " ".join(words)


class ResourceMatcher:
    """Maps question terms onto resources: names and aliases first, then embedding similarity.

    The resource names are embedded once when the matcher is built; build one per
    (project, api) and rebuild it when the resources change (see
    :class:`~apiatlas.rag.retrieval.graph.KnowledgeGraphRetriever`).

    Args:
        resources: The resources of one project (optionally one API).
        embeddings: The embedding model used for the semantic step.
        threshold: Minimum cosine similarity for a semantic match.
        vectors: The names' vectors when already known (a :attr:`vectors` kept from an earlier
            matcher over the same resources and model); embedded otherwise.
    """

    def __init__(
        self,
        resources: Sequence[ResourceInfo],
        embeddings: Embeddings,
        *,
        threshold: float = SEMANTIC_THRESHOLD,
        vectors: Sequence[Sequence[float]] | None = None,
    ) -> None:
        self.resources = list(resources)
        self.threshold = threshold
        self._embeddings = embeddings
        self._names: dict[str, list[int]] = {}
        for i, res in enumerate(self.resources):
            for name in [res.name, *res.aliases]:
                norm = _norm(name)
                if norm:
                    self._names.setdefault(norm, []).append(i)
        self._texts = list(self._names)
        if vectors is None or len(vectors) != len(self._texts):
            vectors = embeddings.embed_documents(self._texts) if self._texts else []
        self.vectors = [list(v) for v in vectors]
        """The embedded names, in name order (what a later matcher may be given back)."""
        self._vectors = unit_rows(self.vectors, np.float64)

    def match(
        self,
        terms: Sequence[str],
        *,
        names: Collection[str] = (),
        memo: dict[str, list[float]] | None = None,
    ) -> list[ResourceMatch]:
        """Resources named by ``terms``, best first; lexical matches beat semantic ones.

        A term already covered by a longer matched phrase (``payment`` inside ``payment method``)
        is not matched again, so a phrase's parts cannot drag in unrelated resources.

        Args:
            terms: The question's resource terms.
            names: Proper names (the API's own name, places, companies). A term with one of
                these words matches only a resource of that exact name: its embedding says
                what the name sounds like, not what the question asks about.
            memo: Similarity rows of terms already embedded for this question (see
                :meth:`similarities`).
        """
        matches: dict[str, ResourceMatch] = {}
        covered: set[str] = set()
        pending: list[str] = []
        for term in terms:
            if set(term.split()) <= covered:
                continue
            hit = self._names.get(_norm(term))
            if hit is None:
                if not set(term.split()) & set(names):
                    pending.append(term)
                continue
            covered.update(term.split())
            for i in hit:
                self._keep(matches, ResourceMatch(
                    resource=self.resources[i], term=term, score=1.0, how="lexical"
                ))
        pending = [t for t in pending if not set(t.split()) <= covered]
        if pending and len(self._vectors):
            for term, scores in zip(pending, self.similarities(pending, memo)):
                best = max(range(len(scores)), key=scores.__getitem__)
                if scores[best] >= self.threshold:
                    for i in self._names[self._texts[best]]:
                        self._keep(matches, ResourceMatch(
                            resource=self.resources[i], term=term, score=scores[best],
                            how="semantic",
                        ))
        return sorted(matches.values(), key=lambda m: -m.score)

    def similarities(
        self, terms: Sequence[str], memo: dict[str, list[float]] | None = None
    ) -> list[list[float]]:
        """Cosine similarity of each term to each known resource name (rows follow ``terms``).

        ``memo`` (term -> row) spares one question's terms a second model call: rows found
        there are reused, and the terms embedded now (in one batch) are added to it.
        """
        if not len(self._vectors):
            return [[] for _ in terms]
        memo = {} if memo is None else memo
        missing = [t for t in dict.fromkeys(terms) if t not in memo]
        if missing:
            vectors = unit_rows(self._embeddings.embed_documents(missing), np.float64)
            memo.update(zip(missing, (vectors @ self._vectors.T).tolist(), strict=True))
        return [memo[t] for t in terms]

    def closest(
        self, terms: Sequence[str], n: int = 3, memo: dict[str, list[float]] | None = None
    ) -> list[ResourceInfo]:
        """The resources nearest to ``terms`` regardless of threshold (for "did you mean");
        ``memo`` as in :meth:`similarities`."""
        if not terms or not len(self._vectors):
            return []
        best: dict[int, float] = {}
        for scores in self.similarities(terms, memo):
            for j, score in enumerate(scores):
                for i in self._names[self._texts[j]]:
                    best[i] = max(best.get(i, -1.0), score)
        ranked = sorted(best, key=lambda i: -best[i])[:n]
        return [self.resources[i] for i in ranked]

    @staticmethod
    def _keep(matches: dict[str, ResourceMatch], match: ResourceMatch) -> None:
        old = matches.get(match.resource.key)
        if old is None or match.score > old.score:
            matches[match.resource.key] = match
