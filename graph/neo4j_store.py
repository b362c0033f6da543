"""The Neo4j knowledge-graph store: the same contract and answers as the SQLite store.

Nodes are ``:ApiAtlas:<Label>`` nodes with ``project``, ``key``, ``scope``, ``hash`` and their props
as properties (values Neo4j cannot hold, such as maps, nulls or mixed lists, are stored as
canonical JSON strings and listed in ``json_props``). Edges are relationships of the model's types
carrying ``project``, ``scope``, ``hash`` and their props. Each ``apply`` runs in one write
transaction. Search finds candidates with a Lucene full-text index and ranks them with the exact
bm25 formula of the embedded store's FTS5 index, so both backends rank alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable

from apiatlas.errors import StoreError
from apiatlas.graph import neo4j_queries as q
from apiatlas.graph.model import (
    ChangeSummary,
    Dependency,
    Edge,
    EndpointDetail,
    EndpointRef,
    GraphBatch,
    GraphStats,
    Neighbourhood,
    Node,
    NodeLabel,
    ResourceInfo,
)
from apiatlas.graph.neo4j_search import (
    SEARCH_FIELDS,
    Fts5Tokenizer,
    lucene_query,
    query_phrases,
    rank_bm25,
    search_fields,
)
from apiatlas.graph.records import canonical, endpoint_detail, endpoint_ref
from apiatlas.graph.store import KnowledgeGraphStore

T = TypeVar("T")
_CHUNK = 2000
_CONNECT_TIMEOUT = 5.0
_INT64 = (-(2**63), 2**63 - 1)
_RESERVED = frozenset({"project", "key", "scope", "hash", "json_props", *SEARCH_FIELDS})


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _storable(value: Any) -> bool:
    """Whether Neo4j can hold ``value`` as a property exactly as JSON would give it back."""
    if isinstance(value, bool | str | float):
        return True
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    if isinstance(value, list):
        kinds = {type(v) for v in value}
        return len(kinds) <= 1 and all(_storable(v) and not isinstance(v, list) for v in value)
    return False


def _encode(props: dict[str, Any], internal: dict[str, Any]) -> dict[str, Any]:
    """Props as Neo4j properties, plus the store's own ``internal`` ones."""
    out, as_json = dict(internal), []
    for name, value in props.items():
        if name in _RESERVED:
            raise StoreError(f"property name {name!r} is reserved by the Neo4j store; rename it")
        if _storable(value):
            out[name] = value
        else:
            out[name] = canonical(value)
            as_json.append(name)
    out["json_props"] = sorted(as_json)
    return out


def _decode(raw: dict[str, Any]) -> dict[str, Any]:
    """Node or relationship properties back to the model's props (keys sorted, as in SQLite)."""
    as_json = set(raw.get("json_props") or ())
    return {
        k: json.loads(v) if k in as_json else v
        for k, v in sorted(raw.items())
        # A projection yields nulls for absent properties; Neo4j itself never stores a null.
        if k not in _RESERVED and v is not None
    }


def _chunks(rows: list[T]) -> Iterable[list[T]]:
    for start in range(0, len(rows), _CHUNK):
        yield rows[start : start + _CHUNK]


