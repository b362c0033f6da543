"""DESCRIBES links: which guide sections talk about which endpoints.

A section describes an endpoint when it names it by method and path, tolerating server and base
path prefixes (``https://host/rest/default/V1/...``, ``<host>/rest/<store>/V1/...``, a missing
leading slash) and any spelling of path parameters (``{sku}``, ``:sku``, ``<sku>``), or when it
names the endpoint's operationId as a whole word (only distinctive ids: at least six characters
and not a plain word).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from apiatlas.graph.model import Edge, Node
from apiatlas.graph.words import is_param, is_version, path_segments

_METHOD_PATH = re.compile(
    r"\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b[\s`*\"']+"
    r"((?:https?://)?[^\s`\"'|)\]]*/[^\s`\"'|)\]]*)"
)
_IDENT = re.compile(r"\b[A-Za-z][A-Za-z0-9_]+\b")
_HOST = re.compile(r"^(?:https?://[^/]+|<[^>]*>|\{\{[^}]*\}\}|\$\{?[A-Za-z_]+\}?)")
_TRAILING = ".,;:!?"
_PARAM = "{}"
DISTINCTIVE_ID_CHARS = 6
"""Shortest operation id a guide's prose names an endpoint by."""


def is_distinctive_id(token: str) -> bool:
    """True for identifier-like tokens (``CreateLocation``, ``create_location``), false for plain
    words (``Locations``, ``products``) and anything shorter than :data:`DISTINCTIVE_ID_CHARS`."""
    if len(token) < DISTINCTIVE_ID_CHARS or (token.isalpha() and token.isupper()):
        return False  # short, or shouting a plain word ("DELETE", "IMPORTANT")
    return "_" in token or any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:])


def normalise_path(path: str) -> str:
    """A mention's or endpoint's path in comparable form: no host, no query, params as ``{}``.

    ``<host>/rest/default/V1/products/:sku?x=1`` -> ``/rest/default/v1/products/{}``.
    """
    path = _HOST.sub("", path.strip().rstrip(_TRAILING))
    segments = path_segments(path)
    return "/" + "/".join(_PARAM if is_param(s) else s.lower() for s in segments)


def extract_mentions(text: str) -> list[str]:
    """What a section names: ``METHOD /path`` strings (normalised) and distinctive identifiers.

    Returns:
        Sorted, de-duplicated mentions; paths look like ``POST /rest/default/v1/inventory/sources``.
    """
    mentions: set[str] = set()
    for method, raw in _METHOD_PATH.findall(text):
        path = normalise_path(raw)
        if path != "/":
            mentions.add(f"{method} {path}")
    mentions.update(t for t in _IDENT.findall(text) if is_distinctive_id(t))
    return sorted(mentions)


def _allowed_prefix(prefix: list[str], base: list[str]) -> bool:
    # Extra leading segments a mention may carry: the API's base path, or Adobe-style
    # "rest[/<store_code>]" followed by an optional version.
    if not prefix or prefix == base:
        return True
    rest = list(prefix)
    if rest and rest[0] == "rest":
        rest = rest[1:]
        if rest and not is_version(rest[0]):
            rest = rest[1:]
    if rest and is_version(rest[0]):
        rest = rest[1:]
    return not rest


def link(doc_nodes: Iterable[Node], endpoint_nodes: Iterable[Node]) -> list[Edge]:
    """DESCRIBES edges from DocSection nodes (with ``mentions``) to Endpoint nodes.

    Args:
        doc_nodes: DocSection nodes; only their ``mentions`` prop is read.
        endpoint_nodes: Endpoint nodes; ``method``, ``path``, ``operation_id`` and ``servers``
            props are read.

    Returns:
        Edges sorted by (src, dst), each with ``via`` = ``path`` or ``operation_id``.
    """
    by_path: dict[tuple[str, str], list[tuple[str, list[str]]]] = {}
    by_id: dict[str, list[str]] = {}
    for ep in endpoint_nodes:
        props = ep.props
        segments = path_segments(normalise_path(props.get("path", "")))
        base = path_segments(normalise_path(_server_path(props.get("servers") or [])))
        by_path.setdefault((props.get("method", ""), "/".join(segments)), []).append((ep.key, base))
        op_id = props.get("operation_id") or ""
        if is_distinctive_id(op_id):
            by_id.setdefault(op_id, []).append(ep.key)

    edges: dict[tuple[str, str], Edge] = {}
    for doc in doc_nodes:
        for mention in doc.props.get("mentions", []):
            if " " in mention:
                method, path = mention.split(" ", 1)
                segments = path_segments(path)
                for cut in range(len(segments)):
                    for key, base in by_path.get((method, "/".join(segments[cut:])), []):
                        if _allowed_prefix(segments[:cut], base):
                            edges[(doc.key, key)] = _edge(doc.key, key, "path")
            else:
                for key in by_id.get(mention, []):
                    edges.setdefault((doc.key, key), _edge(doc.key, key, "operation_id"))
    return [edges[k] for k in sorted(edges)]


def _server_path(servers: list[str]) -> str:
    if not servers:
        return ""
    return re.sub(r"^[a-z]+://[^/]+", "", servers[0])


def _edge(src: str, dst: str, via: str) -> Edge:
    return Edge(src=src, type="DESCRIBES", dst=dst, props={"via": via})
