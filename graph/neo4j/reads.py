"""The Neo4j store's reads, written once for its sync and async drivers.

Each read is a *plan*: a generator that yields ``(cypher, parameters)`` steps, receives each
step's records as dicts, and returns the contract's typed result. :func:`drive` runs a plan on a
sync session and :func:`adrive` on an async one, so the Cypher and the result mapping exist once.
Most plans are a single step, i.e. a single round trip to the server.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable

from apiatlas.errors import StoreError
from apiatlas.graph.neo4j import queries as q
from apiatlas.graph.model import (
    Dependency,
    Edge,
    EndpointDetail,
    EndpointRef,
    GraphStats,
    Neighbourhood,
    Node,
    NodeLabel,
    ResourceInfo,
)
from apiatlas.graph.fts import B, K1, Fts5Tokenizer, bm25_idfs, bm25_score, query_phrases
from apiatlas.graph.neo4j.search import SEARCH_LEN
from apiatlas.graph.records import endpoint_detail, endpoint_ref

T = TypeVar("T")
Rows = list[dict[str, Any]]
Step = tuple[str, dict[str, Any]]
Plan = Generator[Step, Rows, T]
"""A read: yields Cypher steps, is sent each step's records, returns the result."""

INT64_MAX = 2**63 - 1
RESERVED = frozenset({"project", "key", "scope", "hash", "json_props", SEARCH_LEN})
# Candidates beyond the limit the search fetches, so the exact re-ranking has room to reorder
# the server's near-ties; and how far the server's bm25 may be from the exact one, relatively.
_PREFETCH_MARGIN = 10
_CUT_TOLERANCE = 1e-9


def decode(raw: dict[str, Any]) -> dict[str, Any]:
    """Node or relationship properties back to the model's props (keys sorted, as in SQLite)."""
    as_json = set(raw.get("json_props") or ())
    return {
        k: json.loads(v) if k in as_json else v
        for k, v in sorted(raw.items())
        # A projection yields nulls for absent properties; Neo4j itself never stores a null.
        if k not in RESERVED and v is not None
    }


def store_error(uri: str, error: Exception) -> StoreError:
    """A driver failure as the :class:`StoreError` to raise ``from`` it."""
    if isinstance(error, ServiceUnavailable):
        return StoreError(f"lost Neo4j at {uri}: is it running (`apiatlas neo4j status`)? ({error})")
    return StoreError(f"Neo4j query failed ({uri}): {error}")


DRIVER_ERRORS = (Neo4jError, DriverError)
"""What :func:`store_error` wraps (ServiceUnavailable is a DriverError)."""

_CONNECT_TIMEOUT = 5.0
DRIVER_OPTIONS: dict[str, Any] = {
    "connection_timeout": _CONNECT_TIMEOUT,
    "connection_acquisition_timeout": _CONNECT_TIMEOUT * 2,
    # Retries ride out deadlocks and blips, but a server that is gone must surface quickly so
    # callers can degrade (the agent answers from vectors instead).
    "max_transaction_retry_time": _CONNECT_TIMEOUT,
    # Planner notices (e.g. "property `hash` does not exist" on an empty database) are not
    # errors; printed to the user's terminal they only alarm.
    "notifications_min_severity": "OFF",
}
"""Options of both the sync and the async driver."""


def drive(plan: Plan[T], run: Callable[[str, dict[str, Any]], Rows]) -> T:
    """Run ``plan``, executing each step with ``run``."""
    try:
        step = next(plan)
        while True:
            step = plan.send(run(*step))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(plan: Plan[T], run: Callable[[str, dict[str, Any]], Awaitable[Rows]]) -> T:
    """Run ``plan``, awaiting each step with ``run``."""
    try:
        step = next(plan)
        while True:
            step = plan.send(await run(*step))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _node(r: dict[str, Any]) -> Node:
    return Node(key=r["key"], label=r["label"], props=decode(r["props"]))


def nodes(project: str, label: NodeLabel, scope: str | None) -> Plan[list[Node]]:
    """See :meth:`KnowledgeGraphStore.nodes`."""
    if scope is None:
        rows = yield q.NODES_BY_LABEL, {"project": project, "label": label}
    else:
        rows = yield q.NODES_BY_LABEL_SCOPE, {"project": project, "label": label, "scope": scope}
    return [_node(r) for r in rows]


