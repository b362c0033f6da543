"""The knowledge-graph store contracts, and where their reference and conformance suite live.

Two contracts:

- :class:`KnowledgeGraphStore` (an ABC): persist builder batches and answer the graph's queries.
  Backends only persist and answer; everything derived (resources, kinds, dependencies, doc links)
  is computed by the backend-neutral builders of :mod:`apiatlas.graph.build`. Every method is
  scoped to a project, so nothing leaks between projects. The ``a*`` reads default to the sync
  method in a worker thread; a backend with a native async driver overrides them.
- :class:`MemoryLinks` (a Protocol): link project memories to the endpoints and resources their
  refs name, and say which memories concern an endpoint. Project memory
  (:class:`~apiatlas.rag.memory.links.LinkedMemory`) needs both contracts:
  :class:`LinkedGraphStore` is the two together, and what every shipped backend implements.

Implementations: :class:`~apiatlas.graph.inmemory.InMemoryGraphStore` is the reference (small
dicts, no index, for reading and for tests); :class:`~apiatlas.graph.sqlite.store.SqliteGraphStore`
is the embedded default and :class:`~apiatlas.graph.neo4j.store.Neo4jGraphStore` the server one.

A new backend adopts the conformance suite :mod:`apiatlas.graph.testing` by subclassing its test
classes in a ``Test*`` class and defining the one ``store`` fixture they take, yielding an empty
store; the three backends above run exactly the same tests.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol, get_args

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


TRAIL_DEPTH = 3
"""REQUIRES hops a dependency trail follows by default (what must be called first, and what
that needs in turn)."""


class KnowledgeGraphStore(ABC):
    """Persistence and queries for the API knowledge graph."""

    @abstractmethod
    def apply(self, batches: Sequence[GraphBatch]) -> ChangeSummary:
        """Make each batch's scope hold exactly the batch's nodes and edges, atomically.

        All batches are applied in one transaction: if anything fails, the store is left as it
        was before the call. Nodes that are no longer in their scope are removed together with
        every edge touching them (from any scope). Edges whose source or target node does not
        exist once the batches are applied are not stored. Re-applying an identical batch
        changes nothing.

        Raises:
            StoreError: The backend failed; nothing was written.
        """

    @abstractmethod
    def nodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """All nodes of ``label`` in the project (optionally only one scope's)."""

    @abstractmethod
    def edges(self, project: str, *, scope: str) -> list[Edge]:
        """Every edge the scope owns, ordered by source, type and target."""

    def batch(self, project: str, scope: str) -> GraphBatch:
        """The scope as stored, as the batch that writes it: applied again, it changes nothing.
        An ingest keeps these of the scopes it replaces, to put them back if it fails."""
        nodes = [node for label in get_args(NodeLabel)
                 for node in self.nodes(project, label, scope=scope)]  # fmt: skip
        return GraphBatch(project=project, scope=scope, nodes=nodes,
                          edges=self.edges(project, scope=scope))

    @abstractmethod
    def scopes(self, project: str) -> list[str]:
        """The scopes present in the project."""

    @abstractmethod
    def find_endpoints(
        self,
        project: str,
        *,
        resource: str | None = None,
        kind: str | None = None,
        api: str | None = None,
        limit: int = 50,
    ) -> list[EndpointRef]:
        """Endpoints of a resource (by resource key) and/or operation kind, in path order."""

    @abstractmethod
    def get_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """Full detail of one endpoint, with its parameters, schemas, examples and doc sections."""

    @abstractmethod
    def neighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """Nodes and edges within ``depth`` hops of ``key``, in either direction."""

    @abstractmethod
    def dependency_trail(
        self, project: str, key: str, *, max_depth: int = TRAIL_DEPTH
    ) -> list[Dependency]:
        """The REQUIRES trail of an endpoint: what must be called first, nearest first."""

    @abstractmethod
    def search(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """Full-text search over endpoint paths, operation ids, summaries, descriptions and
        resource names, best first, with ``score`` set. ``text`` is user text: bind it, never
        splice it into a query."""

    @abstractmethod
    def resources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """Every resource with its aliases."""

    @abstractmethod
    def revision(self, project: str) -> str:
        """An opaque token that changes whenever the project's graph changes.

        Every :meth:`apply` that changes something in the project, and :meth:`delete_project`,
        gives it a value it never had before; reads and no-op applies leave it alone. ``""``
        until the first change. It lives in the store, so a cache keyed on it (the retriever's
        resource list) also notices ingests made by other processes.
        """

    @abstractmethod
    def projects(self) -> list[str]:
        """The projects that hold anything, sorted (a deleted project is not one)."""

    @abstractmethod
    def stats(self, project: str | None = None) -> GraphStats:
        """Node counts per label and edge counts per type (all projects when ``None``)."""

    @abstractmethod
    def delete_project(self, project: str) -> None:
        """Remove everything the project owns (its memory links too, in a store that keeps
        them) and give its :meth:`revision` a new value."""

    @abstractmethod
    def resolve_signatures(
        self, project: str, signatures: Sequence[str], *, api: str | None = None
    ) -> dict[str, list[EndpointRef]]:
        """The endpoints each ``METHOD /path`` signature names, per signature as given.

        Methods compare case-insensitively; path-parameter names and a trailing slash are
        ignored (``POST /v2/locations/{id}/`` names ``POST /v2/locations/{location_id}``). Any
        API matches unless ``api`` is given (the rules of :mod:`apiatlas.graph.memory_refs`).
        Endpoints come ordered by API, path and key; an empty list means no such endpoint exists.

        Raises:
            UsageError: A signature is not ``METHOD /path``.
        """

    def close(self) -> None:
        """Release connections. Safe to call twice."""

    # -- async reads ----------------------------------------------------------------------------
    # Same arguments and answers as their sync twins. These defaults run the sync method in a
    # worker thread, which suits an in-process backend (SQLite); a backend with a native async
    # driver (Neo4j) overrides them.

    async def anodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """Async :meth:`nodes`."""
        return await asyncio.to_thread(self.nodes, project, label, scope=scope)

    async def afind_endpoints(
        self,
        project: str,
        *,
        resource: str | None = None,
        kind: str | None = None,
        api: str | None = None,
        limit: int = 50,
    ) -> list[EndpointRef]:
        """Async :meth:`find_endpoints`."""
        return await asyncio.to_thread(
            self.find_endpoints, project, resource=resource, kind=kind, api=api, limit=limit
        )

    async def aget_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """Async :meth:`get_endpoint`."""
        return await asyncio.to_thread(self.get_endpoint, project, key)

    async def aneighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """Async :meth:`neighbourhood`."""
        return await asyncio.to_thread(self.neighbourhood, project, key, depth=depth)

    async def adependency_trail(
        self, project: str, key: str, *, max_depth: int = TRAIL_DEPTH
    ) -> list[Dependency]:
        """Async :meth:`dependency_trail`."""
        return await asyncio.to_thread(self.dependency_trail, project, key, max_depth=max_depth)

    async def asearch(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """Async :meth:`search`."""
        return await asyncio.to_thread(self.search, project, text, api=api, limit=limit)

    async def aresources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """Async :meth:`resources`."""
        return await asyncio.to_thread(self.resources, project, api=api)

    async def arevision(self, project: str) -> str:
        """Async :meth:`revision`."""
        return await asyncio.to_thread(self.revision, project)

    async def aclose(self) -> None:
        """Release what the async methods hold for the running event loop. Safe to call twice.

        :meth:`close` still releases everything else; the default holds nothing.
        """


class MemoryLinks(Protocol):
    """Links from project memories to the graph's endpoints and resources, kept by the store.

    A memory's refs are ``METHOD /path`` signatures or resource names, matched by the rules of
    :mod:`apiatlas.graph.memory_refs`. A link lasts exactly while the graph holds what its ref
    names, across any number of ingests; a store that keeps links drops a project's in
    :meth:`KnowledgeGraphStore.delete_project`. Memory links are not graph nodes or edges: no
    graph read (stats, nodes, neighbourhoods, search, revision) sees them.
    """

    @abstractmethod
    def link_memory(
        self, project: str, memory_id: str, refs: Sequence[str], notes: LinkNotes = LinkNotes()
    ) -> list[str]:
        """Replace the memory's links with links to what its ``refs`` name.

        An endpoint ref (``METHOD /path``) links to every endpoint it names (as in
        :meth:`KnowledgeGraphStore.resolve_signatures`); a resource ref links to every resource
        whose name or alias it is (singular or plural, any case). The refs are kept with the
        link, so a link to an endpoint that a re-ingest removes disappears and comes back when
        the endpoint does; a ref that names nothing yet links as soon as an ingest adds what it
        names.

        Args:
            project: The project of the memory.
            memory_id: The memory.
            refs: What the memory is about.
            notes: What it says about them, read back by :meth:`memory_links`.

        Returns:
            The refs (as given) that name nothing in the graph now.

        Raises:
            UsageError: A ref is empty, or starts with an HTTP method but has no ``/path``.
            StoreError: The backend failed; the previous links are left as they were.
        """

    @abstractmethod
    def unlink_memory(self, project: str, memory_id: str) -> None:
        """Remove every link of the memory (nothing happens if it has none)."""

    @abstractmethod
    def memory_links(
        self, project: str, keys: Sequence[str], limit: int | None = None
    ) -> dict[str, list[MemoryLink]]:
        """The memories linked to each endpoint key, directly or through its resource, with
        what their refs say about that endpoint, so a reader can pick the few to read.

        Args:
            project: The project.
            keys: Endpoint keys.
            limit: At most this many links per endpoint of each kind (those that forbid it;
                those that name it and do not; the others), the first in reading order;
                ``None``: every link.

        Returns:
            Endpoint key -> its links in ``(rank, memory_id)`` order, only for the keys that
            exist and have memories.
        """

    def memories_about(self, project: str, keys: Sequence[str]) -> dict[str, list[str]]:
        """Ids of the memories linked to each endpoint key, directly or through its resource.

        Returns:
            Endpoint key -> sorted memory ids, only for the keys that exist and have memories.
        """
        found = self.memory_links(project, keys)
        return {key: sorted(link.memory_id for link in links) for key, links in found.items()}


class LinkedGraphStore(KnowledgeGraphStore, MemoryLinks):
    """A knowledge-graph store that keeps memory links too: what project memory runs on.

    Every shipped backend is one. :class:`~apiatlas.rag.memory.links.LinkedMemory` links and
    reads links through :class:`MemoryLinks` and resolves refs with
    :meth:`KnowledgeGraphStore.resolve_signatures`.
    """
