"""The Neo4j knowledge-graph store: the same contract and answers as the SQLite store.

Nodes are ``:ApiAtlas:<Label>`` nodes with ``project``, ``key``, ``scope``, ``hash`` and their props
as properties (values Neo4j cannot hold, such as maps, nulls or mixed lists, are stored as
canonical JSON strings and listed in ``json_props``). Edges are relationships of the model's types
carrying ``project``, ``scope``, ``hash`` and their props. Each ``apply`` runs in one write
transaction. Search reads per-term posting lists (``:ApiAtlasTerm`` nodes, rebuilt per API scope
in the same transaction; see :mod:`apiatlas.graph.neo4j.search`) and ranks with the exact bm25
formula of the embedded store's FTS5 index, so both backends rank alike. The full-text index
``apiatlas_text`` over endpoint summaries, descriptions, operation ids and resource names is for
people's own Cypher. Project-memory links (``(:Memory)-[:ABOUT]->``) live in
:mod:`apiatlas.graph.neo4j.memory_links`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable

from apiatlas.errors import StoreError
from apiatlas.graph.neo4j import queries as q
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
from apiatlas.graph.neo4j import reads
from apiatlas.graph.neo4j.aio import Neo4jAsyncReads
from apiatlas.graph.neo4j.reads import DRIVER_ERRORS, DRIVER_OPTIONS, RESERVED, Plan, decode
from apiatlas.graph.fts import Fts5Tokenizer
from apiatlas.graph.store import TRAIL_DEPTH
from apiatlas.graph.neo4j.search import scope_index
from apiatlas.graph.neo4j.memory_links import Neo4jMemoryLinks, sync_links
from apiatlas.graph.diff import EdgeId, digest, edge_diff, node_diff, outside_keys
from apiatlas.graph.records import apply_in_order, canonical, new_revision

T = TypeVar("T")
_CHUNK = 2000
_INT64 = (-(2**63), 2**63 - 1)


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
        if name in RESERVED:
            raise StoreError(f"property name {name!r} is reserved by the Neo4j store; rename it")
        if _storable(value):
            out[name] = value
        else:
            out[name] = canonical(value)
            as_json.append(name)
    out["json_props"] = sorted(as_json)
    return out


def _chunks(rows: list[T]) -> Iterable[list[T]]:
    for start in range(0, len(rows), _CHUNK):
        yield rows[start : start + _CHUNK]


class Neo4jGraphStore(Neo4jAsyncReads, Neo4jMemoryLinks):
    """:class:`~apiatlas.graph.store.LinkedGraphStore` (the graph and its memory links) on a
    Neo4j 5 server; one driver, safe to share between threads.

    The ``a*`` read methods use a native async driver instead (see :class:`Neo4jAsyncReads`).
    Reads that are one Cypher statement run as auto-commit transactions in read-access sessions:
    one round trip, where a managed transaction costs three (BEGIN, RUN, COMMIT).

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
        super().__init__(uri, (username, password), database)
        try:
            self._driver: neo4j.Driver | None = neo4j.GraphDatabase.driver(
                uri, auth=(username, password), **DRIVER_OPTIONS
            )
            self._driver.verify_connectivity()
            for statement in q.SCHEMA:
                self._driver.execute_query(statement, database_=database)
            self._driver.execute_query(q.AWAIT_INDEXES, {"seconds": 300}, database_=database)
            self._upgrade_search_index()
        except StoreError:
            self.close()
            raise
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

    def _upgrade_search_index(self) -> None:
        """Re-index every scope of a graph written before the current search index (once).

        One write transaction: a graph from an older apiatlas is searchable as soon as it is
        opened, and a failure leaves it as it was.
        """
        assert self._driver is not None
        found = self._driver.execute_query(q.SEARCH_INDEX_VERSION_READ, database_=self.database)
        version = found.records[0]["version"] if found.records else None
        if version is not None and version >= q.SEARCH_INDEX_VERSION:
            return

        def work(tx: neo4j.ManagedTransaction) -> None:
            for row in tx.run(q.ENDPOINT_SCOPES).data():
                self._reindex(tx, row["project"], row["scope"])
            tx.run(q.DROP_LEGACY_SEARCH_FIELDS).consume()
            tx.run(q.SEARCH_INDEX_VERSION_SET, {"version": q.SEARCH_INDEX_VERSION}).consume()

        try:
            self._session(work, write=True)
        except StoreError as e:
            raise StoreError(f"upgrading the search index of the graph at {self.uri} failed: {e}") from e

    def _session(self, work: Callable[[neo4j.ManagedTransaction], T], *, write: bool) -> T:
        if self._driver is None:
            raise StoreError(f"the Neo4j graph store at {self.uri} is closed")
        try:
            with self._driver.session(database=self.database) as session:
                return session.execute_write(work) if write else session.execute_read(work)
        except DRIVER_ERRORS as e:
            raise reads.store_error(self.uri, e) from e

    def _run(self, plan: Plan[T]) -> T:
        """Run a read plan, each step an auto-commit transaction in one read-access session."""
        if self._driver is None:
            raise StoreError(f"the Neo4j graph store at {self.uri} is closed")
        try:
            read = neo4j.READ_ACCESS
            with self._driver.session(database=self.database, default_access_mode=read) as session:
                return reads.drive(plan, lambda query, params: session.run(query, params).data())
        except DRIVER_ERRORS as e:
            raise reads.store_error(self.uri, e) from e

    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        return self._session(lambda tx: tx.run(query, params).data(), write=False)

    # -- writes -------------------------------------------------------------------------------

    def apply(self, batches: Sequence[GraphBatch]) -> ChangeSummary:
        """See :meth:`KnowledgeGraphStore.apply`."""

        def work(tx: neo4j.ManagedTransaction) -> ChangeSummary:
            touched: set[tuple[str, str]] = set()
            summary, changed = apply_in_order(
                batches,
                lambda batch: self._apply_nodes(tx, batch, touched),
                lambda batch: self._apply_edges(tx, batch),
            )
            for project, scope in sorted(touched):
                self._reindex(tx, project, scope)
            for project in sorted({project for project, _ in touched}):
                tx.run(q.UPDATE_CORPUS, {"project": project}).consume()
                sync_links(tx, project)  # memories' ABOUT links to endpoints that came back
            for project in sorted(changed):
                tx.run(q.SET_REVISION, {"project": project, "revision": new_revision()}).consume()
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
        held = {r["key"]: r["hash"] for r in tx.run(q.SCOPE_NODES, params).data()}
        outside = {"project": project, "keys": outside_keys(batch, held)}
        elsewhere = {r["key"]: (r["scope"], r["hash"]) for r in tx.run(q.NODE_META, outside).data()}
        diff = node_diff(batch, held, elsewhere)
        inserts, updates = [], []
        for w in diff.writes:
            internal = {"project": project, "key": w.node.key, "scope": scope, "hash": w.hash}
            props = _encode(w.node.props, internal)
            (inserts if w.new else updates).append(
                {"key": w.node.key, "label": w.node.label, "props": props}
            )
        for query, rows in ((q.INSERT_NODES, inserts), (q.UPSERT_NODES, updates)):
            for chunk in _chunks(rows):
                tx.run(query, {"project": project, "rows": chunk}).consume()
        edges_removed = 0
        if diff.stale:
            record = tx.run(q.DELETE_NODES, {"project": project, "keys": diff.stale}).single()
            edges_removed = record["relationships"] if record else 0
        touched.update((project, touched_scope) for touched_scope in diff.touched)
        return diff.summary.model_copy(update={"edges_removed": edges_removed})

    def _apply_edges(self, tx: neo4j.ManagedTransaction, batch: GraphBatch) -> ChangeSummary:
        params: dict[str, Any] = {"project": batch.project, "scope": batch.scope}
        found = tx.run(q.SCOPE_EDGES, params).data()
        held = {(r["src"], r["type"], r["dst"]): r["hash"] for r in found}
        diff = edge_diff(batch, held, stored=digest)

        def rows(edges: list[tuple[EdgeId, dict[str, Any], str]]) -> list[dict[str, Any]]:
            return [
                {"src": src, "type": type_, "dst": dst,
                 "props": _encode(props, {**params, "hash": digest(text)})}
                for (src, type_, dst), props, text in edges
            ]  # fmt: skip

        gone = [{"src": s, "type": t, "dst": d} for s, t, d in diff.gone]
        created = 0
        for query, chunked in ((q.DELETE_EDGES, gone), (q.UPDATE_EDGES, rows(diff.updates)),
                               (q.INSERT_EDGES, rows(diff.inserts))):
            for chunk in _chunks(chunked):
                result = tx.run(query, {**params, "rows": chunk})
                if query is q.INSERT_EDGES:  # it skips edges with an end the project lacks
                    record = result.single()
                    created += record["created"] if record else 0
                else:
                    result.consume()
        return diff.summary(inserted=created)

    def _reindex(self, tx: neo4j.ManagedTransaction, project: str, scope: str) -> None:
        """Rebuild the scope's search index: its endpoints' lengths and its term posting lists."""

        def scoped(label: str) -> list[dict[str, Any]]:
            params = {"project": project, "scope": scope, "label": label}
            return tx.run(q.NODES_BY_LABEL_SCOPE, params).data()

        resources = {r["key"]: decode(r["props"]) for r in scoped("Resource")}
        endpoints = {r["key"]: decode(r["props"]) for r in scoped("Endpoint")}
        index = scope_index(self._tokenizer, endpoints, resources)
        lengths = [{"key": key, "len": length} for key, length in index.lengths.items()]
        for chunk in _chunks(lengths):
            tx.run(q.SET_SEARCH_LEN, {"project": project, "rows": chunk}).consume()
        params = {"project": project, "scope": scope}
        tx.run(q.DELETE_SCOPE_TERMS, params).consume()
        for chunk in _chunks(index.term_rows()):
            tx.run(q.CREATE_TERMS, {**params, "rows": chunk}).consume()

    # -- reads (the plans in apiatlas.graph.neo4j.reads; the async twins in Neo4jAsyncReads) --

    def nodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """See :meth:`KnowledgeGraphStore.nodes`."""
        return self._run(reads.nodes(project, label, scope))

    def edges(self, project: str, *, scope: str) -> list[Edge]:
        """See :meth:`KnowledgeGraphStore.edges`."""
        return self._run(reads.edges(project, scope))

    def scopes(self, project: str) -> list[str]:
        """See :meth:`KnowledgeGraphStore.scopes`."""
        return self._run(reads.scopes(project))

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
        return self._run(reads.find_endpoints(project, resource, kind, api, limit))

    def get_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """See :meth:`KnowledgeGraphStore.get_endpoint`."""
        return self._run(reads.get_endpoint(project, key))

    def neighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """See :meth:`KnowledgeGraphStore.neighbourhood`."""
        return self._run(reads.neighbourhood(project, key, depth))

    def dependency_trail(
        self, project: str, key: str, *, max_depth: int = TRAIL_DEPTH
    ) -> list[Dependency]:
        """See :meth:`KnowledgeGraphStore.dependency_trail`."""
        return self._run(reads.dependency_trail(project, key, max_depth))

    def search(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """See :meth:`KnowledgeGraphStore.search` and :func:`neo4j_reads.search`."""
        return self._run(reads.search(self._tokenizer, project, text, api, limit))

    def revision(self, project: str) -> str:
        """See :meth:`KnowledgeGraphStore.revision`."""
        return self._run(reads.revision(project))

    def resources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """See :meth:`KnowledgeGraphStore.resources`."""
        return self._run(reads.resources(project, api))

    def projects(self) -> list[str]:
        """See :meth:`KnowledgeGraphStore.projects`."""
        return self._run(reads.projects())

    def stats(self, project: str | None = None) -> GraphStats:
        """See :meth:`KnowledgeGraphStore.stats`."""
        return self._run(reads.stats(project))

    def delete_project(self, project: str) -> None:
        """See :meth:`KnowledgeGraphStore.delete_project`."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            for statement in q.DELETE_PROJECT:
                tx.run(statement, {"project": project}).consume()
            tx.run(q.SET_REVISION, {"project": project, "revision": new_revision()}).consume()

        self._session(work, write=True)

    def close(self) -> None:
        """Close the sync driver and forget the async ones (see :meth:`aclose`). Safe to call twice."""
        driver, self._driver = getattr(self, "_driver", None), None
        if driver is not None:
            driver.close()
        self._forget_async_drivers()