def edges(project: str, scope: str) -> Plan[list[Edge]]:
    """See :meth:`KnowledgeGraphStore.edges`."""
    rows = yield q.EDGES_BY_SCOPE, {"project": project, "scope": scope}
    return [Edge(src=r["src"], type=r["type"], dst=r["dst"], props=decode(r["props"]))
            for r in rows]  # fmt: skip


def revision(project: str) -> Plan[str]:
    """See :meth:`KnowledgeGraphStore.revision`."""
    rows = yield q.REVISION, {"project": project}
    return str(rows[0]["revision"] or "") if rows else ""


def projects() -> Plan[list[str]]:
    """See :meth:`KnowledgeGraphStore.projects`."""
    rows = yield q.PROJECTS, {}
    return [str(r["project"]) for r in rows]


def scopes(project: str) -> Plan[list[str]]:
    """See :meth:`KnowledgeGraphStore.scopes`."""
    rows = yield q.SCOPES, {"project": project}
    return sorted({r["scope"] for r in rows})


def find_endpoints(
    project: str, resource: str | None, kind: str | None, api: str | None, limit: int
) -> Plan[list[EndpointRef]]:
    """See :meth:`KnowledgeGraphStore.find_endpoints`."""
    if limit == 0:
        return []
    # SQLite reads a negative LIMIT as "no limit"; Cypher needs a number.
    params = {"project": project, "resource": resource, "kind": kind, "api": api,
              "limit": limit if limit > 0 else INT64_MAX}  # fmt: skip
    rows = yield q.FIND_ENDPOINTS, params
    return [endpoint_ref(r["key"], decode(r["props"])) for r in rows]


def get_endpoint(project: str, key: str) -> Plan[EndpointDetail | None]:
    """See :meth:`KnowledgeGraphStore.get_endpoint`."""
    rows = yield q.GET_ENDPOINT, {"project": project, "key": key}
    if not rows:
        return None
    row = rows[0]
    linked: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for type_, k, props in sorted(row["linked"], key=lambda r: str(r[1])):
        if k is not None:
            linked.setdefault(type_, []).append((k, decode(props)))

    def pairs(items: list[list[Any]]) -> list[tuple[str, dict[str, Any]]]:
        return [(k, decode(p)) for k, p in sorted(items, key=lambda r: str(r[0])) if k is not None]

    return endpoint_detail(
        key,
        decode(row["props"]),
        parameters=linked.get("HAS_PARAMETER", []),
        accepts=linked.get("ACCEPTS", []),
        returns=linked.get("RETURNS", []),
        fields=pairs(row["fields"]),
        docs=pairs(row["docs"]),
    )


def neighbourhood(project: str, key: str, depth: int) -> Plan[Neighbourhood]:
    """See :meth:`KnowledgeGraphStore.neighbourhood`; one round trip per hop."""
    if not (yield q.NODE, {"project": project, "key": key}):
        return Neighbourhood(center=key)
    seen, frontier = {key}, [key]
    edges: dict[tuple[str, str, str], Edge] = {}
    for _ in range(max(depth, 0)):
        if not frontier:
            break
        following: list[str] = []
        for r in (yield q.TOUCHING_EDGES, {"project": project, "keys": frontier}):
            edge = Edge(src=r["src"], type=r["type"], dst=r["dst"], props=decode(r["props"]))
            edges[(edge.src, edge.type, edge.dst)] = edge
            for other in (edge.src, edge.dst):
                if other not in seen:
                    seen.add(other)
                    following.append(other)
        frontier = following
    rows = yield q.NODES, {"project": project, "keys": sorted(seen)}
    return Neighbourhood(center=key, nodes=[_node(r) for r in rows],
                         edges=[edges[e] for e in sorted(edges)])  # fmt: skip


