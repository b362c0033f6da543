"""The knowledge-graph retriever: question -> ranked endpoints, their prerequisites, or nothing.

Ranking, best first: endpoints named outright (``POST /v2/locations``, ``createLocation``);
endpoints of the matched resource(s) that do what the question asks (operation kind, the cue
verb in the operation name, the HTTP shape of that kind); full-text hits as tie-breakers, and as
the only route when the question names no resource. When the question names a thing the graph
does not have (``invoices`` on a logistics API) the lookup returns no endpoints: the composer's
abstention relies on that.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
import numpy as np
from pydantic import ConfigDict, Field

from apiatlas.files import keep_only, write_atomic
from apiatlas.graph.build.resources import guide_definitions, with_definitions
from apiatlas.graph.model import Dependency, EndpointDetail, EndpointRef, ResourceInfo
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.words import is_plural, singular, split_words
from apiatlas.graph.lexicon import META_WORDS, VERB_WORDS
from apiatlas.rag.retrieval.embeddings import model_id
from apiatlas.rag.retrieval.intent import Intent, analyse_question, normalise_path
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.resource_matcher import ResourceMatch, ResourceMatcher
from apiatlas.rag.retrieval.threads import one_blas_thread
from apiatlas.rag.retrieval.vocabulary import Vocabulary

_ALL = 100_000
_SEARCH_LIMIT = 20
# Score bands: an explicit mention always beats a resource match, which beats a text hit.
EXPLICIT_SCORE = 100.0
"""The graph score of an endpoint the question names outright."""
_DEPRECATED_PENALTY = 25.0
QUALIFIER_WEIGHT = 0.5
"""Weight of a resource match made by a qualifier of the question's subject."""


