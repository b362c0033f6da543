"""The knowledge-graph retriever: question -> ranked endpoints, their prerequisites, or nothing.

Ranking, best first: endpoints named outright (``POST /v2/locations``, ``createLocation``);
endpoints of the matched resource(s) that do what the question asks (operation kind, the cue
verb in the operation name, the HTTP shape of that kind); full-text hits as tie-breakers, and as
the only route when the question names no resource. When the question names a thing the graph
does not have (``invoices`` on a logistics API) the lookup returns no endpoints: the composer's
abstention relies on that.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from apiatlas.graph.model import Dependency, EndpointDetail, EndpointRef
from apiatlas.graph.store import TRAIL_DEPTH, KnowledgeGraphStore
from apiatlas.graph.lexicon import VERB_WORDS
from apiatlas.rag.retrieval.endpoint_fit import (
    endpoint_text,
    intent_fit,
    named_in,
    replacements,
    version_bias,
    words_of,
)
from apiatlas.rag.question.intent import Intent, analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.matcher_cache import MatcherCache
from apiatlas.rag.retrieval.resource_matcher import ResourceMatch, ResourceMatcher
from apiatlas.rag.runtime.threads import one_blas_thread
from apiatlas.rag.question.vocabulary import Vocabulary

_ALL = 100_000
_SEARCH_LIMIT = 20
RESOURCE_ENDPOINTS = 200
"""Endpoints of one matched resource that are scored."""
PREREQUISITE_SOURCES = 2
"""Live primary endpoints whose REQUIRES trails give "call these first"."""
CLOSEST_RESOURCES = 2
"""When nothing matches, the resources nearest to the unmatched words ("did you mean")."""
CLOSEST_READ = 50
"""Endpoints read from each nearest resource before the asked kind sorts them."""
CLOSEST_PER_RESOURCE = 2
"""Endpoints offered per nearest resource."""
CARD_DESCRIPTION_CHARS = 500
"""Characters of an endpoint's description on the retriever's text card."""
# Score bands: an explicit mention always beats a resource match, which beats a text hit.
EXPLICIT_SCORE = 100.0
"""The graph score of an endpoint the question names outright."""
_DEPRECATED_PENALTY = 25.0
QUALIFIER_WEIGHT = 0.5
"""Weight of a resource match made by a qualifier of the question's subject."""
RESOURCE_POINTS = 10.0
"""What a matched resource adds to each of its endpoints that fit the intent, times the match's
score (1 for a name, the cosine for a semantic match)."""
OWN_RESOURCE_BONUS = 5.0
"""Added when the endpoint's own resource is the matched one, not a resource it sits under."""
TEXT_BONUS = 5.0
"""What a full-text hit adds to an endpoint already scored, times its score over the best hit's:
the tie-breaker."""
TEXT_ROUTE_SHARE = 0.5
"""The share of :func:`intent_fit` a full-text hit scores when no resource matched."""