def dependency_trail(project: str, key: str, max_depth: int) -> Plan[list[Dependency]]:
    """See :meth:`KnowledgeGraphStore.dependency_trail`; one round trip.

    The server returns every REQUIRES edge the endpoint can reach; the walk below is the
    embedded store's breadth-first one (same visiting order, same depth cut-off).
    """
    rows = yield q.DEPENDENCY_TRAIL, {"project": project, "key": key}
    if not rows:
        return []
    needed: dict[str, list[tuple[str, dict[str, Any], dict[str, Any]]]] = {}
    for source, provider, edge, props in rows[0]["edges"]:
        needed.setdefault(source, []).append((provider, decode(edge), decode(props)))
    refs = {key: endpoint_ref(key, decode(rows[0]["props"]))}
    seen, level, trail = {key}, [key], []
    for depth in range(1, max_depth + 1):
        following = []
        for current in level:
            options = sorted(needed.get(current, []),
                             key=lambda n: (n[1].get("order", 0), n[1].get("rank", 0), n[0]))  # fmt: skip
            for provider, edge_props, provider_props in options:
                if provider in seen:
                    continue
                seen.add(provider)
                refs[provider] = endpoint_ref(provider, provider_props)
                trail.append(Dependency(endpoint=refs[current], parameter=edge_props.get("param", ""),
                                        provider=refs[provider], depth=depth))  # fmt: skip
                following.append(provider)
        level = following
    return trail


def search(
    tokenizer: Fts5Tokenizer, project: str, text: str, api: str | None, limit: int
) -> Plan[list[EndpointRef]]:
    """See :meth:`KnowledgeGraphStore.search`; one round trip (two on a near-tie at the cut).

    The server reads the posting lists of the question's stemmed terms (bound as parameters,
    never parsed as query syntax), ranks the endpoints by bm25 and returns the best; they are
    re-scored here with the embedded store's exact formula (see :data:`neo4j_queries.SEARCH`),
    so both backends return the same ranking and scores.
    """
    phrases = query_phrases(tokenizer, text)
    if not phrases or limit <= 0:
        return []
    params = {"project": project, "terms": phrases, "k1": K1, "b": B,
              "scope": f"api:{api}" if api is not None else None, "top": limit + _PREFETCH_MARGIN}  # fmt: skip
    while True:
        rows = yield q.SEARCH, params
        if not rows:
            return []
        found = rows[0]
        idfs = bm25_idfs(found["rows"], found["nhit"])
        avgdl = float(found["tokens"]) / float(found["rows"])
        scored = []
        for key, pairs, length, props in found["top"]:
            weights = [0.0] * len(phrases)
            for i, weight in pairs:
                weights[i] = weight
            scored.append((bm25_score(weights, length, idfs, avgdl), key, props))
        scored.sort(key=lambda s: (-s[0], s[1]))
        best = scored[:limit]
        cut = found["cut"]
        # Whatever the server left out scored at most `cut` by its bm25; exactly, at most a
        # rounding error more. Safe unless the last kept score is that close to the cut.
        if cut is None or not best or best[-1][0] > cut + _CUT_TOLERANCE * max(1.0, abs(cut)):
            return [endpoint_ref(key, decode(props), score=score) for score, key, props in best]
        params = {**params, "top": INT64_MAX}


def resources(project: str, api: str | None) -> Plan[list[ResourceInfo]]:
    """See :meth:`KnowledgeGraphStore.resources`."""
    out = []
    for row in (yield q.RESOURCES, {"project": project, "api": api}):
        props = decode(row["props"])
        out.append(ResourceInfo(key=row["key"], api=props.get("api", ""), name=props.get("name", ""),
                                aliases=props.get("aliases", []), parent=props.get("parent")))  # fmt: skip
    return out


def stats(project: str | None) -> Plan[GraphStats]:
    """See :meth:`KnowledgeGraphStore.stats`."""
    params = {"project": project}
    apis = [r["name"] for r in (yield q.STATS_APIS, params) if r["name"]]
    node_q, edge_q = (
        (q.STATS_NODES_ALL, q.STATS_EDGES_ALL) if project is None
        else (q.STATS_NODES_PROJECT, q.STATS_EDGES_PROJECT)
    )  # fmt: skip
    nodes_ = {r["label"]: r["count"] for r in (yield node_q, params)}
    edges = {r["type"]: r["count"] for r in (yield edge_q, params)}
    return GraphStats(project=project, apis=apis, nodes=dict(sorted(nodes_.items())),
                      edges=dict(sorted(edges.items())))  # fmt: skip