class _MatcherCache:
    """One :class:`ResourceMatcher` per (project, api), rebuilt when the resources change.

    The resource list is read again only when the store's revision of the project moved (one
    cheap query instead of the whole list, on every question). The matchers are keyed by a
    fingerprint of the resources, so an ingest that adds, removes or renames resources (or
    aliases) invalidates the cached embeddings without anyone having to tell us.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        """Where vocabularies and resource vectors are kept between processes (``None``: not)."""
        self._lock = threading.Lock()
        # (revision, resources, their fingerprint): the fingerprint is worked out once per read,
        # not on every question (5,000 resources at 10,000 operations).
        self._resources: dict[tuple[str, str | None], tuple[str, list[ResourceInfo], str]] = {}
        self._cache: dict[tuple[str, str | None], tuple[str, ResourceMatcher]] = {}
        self._vocab: dict[tuple[str, str | None], tuple[str, Vocabulary]] = {}
        self._names: dict[tuple[str, str | None], tuple[str, frozenset[str]]] = {}
        self._defined: dict[tuple[str, str | None], tuple[str, list[tuple[str, str]]]] = {}

    def resources(
        self, store: KnowledgeGraphStore, project: str, api: str | None
    ) -> list[ResourceInfo]:
        """The resources of the project (or one API), with the aliases the project's guides
        define for them, cached until the project's revision moves."""
        revision = store.revision(project)  # read first: a later ingest can only bump it again
        with self._lock:
            hit = self._resources.get((project, api))
            if revision and hit is not None and hit[0] == revision:
                return hit[1]
        defined = self._definitions(store, project, revision)
        resources = with_definitions(store.resources(project, api=api), defined)
        with self._lock:
            self._resources[(project, api)] = (revision, resources, _digest(resources))
        return resources

    def _definitions(
        self, store: KnowledgeGraphStore, project: str, revision: str
    ) -> list[tuple[str, str]]:
        """The project's guide definitions at ``revision``: read from its guide sections once
        per revision (kept beside the vocabulary), whichever API a question is scoped to."""
        with self._lock:
            hit = self._defined.get((project, None))
            if revision and hit is not None and hit[0] == revision:
                return hit[1]
        path = self._path("definitions", project, None, revision) if revision else None
        found = _load_json(path)
        defined = [(s, a) for s, a in found] if found is not None else None
        if defined is None:
            defined = guide_definitions(store.nodes(project, "DocSection"))
            if path is not None:
                _write_replacing(path, json.dumps(defined).encode("utf-8"))
        with self._lock:
            self._defined[(project, None)] = (revision, defined)
        return defined

    def _fingerprint(self, project: str, api: str | None, resources: list[ResourceInfo]) -> str:
        """:func:`_digest` of ``resources``, remembered when they are the list last read."""
        with self._lock:
            hit = self._resources.get((project, api))
        return hit[2] if hit is not None and hit[1] is resources else _digest(resources)

    def get(
        self, project: str, api: str | None, resources: list[ResourceInfo], embeddings: Embeddings
    ) -> ResourceMatcher:
        digest = self._fingerprint(project, api, resources)
        with self._lock:
            hit = self._cache.get((project, api))
            if hit is not None and hit[0] == digest:
                return hit[1]
        path = self._path("resources", project, api, f"{digest}|{model_id(embeddings)}")
        vectors = _load_vectors(path)
        matcher = ResourceMatcher(resources, embeddings, vectors=vectors)
        if path is not None and vectors is None:
            _save_vectors(path, matcher.vectors)
        with self._lock:
            self._cache[(project, api)] = (digest, matcher)
        return matcher

    def _path(self, kind: str, project: str, api: str | None, version: str) -> Path | None:
        """``<folder>/<kind>-<owner>-<version>.<ext>``, one file per (project, api) and version."""
        if self.folder is None or version.startswith(":"):
            return None  # no revision yet: nothing stable to key a file on
        owner = hashlib.sha256(f"{project}|{api or ''}".encode()).hexdigest()[:16]
        key = hashlib.sha256(version.encode()).hexdigest()[:16]
        ext = "json" if kind in ("vocabulary", "definitions") else "npy"
        return self.folder / f"{kind}-{owner}-{key}.{ext}"

    def _version(self, project: str, api: str | None, resources: list[ResourceInfo]) -> str:
        """The revision the resources were read at, plus their fingerprint (the vocabulary and
        the API names come from more than the resources, so they follow the revision)."""
        with self._lock:
            hit = self._resources.get((project, api))
        return f"{hit[0] if hit else ''}:{self._fingerprint(project, api, resources)}"

    def vocabulary(
        self,
        store: KnowledgeGraphStore,
        project: str,
        api: str | None,
        resources: list[ResourceInfo],
    ) -> Vocabulary:
        """The project's vocabulary, rebuilt with the matcher (when the resources change)."""
        digest = self._version(project, api, resources)
        with self._lock:
            hit = self._vocab.get((project, api))
            if hit is not None and hit[0] == digest:
                return hit[1]
        path = self._path("vocabulary", project, api, digest)
        vocab = _load_vocabulary(path)
        if vocab is None:
            vocab = Vocabulary.from_store(store, project, api)
            if path is not None:
                _write_replacing(path, json.dumps(sorted(vocab.words)).encode("utf-8"))
        with self._lock:
            self._vocab[(project, api)] = (digest, vocab)
        return vocab

    def api_names(
        self,
        store: KnowledgeGraphStore,
        project: str,
        api: str | None,
        resources: list[ResourceInfo],
    ) -> frozenset[str]:
        """Words of the APIs' own names and titles ("parcelroute"), minus generic words."""
        digest = self._version(project, api, resources)
        with self._lock:
            hit = self._names.get((project, api))
            if hit is not None and hit[0] == digest:
                return hit[1]
        words: set[str] = set()
        for node in store.nodes(project, "Api"):
            if api is None or node.props.get("name") == api:
                for prop in ("name", "title"):
                    words.update(split_words(str(node.props.get(prop) or "")))
        names = frozenset(words - META_WORDS)
        with self._lock:
            self._names[(project, api)] = (digest, names)
        return names

    def invalidate(self, project: str | None = None) -> None:
        with self._lock:
            for cache in (self._resources, self._cache, self._vocab, self._names, self._defined):
                for key in [k for k in cache if project is None or k[0] == project]:
                    del cache[key]


def _load_vocabulary(path: Path | None) -> Vocabulary | None:
    words = _load_json(path)
    return Vocabulary.of_words(words) if words is not None else None