class KnowledgeGraphRetriever(BaseRetriever):
    """A LangChain retriever over the knowledge graph, one Document per endpoint.

    Per-call overrides: ``retriever.invoke(q, project=..., api=..., k=...)``.

    Attributes:
        store: The knowledge-graph store.
        embeddings: Embeddings used to match question terms to resource names.
        project: Default project.
        api: Default API (``None`` searches every API of the project).
        k: Default number of primary endpoints.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: KnowledgeGraphStore
    embeddings: Embeddings
    project: str = "default"
    api: str | None = None
    k: int = 5
    matchers: MatcherCache = Field(default_factory=MatcherCache, exclude=True)
    derived_dir: Path | None = None
    """Where the vocabulary and the resource vectors are kept between processes."""

    def model_post_init(self, context: Any, /) -> None:
        if self.derived_dir is not None:
            self.matchers.folder = self.derived_dir

    def warm(self, project: str) -> None:
        """Build (and, with :attr:`derived_dir`, keep) the project's vocabulary and resource
        matcher, so that its first question does not pay for them."""
        resources = self.matchers.resources(self.store, project, None)
        self.matchers.vocabulary(self.store, project, None, resources)
        self.matchers.get(project, None, resources, self.embeddings)

    def invalidate(self, project: str | None = None) -> None:
        """Drop cached resource embeddings (they are also rebuilt whenever resources change)."""
        self.matchers.invalidate(project)

    def vocabulary(self, project: str, api: str | None = None) -> Vocabulary:
        """The words the project's specs and guide titles use (cached per project and API)."""
        resources = self.matchers.resources(self.store, project, api)
        return self.matchers.vocabulary(self.store, project, api, resources)

    def api_names(self, project: str, api: str | None = None) -> frozenset[str]:
        """Words of the APIs' own names and titles (cached per project and API)."""
        resources = self.matchers.resources(self.store, project, api)
        return self.matchers.api_names(self.store, project, api, resources)

    def analyse(self, question: str, *, project: str, api: str | None = None) -> Intent:
        """Analyse ``question`` after correcting typos against the project's vocabulary."""
        corrected = self.vocabulary(project, api).correct(question, extra=VERB_WORDS)
        return analyse_question(corrected).model_copy(update={"question": question})

    def lookup(
        self,
        question: str,
        *,
        project: str,
        api: str | None = None,
        k: int = 5,
        intent: Intent | None = None,
    ) -> GraphLookup:
        """Rank the endpoints that answer ``question`` and collect their prerequisites.

        Args:
            question: The developer's question.
            project: Project to search.
            api: Restrict to one API of the project.
            k: Maximum number of primary endpoints.
            intent: A precomputed analysis of ``question`` (analysed here when omitted).
        """
        intent = intent or self.analyse(question, project=project, api=api)
        resources = self.matchers.resources(self.store, project, api)
        matcher = self.matchers.get(project, api, resources, self.embeddings)
        names = {*intent.names, *self.matchers.api_names(self.store, project, api, resources)}
        # The terms' similarities to the resource names, embedded once for this question.
        memo: dict[str, list[float]] = {}
        matches = matcher.match(intent.resource_terms, names=names, memo=memo)
        matched_words = {w for m in matches for w in m.term.split()}
        unmatched = [t for t in intent.resource_terms if not set(t.split()) <= matched_words]
        scored, pool = self._score(project, api, intent, matches, unmatched)
        ranked = sorted(scored.values(), key=lambda r: (-r.score, len(r.path), r.key))
        primary = ranked[:k]
        lookup = GraphLookup(
            intent=intent,
            primary=primary,
            matched_resources=matches,
            unmatched_terms=unmatched,
            alternatives=[] if primary else pool[:k],
            replacements=replacements(primary, pool),
            apis=sorted({r.api for r in resources}),
        )
        if not primary and not lookup.alternatives and unmatched:
            lookup.alternatives = self._closest(
                project, api, matcher, intent, unmatched, k, memo
            )
        lookup.prerequisites = self.prerequisites(project, primary)
        return lookup

    def _score(
        self,
        project: str,
        api: str | None,
        intent: Intent,
        matches: list[ResourceMatch],
        unmatched: list[str],
    ) -> tuple[dict[str, EndpointRef], list[EndpointRef]]:
        """Scored candidates by key, and the pool of near things for alternatives."""
        scored: dict[str, EndpointRef] = {}

        def add(ref: EndpointRef, score: float) -> None:
            score += version_bias(ref, intent)
            if ref.deprecated and not intent.wants_deprecated and not intent.versions:
                score -= _DEPRECATED_PENALTY
            old = scored.get(ref.key)
            if old is None or score > old.score:
                scored[ref.key] = ref.model_copy(update={"score": round(score, 3)})

        if intent.explicit:
            for ref in named_in(self.store.find_endpoints(project, api=api, limit=_ALL), intent):
                add(ref, EXPLICIT_SCORE)
        explicit_found = bool(scored)
        pool: list[EndpointRef] = []
        subjects = set(intent.subject_terms([m.term for m in matches]))
        for match in matches:
            endpoints = self.store.find_endpoints(
                project, resource=match.resource.key, api=api, limit=RESOURCE_ENDPOINTS
            )
            pool += endpoints
            # A qualifier ("orders of one customer") narrows the subject down; its own
            # endpoints stay candidates, ranked below the subject's.
            weight = 1.0 if match.term in subjects else QUALIFIER_WEIGHT
            for ref in endpoints:
                fit = intent_fit(ref, intent)
                if fit > 0:
                    own = OWN_RESOURCE_BONUS if ref.resource == match.resource.key else 0.0
                    add(ref, fit + weight * (RESOURCE_POINTS * match.score + own))
        text = " ".join(intent.keywords) or intent.question
        hits = self.store.search(project, text, api=api, limit=_SEARCH_LIMIT)
        top = max((h.score for h in hits), default=0.0) or 1.0
        needed = [words_of(t) for t in unmatched]
        text_route = not matches and not explicit_found
        for hit in hits:
            bonus = TEXT_BONUS * hit.score / top
            if hit.key in scored:
                scored[hit.key].score = round(scored[hit.key].score + bonus, 3)
            elif text_route and all(n <= words_of(endpoint_text(hit)) for n in needed):
                # The text route: only hits that actually mention every unmatched term, so a
                # question about a missing thing ("invoices") yields nothing rather than a guess.
                fit = intent_fit(hit, intent)
                if fit > 0:
                    add(hit, fit * TEXT_ROUTE_SHARE + bonus)
        if not pool:
            pool = [
                h for h in hits
                if not needed or any(n & words_of(endpoint_text(h)) for n in needed)
            ]
        return scored, pool

    def _closest(
        self,
        project: str,
        api: str | None,
        matcher: ResourceMatcher,
        intent: Intent,
        terms: list[str],
        k: int,
        memo: dict[str, list[float]],
    ) -> list[EndpointRef]:
        """Endpoints of the resources nearest to ``terms``, those doing the asked kind first
        (``memo``: the similarity rows :meth:`ResourceMatcher.match` already made)."""
        out: list[EndpointRef] = []
        for resource in matcher.closest(terms, n=CLOSEST_RESOURCES, memo=memo):
            found = self.store.find_endpoints(
                project, resource=resource.key, api=api, limit=CLOSEST_READ
            )
            out += sorted(found, key=lambda r: -intent_fit(r, intent))[:CLOSEST_PER_RESOURCE]
        return out[:k]

    def prerequisites(
        self,
        project: str,
        primary: list[EndpointRef],
        trails: Mapping[str, list[Dependency]] | None = None,
    ) -> list[Dependency]:
        """Dependency trails of the leading primaries; live providers before deprecated ones.

        ``trails`` holds trails already read, by endpoint key; the others are read here.
        """
        seen: set[tuple[str, str]] = set()
        out: list[Dependency] = []
        primary_keys = {p.key for p in primary}
        known = trails or {}
        # The first few primaries are the ones the answer details; their trails are what matter.
        for ref in [p for p in primary if not p.deprecated][:PREREQUISITE_SOURCES] or primary[:1]:
            trail = known.get(ref.key)
            if trail is None:
                trail = self.store.dependency_trail(project, ref.key, max_depth=TRAIL_DEPTH)
            for dep in trail:
                pair = (dep.provider.key, dep.parameter)
                if pair not in seen and dep.provider.key not in primary_keys:
                    seen.add(pair)
                    out.append(dep)
        # Stable sort keeps the store's order (nearest first, create before list) otherwise.
        return sorted(out, key=lambda d: (d.depth, d.provider.deprecated))

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        project = kwargs.get("project") or self.project
        api = kwargs.get("api", self.api)
        k = int(kwargs.get("k") or self.k)
        with one_blas_thread():
            lookup = self.lookup(query, project=project, api=api, k=k)
        refs = [(p, "primary") for p in lookup.primary]
        refs += [(d.provider, "prerequisite") for d in lookup.prerequisites]
        docs: list[Document] = []
        for ref, role in refs:
            detail = self.store.get_endpoint(project, ref.key)
            if detail is not None:
                docs.append(endpoint_card(detail, role=role, score=ref.score))
        return docs


def endpoint_card(detail: EndpointDetail, *, role: str, score: float) -> Document:
    """A short text card for one endpoint, with citation metadata."""
    ep = detail.endpoint
    lines = [f"{ep.signature} — {ep.summary}".rstrip(" —")]
    if ep.deprecated:
        lines.append("Deprecated.")
    if detail.description:
        lines.append(detail.description.strip()[:CARD_DESCRIPTION_CHARS])
    required = [f"{p.name} ({p.location})" for p in detail.parameters if p.required]
    if required:
        lines.append("Required parameters: " + ", ".join(required))
    fields = [f.name for f in detail.request_fields if f.required]
    if fields:
        lines.append("Required body fields: " + ", ".join(fields))
    return Document(
        page_content="\n".join(lines),
        metadata={
            "key": ep.key,
            "api": ep.api,
            "method": ep.method,
            "path": ep.path,
            "role": role,
            "score": score,
            "source": ep.source,
            "pointer": ep.pointer,
        },
    )
