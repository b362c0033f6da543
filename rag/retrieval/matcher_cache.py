"""The graph retriever's per-project caches: one resource matcher per (project, API), with its
resource embeddings, vocabulary and API names kept on disk per revision, rebuilt only when the
resources change."""

from __future__ import annotations

import hashlib
import io
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.files import keep_only, write_atomic
from apiatlas.graph.build.resources import guide_definitions, with_definitions
from apiatlas.graph.lexicon import META_WORDS
from apiatlas.graph.model import ResourceInfo
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.words import split_words
from apiatlas.rag.runtime.embeddings import model_id
from apiatlas.rag.retrieval.resource_matcher import ResourceMatcher
from apiatlas.rag.question.vocabulary import Vocabulary


class MatcherCache:
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
