"""The knowledge-graph store contract: one ABC, implemented once per backend.

Backends only persist batches and answer these queries; everything derived (resources, kinds,
dependencies, doc links) is computed by the backend-neutral builders in this package. Every
method is scoped to a project, so nothing leaks between projects.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from apiatlas.graph.model import (
    ChangeSummary,
    Dependency,
    EndpointDetail,
    EndpointRef,
    GraphBatch,
    GraphStats,
    Neighbourhood,
    Node,
    NodeLabel,
    ResourceInfo,
)


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
    def dependency_trail(self, project: str, key: str, *, max_depth: int = 3) -> list[Dependency]:
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
    def stats(self, project: str | None = None) -> GraphStats:
        """Node counts per label and edge counts per type (all projects when ``None``)."""

    @abstractmethod
    def delete_project(self, project: str) -> None:
        """Remove everything the project owns."""

    def close(self) -> None:
        """Release connections. Safe to call twice."""
