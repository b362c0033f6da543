"""Each endpoint described in the spec's own words, field by field, with a BM25 index per field.

An endpoint's fields come from the knowledge graph, so from the spec and the guides only:

- ``name``: summary and operationId (split into words);
- ``description``: the operation's description;
- ``path``: the path's resource words and the resource's name;
- ``tag``: its tags and the tags' descriptions;
- ``schema``: its request and response schemas' names and descriptions;
- ``params``: its parameters' and request fields' names;
- ``docs``: titles of the guide sections that name it (``METHOD /path``).

Each endpoint also gets dense vectors (:data:`DENSE_FIELDS`): ``name``, of the words that name
what it does (summary, or the description's first sentence; operationId; path words); ``about``,
of what the spec says it does (summary and the start of its description), both embedded here and
well inside the embedding model's window; and ``card``, the vector store's own vector of the
head of the endpoint's card (method and path, operation, summary, tags, description start), read
back rather than embedded again. The name is what a question paraphrases, the prose what a task
description matches.

Per-field scores let a learned ranker weigh, per API, a match in the operation's name against
one in a long description, instead of one blended score where long text drowns short text.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.files import write_atomic
from apiatlas.graph.model import EndpointRef, Node
from apiatlas.graph.build.linker import normalise_path
from apiatlas.graph import fts
from apiatlas.graph.records import endpoint_ref
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.words import is_param, is_version, path_segments, singular, split_words
from apiatlas.graph.lexicon import STOP_WORDS
from apiatlas.rag.runtime.embeddings import unit_rows

FIELDS: tuple[str, ...] = ("name", "description", "path", "tag", "schema", "params", "docs")
ALL = "all"
"""The fields as one text: a whole-endpoint BM25 beside the per-field ones."""
_MENTION = re.compile(r"^([A-Z]+) (/\S*)$")
_SENTENCE = re.compile(r"(?<=[.!?])\s")
NAME_CHARS = 240
"""Longest compact name text: well inside the embedding model's window."""
ABOUT_CHARS = 600
"""Longest ``about`` text, in characters: inside the local model's 256-token window (Square's
average 208 tokens, its descriptions' links and markup tokenising densely). 300 lost top1 on dev
(validation 0.500 -> 0.487, evals/README "2026-11-26 (evening)")."""
DENSE_FIELDS: tuple[str, ...] = ("name", "about", "card")
"""The dense vectors per endpoint: :func:`dense_texts` embedded, and the stored card heads."""
CardKey = tuple[str, str, str]
"""An endpoint card's ``(api, METHOD, path)``."""
EMBEDDED_FIELDS: tuple[str, ...] = ("name", "about")
"""The dense fields embedded when the index is built."""
SHORTEST_TERM = 2
"""Letters a word needs to be a term of the field index and of the question."""


def terms(text: str) -> list[str]:
    """Lowercase, identifier-split, singular content words of ``text`` (stop words dropped)."""
    out = []
    for word in split_words(text):
        if len(word) < SHORTEST_TERM or word in STOP_WORDS or word.isdigit():
            continue
        out.append(singular(word))
    return out