class Neo4jGraphStore(KnowledgeGraphStore):
    """:class:`KnowledgeGraphStore` on a Neo4j 5 server; one driver, safe to share between threads.

    Args:
        uri: Bolt URI, e.g. ``bolt://127.0.0.1:7687``.
        username: Neo4j user.
        password: Its password.
        database: The database to use.

    Raises:
        StoreError: The server is unreachable (within ~5 s), refuses the credentials, or the
            constraints and indexes cannot be created.
    """

    def __init__(self, uri: str, username: str, password: str, *, database: str = "neo4j") -> None:
        self.uri, self.database = uri, database
        self._tokenizer = Fts5Tokenizer()
        try:
            self._driver: neo4j.Driver | None = neo4j.GraphDatabase.driver(
                uri, auth=(username, password), connection_timeout=_CONNECT_TIMEOUT,
                connection_acquisition_timeout=_CONNECT_TIMEOUT * 2,
                # Retries ride out deadlocks and blips, but a server that is gone must surface
                # quickly so callers can degrade (the agent answers from vectors instead).
                max_transaction_retry_time=_CONNECT_TIMEOUT,
                # Planner notices (e.g. "property `hash` does not exist" on an empty database)
                # are not errors; printed to the user's terminal they only alarm.
                notifications_min_severity="OFF",
            )  # fmt: skip
            self._driver.verify_connectivity()
            for statement in q.SCHEMA:
                self._driver.execute_query(statement, database_=database)
            self._driver.execute_query(q.AWAIT_INDEXES, {"seconds": 300}, database_=database)
        except AuthError as e:
            self.close()
            raise StoreError(
                f"Neo4j at {uri} refused user {username!r}: check NEO4J_USERNAME/NEO4J_PASSWORD."
            ) from e
        except (ServiceUnavailable, OSError) as e:
            self.close()
            raise StoreError(
                f"cannot reach Neo4j at {uri}: start one with `apiatlas neo4j start`, or set "
                f"NEO4J_URI to your server. ({e})"
            ) from e
        except (Neo4jError, DriverError, ValueError) as e:
            self.close()
            raise StoreError(f"cannot open the Neo4j graph store at {uri}: {e}") from e

    def _session(self, work: Callable[[neo4j.ManagedTransaction], T], *, write: bool) -> T:
        if self._driver is None:
            raise StoreError(f"the Neo4j graph store at {self.uri} is closed")
        try:
            with self._driver.session(database=self.database) as session:
                return session.execute_write(work) if write else session.execute_read(work)
        except ServiceUnavailable as e:
            raise StoreError(
                f"lost Neo4j at {self.uri}: is it running (`apiatlas neo4j status`)? ({e})"
            ) from e
        except (Neo4jError, DriverError) as e:
            raise StoreError(f"Neo4j query failed ({self.uri}): {e}") from e

    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        return self._session(lambda tx: tx.run(query, params).data(), write=False)

    # -- writes -------------------------------------------------------------------------------

    def apply(self, batches: Sequence[GraphBatch]) -> ChangeSummary:
        """See :meth:`KnowledgeGraphStore.apply`."""

        def work(tx: neo4j.ManagedTransaction) -> ChangeSummary:
            summary, touched = ChangeSummary(), set[tuple[str, str]]()
            for batch in batches:
                summary += self._apply_nodes(tx, batch, touched)
            for batch in batches:
                summary += self._apply_edges(tx, batch)
            for project, scope in sorted(touched):
                self._reindex(tx, project, scope)
            for project in sorted({project for project, _ in touched}):
                tx.run(q.UPDATE_CORPUS, {"project": project}).consume()
            return summary

        try:
            return self._session(work, write=True)
        except StoreError as e:
            raise StoreError(f"applying graph batches failed, nothing was written: {e}") from e
        except (TypeError, ValueError) as e:
            raise StoreError(f"applying graph batches failed, nothing was written: {e}") from e

    def _apply_nodes(
        self, tx: neo4j.ManagedTransaction, batch: GraphBatch, touched: set[tuple[str, str]]
    ) -> ChangeSummary:
        project, scope = batch.project, batch.scope
        params = {"project": project, "scope": scope}
        old = {r["key"]: r["hash"] for r in tx.run(q.SCOPE_NODES, params).data()}
        missing = [n.key for n in batch.nodes if n.key not in old]
        meta = {
            r["key"]: (r["scope"], r["hash"])
            for r in tx.run(q.NODE_META, {"project": project, "keys": missing}).data()
        }
        added = updated = unchanged = 0
        written: dict[str, tuple[str, str]] = {}
        rows = []
        for node in batch.nodes:
            digest = _digest(f"{node.label}\n{canonical(node.props)}")
            if node.key in old:
                previous: tuple[str, str] | None = (scope, old[node.key])
            else:
                previous = written.get(node.key, meta.get(node.key))
            if previous == (scope, digest):
                unchanged += 1
                continue
            if previous is None:
                added += 1
            else:
                updated += 1
                touched.add((project, previous[0]))
            internal = {"project": project, "key": node.key, "scope": scope, "hash": digest}
            rows.append({"key": node.key, "label": node.label, "props": _encode(node.props, internal)})
            written[node.key] = (scope, digest)
            touched.add((project, scope))
        for chunk in _chunks(rows):
            tx.run(q.UPSERT_NODES, {"project": project, "rows": chunk}).consume()
        stale = sorted(set(old) - {n.key for n in batch.nodes})
        edges_removed = 0
        if stale:
            record = tx.run(q.DELETE_NODES, {"project": project, "keys": stale}).single()
            edges_removed = record["relationships"] if record else 0
            touched.add((project, scope))
        return ChangeSummary(
            nodes_added=added,
            nodes_updated=updated,
            nodes_removed=len(stale),
            nodes_unchanged=unchanged,
            edges_removed=edges_removed,
        )

    def _apply_edges(self, tx: neo4j.ManagedTransaction, batch: GraphBatch) -> ChangeSummary:
        params: dict[str, Any] = {"project": batch.project, "scope": batch.scope}
        old = {(r["src"], r["type"], r["dst"]): r["hash"] for r in tx.run(q.SCOPE_EDGES, params).data()}
        wanted: dict[tuple[str, str, str], dict[str, Any]] = {}
        for edge in batch.edges:
            wanted.setdefault((edge.src, edge.type, edge.dst), edge.props)
        gone = [{"src": s, "type": t, "dst": d} for s, t, d in sorted(set(old) - set(wanted))]
        inserts, updates, unchanged = [], [], 0
        for (src, type_, dst), props in wanted.items():
            internal = {"project": batch.project, "scope": batch.scope, "hash": _digest(canonical(props))}
            if old.get((src, type_, dst)) == internal["hash"]:
                unchanged += 1
                continue
            row = {"src": src, "type": type_, "dst": dst, "props": _encode(props, internal)}
            (updates if (src, type_, dst) in old else inserts).append(row)
        created = 0
        for query, rows in ((q.DELETE_EDGES, gone), (q.UPDATE_EDGES, updates), (q.INSERT_EDGES, inserts)):
            for chunk in _chunks(rows):
                result = tx.run(query, {**params, "rows": chunk})
                if query is q.INSERT_EDGES:
                    record = result.single()
                    created += record["created"] if record else 0
                else:
                    result.consume()
        # An updated edge counts as one removed and one added, as in the embedded store.
        return ChangeSummary(
            edges_added=created + len(updates),
            edges_removed=len(gone) + len(updates),
            edges_unchanged=unchanged,
        )

    def _reindex(self, tx: neo4j.ManagedTransaction, project: str, scope: str) -> None:
        """Recompute the search fields of the scope's endpoints (resource names included)."""

        def scoped(label: str) -> list[dict[str, Any]]:
            params = {"project": project, "scope": scope, "label": label}
            return tx.run(q.NODES_BY_LABEL_SCOPE, params).data()

        resources = {r["key"]: _decode(r["props"]) for r in scoped("Resource")}
        endpoints = {r["key"]: _decode(r["props"]) for r in scoped("Endpoint")}
        fields = search_fields(self._tokenizer, endpoints, resources)
        rows = [{"key": key, "fields": f} for key, f in fields.items()]
        for chunk in _chunks(rows):
            tx.run(q.SET_SEARCH_FIELDS, {"project": project, "rows": chunk}).consume()

    # -- reads --------------------------------------------------------------------------------

    def nodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """See :meth:`KnowledgeGraphStore.nodes`."""
        if scope is None:
            rows = self._read(q.NODES_BY_LABEL, project=project, label=label)
        else:
            rows = self._read(q.NODES_BY_LABEL_SCOPE, project=project, label=label, scope=scope)
        return [Node(key=r["key"], label=r["label"], props=_decode(r["props"])) for r in rows]

    def scopes(self, project: str) -> list[str]:
        """See :meth:`KnowledgeGraphStore.scopes`."""
        return sorted({r["scope"] for r in self._read(q.SCOPES, project=project)})

    def find_endpoints(
        self,
        project: str,
        *,
        resource: str | None = None,
        kind: str | None = None,
        api: str | None = None,
        limit: int = 50,
    ) -> list[EndpointRef]:
        """See :meth:`KnowledgeGraphStore.find_endpoints`."""
        if limit == 0:
            return []
        # SQLite reads a negative LIMIT as "no limit"; Cypher needs a number.
        rows = self._read(q.FIND_ENDPOINTS, project=project, resource=resource, kind=kind,
                          api=api, limit=limit if limit > 0 else _INT64[1])  # fmt: skip
        return [endpoint_ref(r["key"], _decode(r["props"])) for r in rows]

    def get_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """See :meth:`KnowledgeGraphStore.get_endpoint`."""

        def work(tx: neo4j.ManagedTransaction) -> tuple[Any, ...] | None:
            row = tx.run(q.GET_ENDPOINT, {"project": project, "key": key}).single()
            if row is None:
                return None
            by_type: dict[tuple[str, bool], list[tuple[str, dict[str, Any]]]] = {}
            for type_, k, props in sorted(row["linked"], key=lambda r: str(r[1])):
                if k is not None:
                    by_type.setdefault((type_, True), []).append((k, _decode(props)))
            docs = [(k, _decode(p)) for k, p in sorted(row["docs"], key=lambda r: str(r[0])) if k is not None]
            by_type[("DESCRIBES", False)] = docs
            fields = [(k, _decode(p)) for k, p in sorted(row["fields"], key=lambda r: str(r[0])) if k is not None]
            return _decode(row["props"]), by_type, fields

        found = self._session(work, write=False)
        if found is None:
            return None
        props, by_type, fields = found
        return endpoint_detail(
            key,
            props,
            parameters=by_type.get(("HAS_PARAMETER", True), []),
            accepts=by_type.get(("ACCEPTS", True), []),
            returns=by_type.get(("RETURNS", True), []),
            fields=fields,
            docs=by_type.get(("DESCRIBES", False), []),
        )

    def neighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """See :meth:`KnowledgeGraphStore.neighbourhood`."""

        def work(tx: neo4j.ManagedTransaction) -> Neighbourhood:
            if tx.run(q.NODE, {"project": project, "key": key}).single() is None:
                return Neighbourhood(center=key)
            seen, frontier = {key}, [key]
            edges: dict[tuple[str, str, str], Edge] = {}
            for _ in range(max(depth, 0)):
                if not frontier:
                    break
                rows = tx.run(q.TOUCHING_EDGES, {"project": project, "keys": frontier}).data()
                following: list[str] = []
                for r in rows:
                    edge = Edge(src=r["src"], type=r["type"], dst=r["dst"], props=_decode(r["props"]))
                    edges[(edge.src, edge.type, edge.dst)] = edge
                    for other in (edge.src, edge.dst):
                        if other not in seen:
                            seen.add(other)
                            following.append(other)
                frontier = following
            rows = tx.run(q.NODES, {"project": project, "keys": sorted(seen)}).data()
            nodes = [Node(key=r["key"], label=r["label"], props=_decode(r["props"])) for r in rows]
            return Neighbourhood(center=key, nodes=nodes, edges=[edges[e] for e in sorted(edges)])

        return self._session(work, write=False)

    def dependency_trail(self, project: str, key: str, *, max_depth: int = 3) -> list[Dependency]:
        """See :meth:`KnowledgeGraphStore.dependency_trail`."""

        def work(tx: neo4j.ManagedTransaction) -> list[Dependency]:
            row = tx.run(q.NODE, {"project": project, "key": key}).single()
            if row is None:
                return []
            refs = {key: endpoint_ref(key, _decode(row["props"]))}
            seen, level, trail = {key}, [key], []
            # Breadth first, one round trip per depth; same visiting order as the embedded store.
            for depth in range(1, max_depth + 1):
                if not level:
                    break
                params = {"project": project, "keys": level, "type": "REQUIRES"}
                needed: dict[str, list[tuple[str, dict[str, Any], dict[str, Any]]]] = {}
                for r in tx.run(q.OUT_LINKED_MANY, params).data():
                    needed.setdefault(r["source"], []).append((r["key"], _decode(r["edge"]), _decode(r["node"])))
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

        return self._session(work, write=False)

    def search(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """See :meth:`KnowledgeGraphStore.search`.

        Lucene finds every endpoint sharing a stemmed word with the query (the words are
        escaped and bound, never parsed as Lucene syntax); :func:`rank_bm25` then scores them
        with the embedded store's formula, so both backends return the same ranking.
        """
        phrases = query_phrases(self._tokenizer, text)
        if not phrases or limit <= 0:
            return []
        lucene = lucene_query(phrases)
        scope = f"api:{api}" if api is not None else None

        def work(tx: neo4j.ManagedTransaction) -> list[EndpointRef]:
            found = tx.run(q.SEARCH, {"project": project, "query": lucene}).single()
            if found is None or not found["rows"]:
                return []
            hits = [(k, json.loads(freq), length) for k, _, freq, length in found["hits"]]
            scores = rank_bm25(phrases, found["rows"], found["tokens"], hits)
            allowed = {k for k, s, _, _ in found["hits"] if scope is None or s == scope}
            best = sorted((k for k in scores if k in allowed), key=lambda k: (-scores[k], k))[:limit]
            rows = tx.run(q.ENDPOINT_REFS, {"project": project, "keys": best}).data()
            props = {r["key"]: _decode(r["props"]) for r in rows}
            return [endpoint_ref(k, props[k], score=scores[k]) for k in best if k in props]

        return self._session(work, write=False)

    def resources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """See :meth:`KnowledgeGraphStore.resources`."""
        out = []
        for row in self._read(q.RESOURCES, project=project, api=api):
            props = _decode(row["props"])
            out.append(ResourceInfo(key=row["key"], api=props.get("api", ""), name=props.get("name", ""),
                                    aliases=props.get("aliases", []), parent=props.get("parent")))  # fmt: skip
        return out

    def stats(self, project: str | None = None) -> GraphStats:
        """See :meth:`KnowledgeGraphStore.stats`."""

        def work(tx: neo4j.ManagedTransaction) -> GraphStats:
            params = {"project": project}
            apis = [r["name"] for r in tx.run(q.STATS_APIS, params).data() if r["name"]]
            node_q, edge_q = (
                (q.STATS_NODES_ALL, q.STATS_EDGES_ALL) if project is None
                else (q.STATS_NODES_PROJECT, q.STATS_EDGES_PROJECT)
            )  # fmt: skip
            nodes = {r["label"]: r["count"] for r in tx.run(node_q, params).data()}
            edges = {r["type"]: r["count"] for r in tx.run(edge_q, params).data()}
            return GraphStats(project=project, apis=apis, nodes=dict(sorted(nodes.items())),
                              edges=dict(sorted(edges.items())))  # fmt: skip

        return self._session(work, write=False)

    def delete_project(self, project: str) -> None:
        """See :meth:`KnowledgeGraphStore.delete_project`."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            for statement in q.DELETE_PROJECT:
                tx.run(statement, {"project": project}).consume()

        self._session(work, write=True)

    def close(self) -> None:
        """Close the driver. Safe to call twice."""
        driver, self._driver = getattr(self, "_driver", None), None
        if driver is not None:
            driver.close()
