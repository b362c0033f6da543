"""The embedded knowledge-graph store: one SQLite file (WAL, foreign keys, FTS5 search).

Nodes and edges are rows tagged with their project and owning scope; props are canonical JSON
with a content hash, so applying an unchanged batch writes nothing. Endpoint search is an FTS5
index rebuilt per API scope whenever that scope changes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from apiatlas.errors import StoreError
from apiatlas.graph.diff import edge_diff, node_diff, outside_keys
from apiatlas.graph.sqlite import memory_links
from apiatlas.graph.sqlite import queries as q
from apiatlas.graph.model import (
    ChangeSummary,
    Dependency,
    Edge,
    EndpointDetail,
    EndpointRef,
    GraphBatch,
    GraphStats,
    LinkNotes,
    MemoryLink,
    Neighbourhood,
    Node,
    NodeLabel,
    ResourceInfo,
)
from apiatlas.graph.records import (
    apply_in_order,
    endpoint_detail,
    endpoint_ref,
    fts_query,
    new_revision,
    search_columns,
)
from apiatlas.graph.store import TRAIL_DEPTH, LinkedGraphStore


class SqliteGraphStore(LinkedGraphStore):
    """:class:`~apiatlas.graph.store.LinkedGraphStore` (the graph and its memory links) on one
    SQLite file; safe to share between threads.

    Args:
        path: The database file (created with its parent directory if missing).

    Raises:
        StoreError: The file cannot be opened or initialised.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None
            )
            for pragma in q.PRAGMAS:
                self._conn.execute(pragma)
            self._conn.executescript(q.SCHEMA)
            columns = {name for (name,) in self._conn.execute(q.MEMORY_REFS_COLUMNS)}
            for name, kind in q.MEMORY_REFS_FLAGS:
                if name not in columns:
                    self._conn.execute(q.MEMORY_REFS_ADD.format(name=name, kind=kind))
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"cannot open the graph store at {self.path}: {e}") from e

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise StoreError(f"the graph store at {self.path} is closed")
            try:
                yield self._conn
            except sqlite3.Error as e:
                raise StoreError(f"graph store query failed ({self.path}): {e}") from e

    # -- writes ---------------------------------------------------------------------------

    def apply(self, batches: Sequence[GraphBatch]) -> ChangeSummary:
        """See :meth:`KnowledgeGraphStore.apply`."""
        with self._read() as conn:
            conn.execute(q.BEGIN)
            try:
                touched: set[tuple[str, str]] = set()
                keys: dict[str, set[str]] = {}  # project -> its node keys, once nodes are in
                summary, changed = apply_in_order(
                    batches,
                    lambda batch: self._apply_nodes(conn, batch, touched),
                    lambda batch: self._apply_edges(conn, batch, keys),
                )
                for project, scope in sorted(touched):
                    self._reindex(conn, project, scope)
                for project in sorted(changed):
                    conn.execute(q.SET_REVISION, (project, new_revision()))
                conn.execute(q.COMMIT)
                return summary
            except Exception as e:
                conn.execute(q.ROLLBACK)
                raise StoreError(f"applying graph batches failed, nothing was written: {e}") from e

    def _apply_nodes(
        self, conn: sqlite3.Connection, batch: GraphBatch, touched: set[tuple[str, str]]
    ) -> ChangeSummary:
        project, scope = batch.project, batch.scope
        held = dict(conn.execute(q.SCOPE_NODES, (project, scope)).fetchall())
        # One statement for the keys another scope may hold, one executemany for the writes.
        outside = json.dumps(outside_keys(batch, held))
        elsewhere = {k: (s, h) for k, s, h in conn.execute(q.NODES_META, (project, outside))}
        diff = node_diff(batch, held, elsewhere)
        conn.executemany(q.UPSERT_NODE, [
            (project, w.node.key, scope, w.node.label, w.props, w.hash) for w in diff.writes
        ])  # fmt: skip
        edges_removed = 0
        for key in diff.stale:
            edges_removed += conn.execute(q.DELETE_NODE_EDGES, (project, key, key)).rowcount
            conn.execute(q.DELETE_NODE, (project, key))
        touched.update((project, touched_scope) for touched_scope in diff.touched)
        return diff.summary.model_copy(update={"edges_removed": edges_removed})

    def _apply_edges(
        self, conn: sqlite3.Connection, batch: GraphBatch, keys: dict[str, set[str]]
    ) -> ChangeSummary:
        project, scope = batch.project, batch.scope
        if project not in keys:  # every batch's nodes are in by now (apply_in_order)
            keys[project] = {row[0] for row in conn.execute(q.PROJECT_KEYS, (project,))}
        known = keys[project]
        held = {(s, t, d): p for s, t, d, p in conn.execute(q.SCOPE_EDGES, (project, scope))}
        diff = edge_diff(batch, held, stored=lambda props: props)
        conn.executemany(q.DELETE_EDGE, [(project, scope, *ident) for ident in diff.gone])
        conn.executemany(
            q.UPDATE_EDGE, [(text, project, scope, *ident) for ident, _, text in diff.updates]
        )
        inserts = [(project, scope, *ident, text) for ident, _, text in diff.inserts
                   if ident[0] in known and ident[2] in known]  # else an end is missing
        conn.executemany(q.INSERT_EDGE, inserts)
        return diff.summary(inserted=len(inserts))

    def _reindex(self, conn: sqlite3.Connection, project: str, scope: str) -> None:
        conn.execute(q.FTS_DELETE_SCOPE, (project, scope))
        res_rows = conn.execute(q.NODES_BY_LABEL_SCOPE, (project, "Resource", scope)).fetchall()
        resources = {k: json.loads(p) for k, _, p in res_rows}
        rows = []
        ep_rows = conn.execute(q.NODES_BY_LABEL_SCOPE, (project, "Endpoint", scope)).fetchall()
        for key, _, raw in ep_rows:
            props = json.loads(raw)
            res = resources.get(props.get("resource", ""), {})
            rows.append((project, key, scope, *search_columns(props, res)))
        conn.executemany(q.FTS_INSERT, rows)

    # -- reads --------------------------------------------------------------------------------

    def nodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """See :meth:`KnowledgeGraphStore.nodes`."""
        with self._read() as conn:
            if scope is None:
                rows = conn.execute(q.NODES_BY_LABEL, (project, label)).fetchall()
            else:
                rows = conn.execute(q.NODES_BY_LABEL_SCOPE, (project, label, scope)).fetchall()
        return [Node(key=k, label=lbl, props=p)
                for (k, lbl, _), p in zip(rows, _parsed(r[2] for r in rows))]

    def edges(self, project: str, *, scope: str) -> list[Edge]:
        """See :meth:`KnowledgeGraphStore.edges`."""
        with self._read() as conn:
            rows = conn.execute(q.EDGES_BY_SCOPE, (project, scope)).fetchall()
        return [Edge(src=src, type=type_, dst=dst, props=p)
                for (src, type_, dst, _), p in zip(rows, _parsed(r[3] for r in rows))]

    def scopes(self, project: str) -> list[str]:
        """See :meth:`KnowledgeGraphStore.scopes`."""
        with self._read() as conn:
            return [row[0] for row in conn.execute(q.SCOPES, (project, project))]

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
        tail = (kind, kind, api, api, limit)
        with self._read() as conn:
            if resource is None:
                rows = conn.execute(q.FIND_ENDPOINTS, (project, *tail)).fetchall()
            else:
                rows = conn.execute(
                    q.FIND_ENDPOINTS_OF_RESOURCE, (project, resource, *tail)
                ).fetchall()
        return [endpoint_ref(k, p) for (k, _), p in zip(rows, _parsed(r[1] for r in rows))]

    def _linked(
        self,
        conn: sqlite3.Connection,
        project: str,
        key: str,
        type_: str,
        *,
        incoming: bool = False,
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """``(neighbour key, edge props, neighbour props)`` over edges of one type."""
        rows = _edge_rows(conn, project, key, type_, incoming)
        edges, nodes = _parsed(r[1] for r in rows), _parsed(r[3] for r in rows)
        return sorted(zip((r[0] for r in rows), edges, nodes))

    def _neighbours(
        self, conn: sqlite3.Connection, project: str, key: str, type_: str, *,
        incoming: bool = False,
    ) -> list[tuple[str, dict[str, Any]]]:
        """``(neighbour key, neighbour props)`` over edges of one type, by key (the edges'
        own props are not read)."""
        rows = _edge_rows(conn, project, key, type_, incoming)
        return sorted(zip((r[0] for r in rows), _parsed(r[3] for r in rows)), key=lambda r: r[0])

    def get_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """See :meth:`KnowledgeGraphStore.get_endpoint`."""
        with self._read() as conn:
            row = conn.execute(q.NODE, (project, key)).fetchone()
            if row is None or row[1] != "Endpoint":
                return None
            props = json.loads(row[2])
            linked = partial(self._neighbours, conn, project)
            accepts = linked(key, "ACCEPTS")
            params, returns = linked(key, "HAS_PARAMETER"), linked(key, "RETURNS")
            fields = linked(accepts[0][0], "HAS_FIELD") if accepts else []
            docs = linked(key, "DESCRIBES", incoming=True)
        return endpoint_detail(key, props, parameters=params, accepts=accepts, returns=returns,
                               fields=fields, docs=docs)

    def neighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """See :meth:`KnowledgeGraphStore.neighbourhood`."""
        with self._read() as conn:
            center = conn.execute(q.NODE, (project, key)).fetchone()
            if center is None:
                return Neighbourhood(center=key)
            seen, frontier = {key}, [key]
            edges: dict[tuple[str, str, str], Edge] = {}
            for _ in range(max(depth, 0)):
                following: list[str] = []
                for current in frontier:
                    touching = conn.execute(q.TOUCHING_EDGES, (project, current, project, current))
                    for src, type_, dst, props in touching.fetchall():
                        edge = Edge(src=src, type=type_, dst=dst, props=json.loads(props))
                        edges[(src, type_, dst)] = edge
                        for other in (src, dst):
                            if other not in seen:
                                seen.add(other)
                                following.append(other)
                frontier = following
            rows = [conn.execute(q.NODE, (project, k)).fetchone() for k in sorted(seen)]
        nodes = [Node(key=r[0], label=r[1], props=json.loads(r[2])) for r in rows if r is not None]
        return Neighbourhood(center=key, nodes=nodes, edges=[edges[e] for e in sorted(edges)])

    def dependency_trail(
        self, project: str, key: str, *, max_depth: int = TRAIL_DEPTH
    ) -> list[Dependency]:
        """See :meth:`KnowledgeGraphStore.dependency_trail`."""
        trail: list[Dependency] = []
        with self._read() as conn:
            row = conn.execute(q.NODE, (project, key)).fetchone()
            if row is None:
                return []
            refs = {key: endpoint_ref(key, json.loads(row[2]))}
            seen, queue = {key}, deque([(key, 1)])
            while queue:
                current, depth = queue.popleft()
                if depth > max_depth:
                    continue
                needed = self._linked(conn, project, current, "REQUIRES")
                needed.sort(key=lambda r: (r[1].get("order", 0), r[1].get("rank", 0), r[0]))
                for provider, edge_props, provider_props in needed:
                    if provider in seen:
                        continue
                    seen.add(provider)
                    refs[provider] = endpoint_ref(provider, provider_props)
                    trail.append(
                        Dependency(
                            endpoint=refs[current],
                            parameter=edge_props.get("param", ""),
                            provider=refs[provider],
                            depth=depth,
                        )
                    )
                    queue.append((provider, depth + 1))
        return trail

    def search(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """See :meth:`KnowledgeGraphStore.search`."""
        match = fts_query(text)
        if match is None or limit <= 0:
            return []
        scope = f"api:{api}" if api is not None else None
        with self._read() as conn:
            rows = conn.execute(q.FTS_SEARCH, (match, project, scope, scope, limit)).fetchall()
        return [endpoint_ref(k, p, score=-rank)
                for (k, _, rank), p in zip(rows, _parsed(r[1] for r in rows))]

    def revision(self, project: str) -> str:
        """See :meth:`KnowledgeGraphStore.revision`."""
        with self._read() as conn:
            row = conn.execute(q.REVISION, (project,)).fetchone()
        return str(row[0]) if row else ""

    def projects(self) -> list[str]:
        """See :meth:`KnowledgeGraphStore.projects`."""
        with self._read() as conn:
            return [str(r[0]) for r in conn.execute(q.PROJECTS)]

    def resources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """See :meth:`KnowledgeGraphStore.resources`."""
        with self._read() as conn:
            rows = conn.execute(q.RESOURCES, (project, api, api)).fetchall()
        out = []
        for key, raw in rows:
            props = json.loads(raw)
            out.append(
                ResourceInfo(
                    key=key,
                    api=props.get("api", ""),
                    name=props.get("name", ""),
                    aliases=props.get("aliases", []),
                    parent=props.get("parent"),
                )
            )
        return out

    def stats(self, project: str | None = None) -> GraphStats:
        """See :meth:`KnowledgeGraphStore.stats`."""
        with self._read() as conn:
            apis = [r[0] for r in conn.execute(q.STATS_APIS, (project, project)) if r[0]]
            nodes = dict(conn.execute(q.STATS_NODES, (project, project)).fetchall())
            edges = dict(conn.execute(q.STATS_EDGES, (project, project)).fetchall())
        return GraphStats(project=project, apis=apis, nodes=nodes, edges=edges)

    def delete_project(self, project: str) -> None:
        """See :meth:`KnowledgeGraphStore.delete_project`."""
        with self._read() as conn:
            conn.execute(q.BEGIN)
            try:
                for statement in q.DELETE_PROJECT:
                    conn.execute(statement, (project,))
                conn.execute(q.SET_REVISION, (project, new_revision()))
                conn.execute(q.COMMIT)
            except sqlite3.Error as e:
                conn.execute(q.ROLLBACK)
                raise StoreError(f"deleting project {project!r} failed: {e}") from e

    # -- signatures and project-memory links (refs resolved when read: see memory_links) -----

    def resolve_signatures(
        self, project: str, signatures: Sequence[str], *, api: str | None = None
    ) -> dict[str, list[EndpointRef]]:
        """See :meth:`KnowledgeGraphStore.resolve_signatures`."""
        with self._read() as conn:
            return memory_links.resolve_signatures(conn, project, signatures, api)

    def link_memory(
        self, project: str, memory_id: str, refs: Sequence[str], notes: LinkNotes = LinkNotes()
    ) -> list[str]:
        """See :meth:`MemoryLinks.link_memory`.

        The refs are stored (in comparison form) and resolved whenever links are read, so links
        follow every later ingest without ``apply`` having to touch them.
        """
        with self._read() as conn:
            conn.execute(q.BEGIN)
            try:
                unmatched = memory_links.link_memory(conn, project, memory_id, refs, notes)
                conn.execute(q.COMMIT)
                return unmatched
            except BaseException:
                conn.execute(q.ROLLBACK)
                raise

    def unlink_memory(self, project: str, memory_id: str) -> None:
        """See :meth:`MemoryLinks.unlink_memory`."""
        with self._read() as conn:
            memory_links.unlink_memory(conn, project, memory_id)

    def memory_links(
        self, project: str, keys: Sequence[str], limit: int | None = None
    ) -> dict[str, list[MemoryLink]]:
        """See :meth:`MemoryLinks.memory_links`."""
        with self._read() as conn:
            return memory_links.memory_links(conn, project, keys, limit)

    def close(self) -> None:
        """Close the connection. Safe to call twice."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _parsed(texts: Iterator[str]) -> list[Any]:
    """Stored props (each a JSON object this store wrote) parsed in one call of the decoder: an
    endpoint's hundreds of fields cost one ``json.loads`` instead of one each."""
    return json.loads("[" + ",".join(texts) + "]")


def _edge_rows(
    conn: sqlite3.Connection, project: str, key: str, type_: str, incoming: bool
) -> list[tuple[str, str, str, str]]:
    """``(neighbour key, edge props, neighbour label, neighbour props)`` rows, props unparsed."""
    sql = q.IN_NEIGHBOURS if incoming else q.OUT_NEIGHBOURS
    return conn.execute(sql, (project, key, type_)).fetchall()