@dataclass
class _Postings:
    """One field's BM25 statistics."""

    lengths: list[int]
    postings: dict[str, dict[int, int]]
    average: float
    _arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False
    )

    def scores(self, query: Sequence[str], n: int) -> np.ndarray:
        """BM25 of ``query`` for every endpoint (0 where no term matches), in numpy but with
        the operations, and their order, of the textbook sum: the same floats."""
        out = np.zeros(n)
        for term in set(query):
            found = self._term(term)
            if found is None:
                continue
            docs, tf, norm = found
            out[docs] += fts.term_score(fts.idf(n, len(docs)), tf, norm)
        return out

    def _term(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The documents of ``term``, its frequencies and their length norms, made on first
        use (a large API has tens of thousands of terms; a question reads a handful)."""
        found = self._arrays.get(term)
        if found is None:
            docs = self.postings.get(term)
            if not docs:
                return None
            positions = np.fromiter(docs, dtype=np.int64, count=len(docs))
            tf = np.fromiter(docs.values(), dtype=np.float64, count=len(docs))
            lengths = np.asarray([self.lengths[d] for d in docs], dtype=np.float64)
            norm = fts.length_norm(lengths, self.average)
            found = self._arrays[term] = (positions, tf, norm)
        return found


@dataclass
class FieldIndex:
    """Per-field BM25 over every endpoint of a project (or one API of it).

    Attributes:
        endpoints: The endpoints, in index order.
        fields: Field name -> per-endpoint term lists.
        docs_count: Per endpoint, how many guide sections name it.
        resource_size: Per endpoint, how many endpoints its resource has.
        dense: Dense field -> unit vectors of every endpoint's text of that field (one row
            each); empty when the index was built without embeddings.
    """

    endpoints: list[EndpointRef]
    fields: dict[str, list[list[str]]]
    docs_count: list[int]
    resource_size: list[int]
    dense: dict[str, np.ndarray] = field(default_factory=dict)
    _postings: dict[str, _Postings] = field(default_factory=dict, repr=False)
    _position: dict[str, int] = field(default_factory=dict, repr=False)
    _words: dict[tuple[tuple[str, ...], int], frozenset[str]] = field(
        default_factory=dict, repr=False
    )

    def __post_init__(self) -> None:
        self._position = {ref.key: i for i, ref in enumerate(self.endpoints)}
        everything = [[t for name in FIELDS for t in self.fields[name][i]]
                      for i in range(len(self.endpoints))]
        for name, docs in [*self.fields.items(), (ALL, everything)]:
            postings: dict[str, dict[int, int]] = defaultdict(dict)
            for i, words in enumerate(docs):
                for term, tf in Counter(words).items():
                    postings[term][i] = tf
            lengths = [len(d) for d in docs]
            average = sum(lengths) / len(lengths) if lengths else 0.0
            self._postings[name] = _Postings(lengths, dict(postings), average)

    def __len__(self) -> int:
        return len(self.endpoints)

    def positions(self, keys: Iterable[str]) -> dict[str, int]:
        """The index of each endpoint of ``keys`` that is indexed, in the order of ``keys``."""
        return {key: self._position[key] for key in keys if key in self._position}

    def knows(self, term: str) -> bool:
        """True when some endpoint's text uses ``term`` (a word of :func:`terms`)."""
        return term in self._postings[ALL].postings

    def rarity(self, term: str) -> float:
        """The weight of ``term`` in :meth:`coverages`: its idf over endpoints, BM25's own
        (:func:`~apiatlas.graph.fts.idf`, nearly 0 for a term in half of them or more), and 0
        for an unknown term: one idf formula for every score
        (``experiments/2026-11-29-coverage-idf``)."""
        df = len(self._postings[ALL].postings.get(term, ()))
        return fts.idf(len(self.endpoints), df) if df else 0.0

    def similarities(self, query_vector: Sequence[float]) -> dict[str, np.ndarray]:
        """Dense field -> cosine similarity of the question's vector to every endpoint's text."""
        if not self.dense or not len(self.endpoints):
            return {}
        q = np.asarray(query_vector, dtype=np.float32)
        q = q / (float(np.linalg.norm(q)) or 1.0)
        return {name: matrix @ q for name, matrix in self.dense.items()}

    def field_scores(self, query: Sequence[str]) -> dict[str, np.ndarray]:
        """Field -> BM25 score of ``query`` for every endpoint (0 where nothing matches)."""
        n = len(self.endpoints)
        return {name: self._postings[name].scores(query, n) for name in FIELDS}

    def text_scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 of ``query`` over all of each endpoint's fields as one (0 where nothing matches)."""
        return self._postings[ALL].scores(query, len(self.endpoints))

    def subset(self, api: str) -> FieldIndex:
        """The index of one API's endpoints (its BM25 statistics over those endpoints only)."""
        keep = [i for i, ref in enumerate(self.endpoints) if ref.api == api]
        return FieldIndex(
            endpoints=[self.endpoints[i] for i in keep],
            fields={name: [terms[i] for i in keep] for name, terms in self.fields.items()},
            docs_count=[self.docs_count[i] for i in keep],
            resource_size=[self.resource_size[i] for i in keep],
            dense={name: matrix[keep] for name, matrix in self.dense.items()},
        )

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (one ``.npz``: JSON text and float32 matrices), atomically."""
        meta = {"endpoints": [ref.model_dump(mode="json") for ref in self.endpoints],
                "fields": self.fields, "docs_count": self.docs_count,
                "resource_size": self.resource_size}
        text = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, meta=text, **{f"dense_{k}": v for k, v in self.dense.items()})
        write_atomic(path, buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> FieldIndex:
        """Read an index written by :meth:`save` (no pickles: arrays and JSON only)."""
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(data["meta"].tobytes().decode("utf-8"))
            dense = {k.removeprefix("dense_"): data[k] for k in data.files if k.startswith("dense_")}
        return cls(
            endpoints=[EndpointRef.model_validate(r) for r in meta["endpoints"]],
            fields=meta["fields"],
            docs_count=meta["docs_count"],
            resource_size=meta["resource_size"],
            dense=dense,
        )

    def coverages(self, query: Sequence[str], positions: Iterable[int],
                  names: Iterable[str] = FIELDS) -> dict[int, float]:
        """Per endpoint of ``positions``, the rarity-weighted share of ``query``'s terms found in
        its ``names`` fields."""
        fields, weights = tuple(names), {t: self.rarity(t) or 1.0 for t in set(query)}
        total, found = sum(weights.values()), {}
        for position in positions:
            if (words := self._words.get((fields, position))) is None:  # kept across questions
                words = frozenset(t for name in fields for t in self.fields[name][position])
                self._words[(fields, position)] = words
            found[position] = sum(w for t, w in weights.items() if t in words) / (total or 1.0)
        return found


def build_field_index(
    store: KnowledgeGraphStore,
    project: str,
    api: str | None,
    embeddings: Embeddings | None = None,
    cards: Mapping[CardKey, Sequence[float]] | None = None,
) -> FieldIndex:
    """Read the graph of ``project`` (``api`` only, when given) into a :class:`FieldIndex`.

    Args:
        store: The knowledge graph.
        project: The project.
        api: One API of it, or ``None`` for all.
        embeddings: Embeds each endpoint's :data:`EMBEDDED_FIELDS` texts (none without it).
        cards: The stored vectors of the endpoints' card heads by ``(api, METHOD, path)``
            (see :func:`~apiatlas.rag.retrieval.dense.load_card_vectors`); an endpoint without
            one gets a zero row.
    """
    # In key order: ties then break the same way whatever order the store returns rows in.
    endpoints = sorted((n for n in store.nodes(project, "Endpoint") if _in(n, api)),
                       key=lambda n: n.key)
    graph = _GraphTexts(
        tags={(n.props.get("api"), n.props.get("name")): n for n in store.nodes(project, "Tag")},
        schemas={n.key: n for n in store.nodes(project, "Schema")},
        params=_names_by_owner(store.nodes(project, "Parameter"), "/param/"),
        fields_of=_names_by_owner(store.nodes(project, "Field"), "/field/"),
        titles=_doc_titles(store.nodes(project, "DocSection"), endpoints),
    )
    per_resource = Counter(str(n.props.get("resource", "")) for n in endpoints)
    texts: dict[str, list[list[str]]] = {name: [] for name in FIELDS}
    refs: list[EndpointRef] = []
    for node in endpoints:
        refs.append(endpoint_ref(node.key, node.props))
        for name, words in graph.texts(node).items():
            texts[name].append(words)
    dense: dict[str, np.ndarray] = {}
    if embeddings is not None and endpoints:
        for name, texts_of in dense_texts(endpoints).items():
            dense[name] = unit_rows(embeddings.embed_documents(texts_of))
    if cards and endpoints:
        width = len(next(iter(cards.values())))
        rows = [cards.get((r.api, r.method, r.path)) or [0.0] * width for r in refs]
        dense["card"] = unit_rows(rows)
    return FieldIndex(
        endpoints=refs,
        fields=texts,
        docs_count=[len(graph.titles.get(n.key, [])) for n in endpoints],
        resource_size=[per_resource[str(n.props.get("resource", ""))] for n in endpoints],
        dense=dense,
    )


@dataclass(frozen=True)
class _GraphTexts:
    """What the graph says around its endpoints: tags, schemas, parameter and field names by
    owner, and the titles of the doc sections that describe each endpoint."""

    tags: dict[tuple[Any, Any], Node]
    schemas: dict[str, Node]
    params: dict[str, list[str]]
    fields_of: dict[str, list[str]]
    titles: dict[str, list[str]]

    def texts(self, node: Node) -> dict[str, list[str]]:
        """The terms of every field of one endpoint."""
        p = node.props
        api_name = str(p.get("api", ""))
        segments = [s for s in path_segments(str(p.get("path", ""))) if not is_version(s)]
        words = " ".join(s for s in segments if not is_param(s))
        tag_text = [
            f"{t} {self.tags[(api_name, t)].props.get('description', '')}"
            if (api_name, t) in self.tags else str(t)
            for t in p.get("tags", [])
        ]
        schema_text = []
        request_fields: list[str] = []
        for role in ("request_schema", "response_schema"):
            name = p.get(role)
            if not name:
                continue
            key = f"{api_name}/schema/{name}"
            schema = self.schemas.get(key)
            description = schema.props.get("description", "") if schema is not None else ""
            schema_text.append(f"{name} {description}")
            if role == "request_schema":
                request_fields = self.fields_of.get(key, [])
        return {
            "name": terms(f"{p.get('summary', '')} {p.get('operation_id', '')}"),
            "description": terms(str(p.get("description", ""))),
            "path": terms(f"{words} {p.get('resource_name', '')}"),
            "tag": terms(" ".join(tag_text)),
            "schema": terms(" ".join(schema_text)),
            "params": terms(" ".join(self.params.get(node.key, []) + request_fields)),
            "docs": terms(" ".join(self.titles.get(node.key, []))),
        }


def _names_by_owner(nodes: Iterable[Node], marker: str) -> dict[str, list[str]]:
    """The ``name`` of each node, by the key of what owns it (the key before ``marker``)."""
    out: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        out[node.key.split(marker, 1)[0]].append(str(node.props.get("name", "")))
    return out


def dense_texts(endpoints: Sequence[Node]) -> dict[str, list[str]]:
    """Embedded dense field -> its text for every endpoint, in ``endpoints`` order."""
    return {"name": [name_text(n) for n in endpoints], "about": [about_text(n) for n in endpoints]}


def name_text(node: Node) -> str:
    """The words that name what an endpoint does: its summary (else the description's first
    sentence), its operationId split into words, and its path's words."""
    p = node.props
    head = str(p.get("summary") or "").strip()
    if not head:
        head = _SENTENCE.split(str(p.get("description") or "").strip(), maxsplit=1)[0]
    operation = " ".join(split_words(str(p.get("operation_id", ""))))
    segments = [s for s in path_segments(str(p.get("path", ""))) if not is_param(s)]
    path = " ".join(" ".join(split_words(s)) for s in segments if not is_version(s))
    return " | ".join(x for x in (head[:NAME_CHARS], operation, path) if x)


