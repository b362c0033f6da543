"""The Neo4j store's async reads, on the native ``neo4j.AsyncGraphDatabase`` driver.

They run the very plans of :mod:`apiatlas.graph.neo4j.reads` that the sync methods run, so the
Cypher and the result mapping exist once.

An ``AsyncDriver`` belongs to the event loop it was created on: its pool holds that loop's
streams and locks, and another loop cannot use it. So the store creates its async driver lazily,
on first use, for the running loop, and keeps one per loop (normally exactly one). A call from a
different loop (successive ``asyncio.run`` calls, one loop per test, a loop per worker thread)
gets a driver of its own; drivers whose loop has closed are dropped, because their connections
died with that loop and there is nothing left to await. Await :meth:`Neo4jAsyncReads.aclose` on
a loop before it ends to close that loop's driver cleanly.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any, TypeVar

import neo4j

from apiatlas.errors import StoreError
from apiatlas.graph.neo4j import reads
from apiatlas.graph.model import (
    Dependency,
    EndpointDetail,
    EndpointRef,
    Neighbourhood,
    Node,
    NodeLabel,
    ResourceInfo,
)
from apiatlas.graph.neo4j.reads import DRIVER_ERRORS, DRIVER_OPTIONS, Plan
from apiatlas.graph.fts import Fts5Tokenizer
from apiatlas.graph.store import TRAIL_DEPTH

T = TypeVar("T")
_Loops = weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, neo4j.AsyncDriver]


class Neo4jAsyncReads:
    """Mixin giving the Neo4j store native async reads (one async driver per event loop).

    Args:
        uri: Bolt URI of the server.
        auth: ``(username, password)``.
        database: The database to use.
    """

    _tokenizer: Fts5Tokenizer

    def __init__(self, uri: str, auth: tuple[str, str], database: str) -> None:
        self._async_target = (uri, auth, database)
        self._async_lock = threading.Lock()
        self._async_drivers: _Loops = weakref.WeakKeyDictionary()
        self._async_open = True

    def _async_driver(self) -> neo4j.AsyncDriver:
        loop = asyncio.get_running_loop()
        uri, auth, _ = self._async_target
        with self._async_lock:
            if not self._async_open:
                raise StoreError(f"the Neo4j graph store at {uri} is closed")
            for stale in [other for other in self._async_drivers if other.is_closed()]:
                del self._async_drivers[stale]
            driver = self._async_drivers.get(loop)
            if driver is None:
                # No connection is made here; an unreachable server fails the first query.
                driver = neo4j.AsyncGraphDatabase.driver(uri, auth=auth, **DRIVER_OPTIONS)
                self._async_drivers[loop] = driver
            return driver

    async def _arun(self, plan: Plan[T]) -> T:
        """Run a read plan like the sync ``_run``: auto-commit steps in one read session."""
        uri, _, database = self._async_target
        try:
            driver = self._async_driver()
            async with driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as session:

                async def run(query: str, params: dict[str, Any]) -> reads.Rows:
                    result = await session.run(query, params)
                    return await result.data()

                return await reads.adrive(plan, run)
        except DRIVER_ERRORS as e:
            raise reads.store_error(uri, e) from e

    async def aclose(self) -> None:
        """Close the running loop's async driver (the sync driver stays). Safe to call twice."""
        with self._async_lock:
            driver = self._async_drivers.pop(asyncio.get_running_loop(), None)
        if driver is not None:
            await driver.close()

    def _forget_async_drivers(self) -> None:
        """Called by ``close``: no async driver may be made or used any more."""
        with self._async_lock:
            self._async_open = False
            self._async_drivers.clear()

    async def anodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        """Async :meth:`KnowledgeGraphStore.nodes`."""
        return await self._arun(reads.nodes(project, label, scope))

    async def afind_endpoints(
        self,
        project: str,
        *,
        resource: str | None = None,
        kind: str | None = None,
        api: str | None = None,
        limit: int = 50,
    ) -> list[EndpointRef]:
        """Async :meth:`KnowledgeGraphStore.find_endpoints`."""
        return await self._arun(reads.find_endpoints(project, resource, kind, api, limit))

    async def aget_endpoint(self, project: str, key: str) -> EndpointDetail | None:
        """Async :meth:`KnowledgeGraphStore.get_endpoint`."""
        return await self._arun(reads.get_endpoint(project, key))

    async def aneighbourhood(self, project: str, key: str, *, depth: int = 1) -> Neighbourhood:
        """Async :meth:`KnowledgeGraphStore.neighbourhood`."""
        return await self._arun(reads.neighbourhood(project, key, depth))

    async def adependency_trail(
        self, project: str, key: str, *, max_depth: int = TRAIL_DEPTH
    ) -> list[Dependency]:
        """Async :meth:`KnowledgeGraphStore.dependency_trail`."""
        return await self._arun(reads.dependency_trail(project, key, max_depth))

    async def asearch(
        self, project: str, text: str, *, api: str | None = None, limit: int = 10
    ) -> list[EndpointRef]:
        """Async :meth:`KnowledgeGraphStore.search`."""
        return await self._arun(reads.search(self._tokenizer, project, text, api, limit))

    async def arevision(self, project: str) -> str:
        """Async :meth:`KnowledgeGraphStore.revision`."""
        return await self._arun(reads.revision(project))

    async def aresources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        """Async :meth:`KnowledgeGraphStore.resources`."""
        return await self._arun(reads.resources(project, api))