def _load_json(path: Path | None) -> Any:
    """The JSON value kept at ``path``, or ``None`` when there is none or it is unreadable (a
    crash mid-write): then it is built again."""
    if path is None or not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _load_vectors(path: Path | None) -> list[list[float]] | None:
    if path is None or not path.exists():
        return None
    try:
        return np.load(path, allow_pickle=False).tolist()
    except (OSError, ValueError):
        return None


def _save_vectors(path: Path, vectors: list[list[float]]) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(vectors, dtype=np.float64))
    _write_replacing(path, buffer.getvalue())


def _write_replacing(path: Path, data: bytes) -> None:
    """Write ``path`` atomically and remove the older versions of the same (kind, owner)."""
    write_atomic(path, data)
    kind, owner = path.name.split("-")[:2]
    keep_only(path, f"{kind}-{owner}-*{path.suffix}")


def _digest(resources: list[ResourceInfo]) -> str:
    return hashlib.sha256(
        "\n".join(
            f"{r.key}\t{r.name}\t{'|'.join(sorted(r.aliases))}" for r in resources
        ).encode()
    ).hexdigest()


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
    matchers: _MatcherCache = Field(default_factory=_MatcherCache, exclude=True)
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
            score += _version_bias(ref, intent)
            if ref.deprecated and not intent.wants_deprecated and not intent.versions:
                score -= _DEPRECATED_PENALTY
            old = scored.get(ref.key)
            if old is None or score > old.score:
                scored[ref.key] = ref.model_copy(update={"score": round(score, 3)})

        if intent.explicit:
            for ref in self.store.find_endpoints(project, api=api, limit=_ALL):
                if named_outright(ref, intent):
                    add(ref, EXPLICIT_SCORE)
        explicit_found = bool(scored)
        pool: list[EndpointRef] = []
        subjects = set(intent.subject_terms([m.term for m in matches]))
        for match in matches:
            endpoints = self.store.find_endpoints(
                project, resource=match.resource.key, api=api, limit=200
            )
            pool += endpoints
            # A qualifier ("orders of one customer") narrows the subject down; its own
            # endpoints stay candidates, ranked below the subject's.
            weight = 1.0 if match.term in subjects else QUALIFIER_WEIGHT
            for ref in endpoints:
                fit = intent_fit(ref, intent)
                if fit > 0:
                    own = 5.0 if ref.resource == match.resource.key else 0.0
                    add(ref, fit + weight * (10.0 * match.score + own))
        text = " ".join(intent.keywords) or intent.question
        hits = self.store.search(project, text, api=api, limit=_SEARCH_LIMIT)
        top = max((h.score for h in hits), default=0.0) or 1.0
        needed = [_words(t) for t in unmatched]
        text_route = not matches and not explicit_found
        for hit in hits:
            bonus = 5.0 * hit.score / top
            if hit.key in scored:
                scored[hit.key].score = round(scored[hit.key].score + bonus, 3)
            elif text_route and all(n <= _words(_text(hit)) for n in needed):
                # The text route: only hits that actually mention every unmatched term, so a
                # question about a missing thing ("invoices") yields nothing rather than a guess.
                fit = intent_fit(hit, intent)
                if fit > 0:
                    add(hit, fit / 2 + bonus)
        if not pool:
            pool = [h for h in hits if not needed or any(n & _words(_text(h)) for n in needed)]
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
        for resource in matcher.closest(terms, n=2, memo=memo):
            found = self.store.find_endpoints(project, resource=resource.key, api=api, limit=50)
            out += sorted(found, key=lambda r: -intent_fit(r, intent))[:2]
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
        for ref in [p for p in primary if not p.deprecated][:2] or primary[:1]:
            trail = known.get(ref.key)
            if trail is None:
                trail = self.store.dependency_trail(project, ref.key)
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
        lines.append(detail.description.strip()[:500])
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


_SHAPES: dict[str, tuple[tuple[str, ...], bool | None]] = {
    # kind -> (methods, ends with a path parameter?)
    "create": (("POST", "PUT"), False),
    "list": (("GET",), False),
    "read": (("GET",), True),
    "update": (("PUT", "PATCH"), True),
    "delete": (("DELETE",), None),
    "search": (("GET", "POST"), None),
}