def about_text(node: Node) -> str:
    """What the spec says an endpoint does: its summary and the start of its description."""
    p = node.props
    head = str(p.get("summary") or "").strip()
    description = " ".join(str(p.get("description") or "").split())
    text = f"{head}. {description}" if head and description else head or description
    return text[:ABOUT_CHARS] or name_text(node)


def _in(node: Node, api: str | None) -> bool:
    return api is None or node.props.get("api") == api


def _doc_titles(sections: Sequence[Node], endpoints: Sequence[Node]) -> Mapping[str, list[str]]:
    """Endpoint key -> titles of the guide sections that name it as ``METHOD /path``.

    A guide may write the path with the API's base prefix (``/rest/V1/orders``), so a mention
    names an endpoint when the endpoint's path is a suffix of it, segment by segment.
    """
    by_method: dict[str, list[tuple[list[str], str]]] = defaultdict(list)
    for node in endpoints:
        parts = normalise_path(str(node.props.get("path", ""))).strip("/").split("/")
        by_method[str(node.props.get("method", "")).upper()].append((parts, node.key))
    out: dict[str, list[str]] = defaultdict(list)
    for section in sections:
        title = " ".join([*section.props.get("section_path", []), section.props.get("title", "")])
        for mention in section.props.get("mentions", []):
            m = _MENTION.match(str(mention))
            if m is None:
                continue
            said = normalise_path(m.group(2)).strip("/").split("/")
            for parts, key in by_method.get(m.group(1).upper(), []):
                if parts != [""] and said[-len(parts):] == parts and title not in out[key]:
                    out[key].append(title)
    return out
