"""The reference knowledge-graph store: both contracts on a few dicts, as plainly as they read.

Each project's graph is two dicts, nodes by key and edges by ``(scope, src, type, dst)``, and
every query is a scan of them: no index, nothing clever, so that the code can be read beside
the contracts. What the backends share is used as they use it: :mod:`apiatlas.graph.diff` says
what an apply changes, :mod:`apiatlas.graph.records` builds the read models and
:mod:`apiatlas.graph.memory_refs` matches memory refs. Props are kept as the canonical JSON the
other stores write and parsed on each read, so a value JSON cannot hold fails the apply and a
caller never holds the store's own objects.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from apiatlas.errors import StoreError
from apiatlas.graph.diff import edge_diff, node_diff, outside_keys
from apiatlas.graph.fts import Fts5Tokenizer, rank_rows
from apiatlas.graph.memory_refs import (
    endpoint_matches,
    in_reading_order,
    memory_link,
    probe,
    ref_target,
    resolve_refs,
)
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
    method_rank,
    new_revision,
    search_columns,
)
from apiatlas.graph.store import TRAIL_DEPTH, LinkedGraphStore

Props = dict[str, Any]


class _Row(NamedTuple):
    scope: str
    label: NodeLabel
    props: str  # canonical JSON
    hash: str


@dataclass
class _Graph:
    """One project's graph: nodes by key, edges' canonical props by ``(scope, src, type, dst)``."""

    nodes: dict[str, _Row] = field(default_factory=dict)
    edges: dict[tuple[str, str, str, str], str] = field(default_factory=dict)

    def copy(self) -> _Graph:
        return _Graph(dict(self.nodes), dict(self.edges))

    def props(self, key: str) -> Props:
        return json.loads(self.nodes[key].props)

    def labelled(self, label: NodeLabel) -> list[tuple[str, Props]]:
        """``(key, props)`` of every node with the label, by key."""
        return [(k, json.loads(r.props)) for k, r in sorted(self.nodes.items()) if r.label == label]

    def linked(self, key: str, type_: str, *, incoming: bool = False) -> list[tuple[str, Props]]:
        """``(neighbour key, neighbour props)`` over the edges of one type, by key."""
        found = [src if incoming else dst for _, src, t, dst in self.edges
                 if t == type_ and (dst if incoming else src) == key]  # fmt: skip
        return sorted(((k, self.props(k)) for k in found), key=lambda r: r[0])


class InMemoryGraphStore(LinkedGraphStore):
    """The reference :class:`~apiatlas.graph.store.LinkedGraphStore`, held in this process.

    Exact wherever the contracts are; search ranks as every store does (FTS5's bm25 and
    tokenizer, :mod:`apiatlas.graph.fts`), with the corpus statistics of the project searched,
    as on Neo4j. Safe to share between threads (one lock). Nothing outlives :meth:`close`.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._graphs: dict[str, _Graph] | None = {}
        self._links: dict[str, dict[str, _Linked]] = {}  # project -> memory id -> its refs
        self._revisions: dict[str, str] = {}
        self._tokenizer = Fts5Tokenizer()

    @contextmanager
    def _open(self) -> Iterator[dict[str, _Graph]]:
        with self._lock:
            if self._graphs is None:
                raise StoreError("the in-memory graph store is closed: open a new one")
            yield self._graphs

    @contextmanager
    def _project(self, project: str) -> Iterator[_Graph]:
        with self._open() as graphs:
            yield graphs.get(project) or _Graph()

    # -- writes -------------------------------------------------------------------------------

    def apply(self, batches: Sequence[GraphBatch]) -> ChangeSummary:
        """See :meth:`KnowledgeGraphStore.apply`; works on copies, kept only if all succeed."""
        with self._open() as graphs:
            staged = {b.project: (graphs.get(b.project) or _Graph()).copy() for b in batches}
            try:
                summary, changed = apply_in_order(
                    batches,
                    lambda batch: _apply_nodes(staged[batch.project], batch),
                    lambda batch: _apply_edges(staged[batch.project], batch),
                )
            except Exception as e:
                raise StoreError(f"applying graph batches failed, nothing was written: {e}") from e
            graphs.update(staged)
            for project in changed:
                self._revisions[project] = new_revision()
            return summary

    def delete_project(self, project: str) -> None:
        """See :meth:`KnowledgeGraphStore.delete_project`."""
        with self._open() as graphs:
            graphs.pop(project, None)
            self._links.pop(project, None)
            self._revisions[project] = new_revision()

    # -- reads --------------------------------------------------------------------------------

    def nodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """See :meth:`KnowledgeGraphStore.nodes`."""
        with self._project(project) as g:
            return [Node(key=k, label=r.label, props=json.loads(r.props))
                    for k, r in sorted(g.nodes.items())
                    if r.label == label and scope in (None, r.scope)]  # fmt: skip

    def edges(self, project: str, *, scope: str) -> list[Edge]:
        """See :meth:`KnowledgeGraphStore.edges`."""
        with self._project(project) as g:
            return [Edge(src=src, type=type_, dst=dst, props=json.loads(props))  # type: ignore[arg-type]
                    for (owner, src, type_, dst), props in sorted(g.edges.items())
                    if owner == scope]  # fmt: skip

    def scopes(self, project: str) -> list[str]:
        """See :meth:`KnowledgeGraphStore.scopes`."""
        with self._project(project) as g:
            return sorted({r.scope for r in g.nodes.values()} | {e[0] for e in g.edges})

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
        wanted = {"resource": resource, "kind": kind, "api": api}
        with self._project(project) as g:
            found = [(k, p) for k, p in g.labelled("Endpoint")
                     if all(v is None or p.get(f) == v for f, v in wanted.items())]  # fmt: skip
        # Stable: endpoints of the same path and method stay in key order, as labelled() gave.
        found.sort(key=lambda r: (r[1].get("path", ""), method_rank(r[1].get("method"))))
        return [endpoint_ref(k, p) for k, p in found[: max(limit, 0)]]

    def get_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """See :meth:`KnowledgeGraphStore.get_endpoint`."""
        with self._project(project) as g:
            row = g.nodes.get(key)
            if row is None or row.label != "Endpoint":
                return None
            accepts = g.linked(key, "ACCEPTS")
            return endpoint_detail(
                key, json.loads(row.props),
                parameters=g.linked(key, "HAS_PARAMETER"), accepts=accepts,
                returns=g.linked(key, "RETURNS"),
                fields=g.linked(accepts[0][0], "HAS_FIELD") if accepts else [],
                docs=g.linked(key, "DESCRIBES", incoming=True),
            )  # fmt: skip

    def neighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """See :meth:`KnowledgeGraphStore.neighbourhood`."""
        with self._project(project) as g:
            if key not in g.nodes:
                return Neighbourhood(center=key)
            seen, frontier = {key}, {key}
            edges: dict[tuple[str, str, str], Edge] = {}
            for _ in range(max(depth, 0)):
                touching = [(e, props) for e, props in g.edges.items() if {e[1], e[3]} & frontier]
                for (_, src, type_, dst), props in touching:
                    edge = Edge(src=src, type=type_, dst=dst, props=json.loads(props))
                    edges[(src, type_, dst)] = edge
                frontier = {end for (_, src, _, dst), _ in touching for end in (src, dst)} - seen
                seen |= frontier
            nodes = [Node(key=k, label=g.nodes[k].label, props=g.props(k)) for k in sorted(seen)]
        return Neighbourhood(center=key, nodes=nodes, edges=[edges[e] for e in sorted(edges)])

    def dependency_trail(
        self, project: str, key: str, *, max_depth: int = TRAIL_DEPTH
    ) -> list[Dependency]:
        """See :meth:`KnowledgeGraphStore.dependency_trail`."""
        trail: list[Dependency] = []
        with self._project(project) as g:
            if key not in g.nodes:
                return []
            refs = {key: endpoint_ref(key, g.props(key))}
            seen, queue = {key}, deque([(key, 1)])
            while queue:
                current, depth = queue.popleft()
                if depth > max_depth:
                    continue
                needed = [(dst, json.loads(props)) for (_, src, t, dst), props in g.edges.items()
                          if t == "REQUIRES" and src == current]  # fmt: skip
                needed.sort(key=lambda r: (r[1].get("order", 0), r[1].get("rank", 0), r[0]))
                for provider, edge_props in needed:
                    if provider in seen:
                        continue
                    seen.add(provider)
                    refs[provider] = endpoint_ref(provider, g.props(provider))
                    trail.append(Dependency(
                        endpoint=refs[current], parameter=edge_props.get("param", ""),
                        provider=refs[provider], depth=depth,
                    ))  # fmt: skip
                    queue.append((provider, depth + 1))
        return trail

    def search(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """See :meth:`KnowledgeGraphStore.search` and :mod:`apiatlas.graph.fts`."""
        if limit <= 0:
            return []
        with self._project(project) as g:
            endpoints = dict(g.labelled("Endpoint"))
            # An endpoint's resource names are searchable when the resource is in its scope.
            resources = {(g.nodes[k].scope, k): p for k, p in g.labelled("Resource")}
            rows = {
                k: search_columns(p, resources.get((g.nodes[k].scope, p.get("resource", "")), {}))
                for k, p in endpoints.items()
            }
            scope = None if api is None else f"api:{api}"
            ranked = [(s, k) for s, k in rank_rows(self._tokenizer, text, rows)
                      if scope in (None, g.nodes[k].scope)]
        return [endpoint_ref(k, endpoints[k], score=s) for s, k in ranked[:limit]]

    def resources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """See :meth:`KnowledgeGraphStore.resources`."""
        with self._project(project) as g:
            found = [(k, p) for k, p in g.labelled("Resource") if api in (None, p.get("api"))]
        return [ResourceInfo(key=k, api=p.get("api", ""), name=p.get("name", ""),
                             aliases=p.get("aliases", []), parent=p.get("parent"))
                for k, p in found]  # fmt: skip

    def revision(self, project: str) -> str:
        """See :meth:`KnowledgeGraphStore.revision`."""
        with self._open():
            return self._revisions.get(project, "")

    def projects(self) -> list[str]:
        """See :meth:`KnowledgeGraphStore.projects`."""
        with self._open() as graphs:
            return sorted(p for p, g in graphs.items() if g.nodes)

    def stats(self, project: str | None = None) -> GraphStats:
        """See :meth:`KnowledgeGraphStore.stats`."""
        with self._open() as graphs:
            chosen = list(graphs.values()) if project is None else [graphs.get(project) or _Graph()]
            apis = {p.get("name") for g in chosen for _, p in g.labelled("Api")}
            nodes = Counter(r.label for g in chosen for r in g.nodes.values())
            edges = Counter(e[2] for g in chosen for e in g.edges)
        return GraphStats(project=project, apis=sorted(a for a in apis if a),
                          nodes=dict(nodes), edges=dict(edges))  # fmt: skip

    def resolve_signatures(
        self, project: str, signatures: Sequence[str], *, api: str | None = None
    ) -> dict[str, list[EndpointRef]]:
        """See :meth:`KnowledgeGraphStore.resolve_signatures`."""
        probes = {s: probe(s) for s in signatures}
        with self._project(project) as g:
            endpoints = [(k, p) for k, p in g.labelled("Endpoint") if api in (None, p.get("api"))]
        return {
            s: sorted((endpoint_ref(k, p) for k, p in endpoints
                       if endpoint_matches(pr, p.get("method", ""), p.get("path", ""))),
                      key=lambda e: (e.api, e.path, e.key))
            for s, pr in probes.items()
        }  # fmt: skip

    # -- memory links: each memory's refs, resolved against the graph whenever links are read --

    def link_memory(
        self, project: str, memory_id: str, refs: Sequence[str], notes: LinkNotes = LinkNotes()
    ) -> list[str]:
        """See :meth:`MemoryLinks.link_memory`."""
        unique = list(dict.fromkeys(refs))
        for ref in unique:
            ref_target(ref)  # a malformed ref fails before anything changes
        linked = _Linked(unique, notes)
        with self._project(project) as g:
            self._links.setdefault(project, {})[memory_id] = linked
            found = _resolve(g, {memory_id: unique})[memory_id]
        return [ref for ref in unique if not found[ref]]

    def unlink_memory(self, project: str, memory_id: str) -> None:
        """See :meth:`MemoryLinks.unlink_memory`."""
        with self._open():
            self._links.get(project, {}).pop(memory_id, None)

    def memory_links(
        self, project: str, keys: Sequence[str], limit: int | None = None
    ) -> dict[str, list[MemoryLink]]:
        """See :meth:`MemoryLinks.memory_links`."""
        with self._project(project) as g:
            linked = self._links.get(project, {})
            naming: dict[str, dict[str, list[str]]] = {}  # node key -> memory id -> its refs
            found = _resolve(g, {mid: m.refs for mid, m in linked.items()})
            for memory_id, by_ref in found.items():
                for ref, nodes in by_ref.items():
                    for node in nodes:
                        naming.setdefault(node, {}).setdefault(memory_id, []).append(ref)
            out = {}
            for key in dict.fromkeys(keys):
                if key not in g.nodes or g.nodes[key].label != "Endpoint":
                    continue
                direct = naming.get(key, {})
                ids = {*direct, *naming.get(g.props(key).get("resource", ""), {})}
                links = [
                    memory_link(mid, linked[mid].notes.rank, (
                        (ref in linked[mid].notes.avoid, ref in linked[mid].notes.inferred)
                        for ref in direct.get(mid, ())
                    ))
                    for mid in ids
                ]  # fmt: skip
                if links:
                    out[key] = in_reading_order(links, limit)
        return out

    def close(self) -> None:
        """Drop everything; the store answers :class:`StoreError` from then on. Safe twice."""
        with self._lock:
            self._graphs = None
            self._links, self._revisions = {}, {}


def _apply_nodes(g: _Graph, batch: GraphBatch) -> ChangeSummary:
    held = {k: r.hash for k, r in g.nodes.items() if r.scope == batch.scope}
    elsewhere = {k: (g.nodes[k].scope, g.nodes[k].hash)
                 for k in outside_keys(batch, held) if k in g.nodes}  # fmt: skip
    diff = node_diff(batch, held, elsewhere)
    for w in diff.writes:
        g.nodes[w.node.key] = _Row(batch.scope, w.node.label, w.props, w.hash)
    edges_removed = 0
    for key in diff.stale:  # a removed node takes every edge touching it, from any scope
        touching = [e for e in g.edges if key in (e[1], e[3])]
        for edge in touching:
            del g.edges[edge]
        edges_removed += len(touching)
        del g.nodes[key]
    return diff.summary.model_copy(update={"edges_removed": edges_removed})


def _apply_edges(g: _Graph, batch: GraphBatch) -> ChangeSummary:
    scope = batch.scope
    held = {(s, t, d): props for (sc, s, t, d), props in g.edges.items() if sc == scope}
    diff = edge_diff(batch, held, stored=lambda props: props)
    for ident in diff.gone:
        del g.edges[(scope, *ident)]
    for ident, _, text in diff.updates:
        g.edges[(scope, *ident)] = text
    inserts = [(ident, text) for ident, _, text in diff.inserts
               if ident[0] in g.nodes and ident[2] in g.nodes]  # else an end is missing: skipped
    for ident, text in inserts:
        g.edges[(scope, *ident)] = text
    return diff.summary(inserted=len(inserts))


class _Linked(NamedTuple):
    """A memory's refs as linked, with what it says about them."""

    refs: list[str]
    notes: LinkNotes


def _resolve(g: _Graph, refs: dict[str, list[str]]) -> dict[str, dict[str, list[str]]]:
    """Memory id -> ref -> the node keys the ref names in ``g`` now."""
    endpoints = [(k, p.get("method", ""), p.get("path", "")) for k, p in g.labelled("Endpoint")]
    resources = g.labelled("Resource")
    return {mid: resolve_refs(mrefs, endpoints, resources) for mid, mrefs in refs.items()}