def intent_fit(ref: EndpointRef, intent: Intent) -> float:
    """How well an endpoint does what the question asks (0 = not at all, at most 65)."""
    if not intent.kinds:
        return 10.0
    score = 0.0
    verbs = {w for v in intent.verbs for w in v.split()}
    verb_named = bool(verbs & _verb_words(ref.path, ref.kind, ref.operation_id, ref.summary))
    # An action endpoint does one specific thing: "verify" must not pick "send a test event".
    if ref.kind in intent.kinds and (ref.kind != "action" or verb_named):
        score += 30.0 - 5.0 * intent.kinds.index(ref.kind)
    if verb_named:
        score += 20.0
    methods, item = _SHAPES.get(intent.kinds[0], ((), None))
    ends_with_param, collection = _last_segment(ref.path)
    if ref.method in methods and (item is None or (ends_with_param if item else collection)):
        # The HTTP shape alone is weak evidence: it only ranks, never qualifies on its own when
        # the kind itself is known to differ (a POST .../cancel is not a create).
        score += 15.0 if score or ref.kind in ("action", "") else 0.0
    return score


# The caches below hold what an endpoint's own strings give, the same for every question: a
# question scores about 70 candidates, mostly the same endpoints question after question.
_CACHED = 1 << 16


@lru_cache(maxsize=_CACHED)
def _last_segment(path: str) -> tuple[bool, bool]:
    """Whether ``path`` ends with a parameter, and whether it ends with a plural (a collection)."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    ends_with_param = last.startswith("{")
    words = split_words(last)
    return ends_with_param, not ends_with_param and bool(words) and is_plural(words[-1])


@lru_cache(maxsize=_CACHED)
def _verb_words(path: str, kind: str, operation_id: str, summary: str) -> frozenset[str]:
    """Words of an endpoint that may name what it does, without the resource nouns of its path.

    "tracking" in ``/shipments/{id}/tracking-events`` names a thing, not a doing: counting it
    would make a question about receiving tracking updates pick the call that records them.
    An action's last segment (``/carriers/{id}/verify``) is its verb and stays.
    """
    segments = [s for s in path.lower().strip("/").split("/") if s and not s.startswith("{")]
    nouns = segments[:-1] if kind == "action" and segments else segments
    resource_words = _words(" ".join(nouns))
    return (_words(f"{operation_id} {summary}") - resource_words) | (
        _words(segments[-1]) if kind == "action" and segments else frozenset()
    )


def _version_bias(ref: EndpointRef, intent: Intent) -> float:
    if not intent.versions:
        return 0.0
    segments = ref.path.lower().split("/")
    if any(v in segments for v in intent.versions):
        return 20.0
    return -10.0 if any(s[:1] == "v" and s[1:].isdigit() for s in segments) else 0.0


def named_outright(ref: EndpointRef, intent: Intent) -> bool:
    """Whether the question names ``ref`` by method and path or by its operation id."""
    path = normalise_path(ref.path)
    for mention in intent.endpoints:
        if mention.method and mention.method != ref.method.upper():
            continue
        # Tolerate a base prefix on either side (/api/v2/locations vs /v2/locations).
        if path == mention.path or path.endswith(mention.path) or mention.path.endswith(path):
            if min(len(path), len(mention.path)) > 1:
                return True
    ops = {o.lower() for o in intent.operation_ids}
    return bool(ref.operation_id) and ref.operation_id.lower() in ops


def replacements(primary: list[EndpointRef], pool: list[EndpointRef]) -> dict[str, EndpointRef]:
    """For each deprecated primary endpoint, a live endpoint of the same kind and resource path."""
    out: dict[str, EndpointRef] = {}
    for old in (p for p in primary if p.deprecated):
        shape = _unversioned(old.path)
        for new in pool + primary:
            if not new.deprecated and new.method == old.method and _unversioned(new.path) == shape:
                out[old.key] = new
                break
    return out


def _unversioned(path: str) -> str:
    segments = normalise_path(path).split("/")
    return "/".join(s for s in segments if not (s[:1] == "v" and s[1:].isdigit()))


def _text(ref: EndpointRef) -> str:
    return f"{ref.path} {ref.operation_id} {ref.summary} {ref.resource}"


@lru_cache(maxsize=_CACHED)
def _words(text: str) -> frozenset[str]:
    return frozenset(singular(w) for w in split_words(text))
