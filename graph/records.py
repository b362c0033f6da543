"""Backend-neutral pieces every store shares: how stored props become read models, and what is
searchable. Written once here so the SQLite and Neo4j stores cannot drift apart."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import TypeAdapter

from apiatlas.graph.model import (
    ChangeSummary,
    DocSectionRef,
    EndpointDetail,
    EndpointRef,
    FieldRef,
    GraphBatch,
    ParameterRef,
)
from apiatlas.graph.lexicon import META_WORDS, STOP_WORDS
from apiatlas.graph.words import split_words

_MAX_QUERY_TOKENS = 32
_MIN_QUERY_TOKEN = 2
"""Characters of the shortest token the full-text query keeps."""

Linked = Sequence[tuple[str, Mapping[str, Any]]]
"""``(node key, node props)`` pairs reached over one edge type."""
# A whole list validated in one call (an endpoint may have hundreds of body fields); the models
# ignore the props they do not declare (pydantic's default).
_PARAMETERS = TypeAdapter(list[ParameterRef])
_FIELDS = TypeAdapter(list[FieldRef])


METHOD_ORDER: tuple[str, ...] = ("GET", "POST", "PUT", "PATCH", "DELETE")
"""The order in which every store lists the endpoints of one path (any other method last)."""


def method_rank(method: str | None) -> int:
    """``method``'s place in :data:`METHOD_ORDER` (after all of them when it is not there)."""
    return METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)


def method_rank_sql(expression: str) -> str:
    """:func:`method_rank` of ``expression`` as a ``CASE`` that SQL and Cypher both read (built
    from constants only, never from user text)."""
    whens = " ".join(f"WHEN '{m}' THEN {i}" for i, m in enumerate(METHOD_ORDER))
    return f"CASE {expression} {whens} ELSE {len(METHOD_ORDER)} END"


def apply_in_order(
    batches: Sequence[GraphBatch],
    nodes: Callable[[GraphBatch], ChangeSummary],
    edges: Callable[[GraphBatch], ChangeSummary],
) -> tuple[ChangeSummary, set[str]]:
    """Apply every batch's nodes, then every batch's edges (an edge may join two batches).

    Returns:
        The summed summary, and the projects something changed in (their revision moves).
    """
    summary, changed = ChangeSummary(), set[str]()
    for step in (nodes, edges):
        for batch in batches:
            part = step(batch)
            summary += part
            if part.changed:
                changed.add(batch.project)
    return summary, changed


def new_revision() -> str:
    """A fresh :meth:`~apiatlas.graph.store.KnowledgeGraphStore.revision` token."""
    return uuid.uuid4().hex


def canonical(value: Any) -> str:
    """Deterministic JSON: the form props are hashed and stored in."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def fts_query(text: str) -> str | None:
    """User text as a safe full-text query: quoted alphanumeric tokens joined by OR, or ``None``.

    Only ``[a-z0-9]`` survives tokenising, so query syntax (quotes, ``NEAR(``, ``*``, ``:``) in
    the input can never reach a MATCH as syntax.
    """
    tokens: list[str] = []
    for word in split_words(text) + [t.lower() for t in text.split() if t.isalnum()]:
        skipped = len(word) < _MIN_QUERY_TOKEN or word in STOP_WORDS | META_WORDS
        if not skipped and word not in tokens:
            tokens.append(word)
    return " OR ".join(f'"{t}"' for t in tokens[:_MAX_QUERY_TOKENS]) or None


def search_columns(props: Mapping[str, Any], resource: Mapping[str, Any]) -> tuple[str, ...]:
    """The five searchable texts of an endpoint: path, operation, summary, description, resource."""
    op_id = props.get("operation_id", "")
    return (
        " ".join(split_words(props.get("path", ""))),
        " ".join([*split_words(op_id), op_id.lower(), props.get("kind", "")]),
        props.get("summary", ""),
        props.get("description", ""),
        " ".join([resource.get("name", ""), *resource.get("aliases", [])]),
    )


def endpoint_ref(key: str, props: Mapping[str, Any], score: float = 0.0) -> EndpointRef:
    """An endpoint node's props as an :class:`EndpointRef`."""
    return EndpointRef(
        key=key,
        api=props.get("api", ""),
        method=props.get("method", ""),
        path=props.get("path", ""),
        operation_id=props.get("operation_id", ""),
        summary=props.get("summary", ""),
        deprecated=bool(props.get("deprecated", False)),
        resource=props.get("resource", ""),
        kind=props.get("kind", ""),
        source=props.get("source", ""),
        pointer=props.get("pointer", ""),
        score=score,
    )


def endpoint_detail(
    key: str,
    props: Mapping[str, Any],
    *,
    parameters: Linked,
    accepts: Linked,
    returns: Linked,
    fields: Linked,
    docs: Linked,
) -> EndpointDetail:
    """Assemble :class:`EndpointDetail` from an endpoint's props and its linked nodes.

    Ordering is part of the contract: parameters in spec order, required fields first, doc
    sections by source, so every backend answers identically.
    """
    params = sorted(parameters, key=lambda r: (r[1].get("order", 0), r[0]))
    ordered_fields = sorted(
        fields, key=lambda r: (not r[1].get("required", False), r[1].get("order", 0), r[0])
    )
    sections = sorted(docs, key=lambda r: (r[1].get("source", ""), r[0]))
    request = sorted(accepts, key=lambda r: r[0])[:1]
    response = sorted(returns, key=lambda r: r[0])[:1]
    return EndpointDetail(
        endpoint=endpoint_ref(key, props),
        description=props.get("description", ""),
        tags=props.get("tags", []),
        parameters=_PARAMETERS.validate_python([p for _, p in params]),
        request_schema=request[0][1].get("name") if request else None,
        request_fields=_FIELDS.validate_python([p for _, p in ordered_fields]),
        response_schema=response[0][1].get("name") if response else None,
        examples=props.get("examples", []),
        code_samples=props.get("code_samples", []),
        security=props.get("security", []),
        servers=props.get("servers", []),
        docs=[
            DocSectionRef(key=k, **{f: p[f] for f in DocSectionRef.model_fields if f in p and f != "key"})
            for k, p in sections
        ],
    )
