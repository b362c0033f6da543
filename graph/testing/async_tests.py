"""The conformance tests of :class:`~apiatlas.graph.store.KnowledgeGraphStore`'s async reads:
every ``a*`` read answers like its sync twin. The contract's defaults (a worker thread) and a
native async driver (Neo4j) must pass the same tests; they need ``pytest-asyncio``."""

from __future__ import annotations

import asyncio

import pytest

from apiatlas.errors import StoreError
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.testing.base import (
    CREATE_LOCATION,
    CREATE_SHIPMENT,
    P,
    READ_SHIPMENT,
    load,
)

QUESTIONS = ("what endpoints can I use to create a location?", "tracking event", "hauliers", "")


class AsyncKnowledgeGraphStoreTests:
    """What every :class:`KnowledgeGraphStore`'s async reads must answer (the adopter defines
    the ``store`` fixture)."""

    @pytest.mark.asyncio
    async def test_async_reads_answer_like_sync_reads(self, store: KnowledgeGraphStore) -> None:
        load(store)
        for text in QUESTIONS:
            assert await store.asearch(P, text) == store.search(P, text), text
        assert await store.asearch(P, "shipments", api="ship", limit=2) == store.search(P, "shipments", api="ship", limit=2)
        assert await store.asearch(P, "shipments", api="other") == []
        for key in (CREATE_SHIPMENT, CREATE_LOCATION, READ_SHIPMENT, "ship/endpoint/GET /nope"):
            assert await store.aget_endpoint(P, key) == store.get_endpoint(P, key), key
            assert await store.adependency_trail(P, key) == store.dependency_trail(P, key), key
            assert await store.aneighbourhood(P, key, depth=2) == store.neighbourhood(P, key, depth=2), key
        assert await store.adependency_trail(P, CREATE_SHIPMENT, max_depth=1) == store.dependency_trail(
            P, CREATE_SHIPMENT, max_depth=1
        )
        location = "ship/resource/location"
        assert await store.afind_endpoints(P, resource=location, kind="create") == store.find_endpoints(
            P, resource=location, kind="create"
        )
        assert await store.afind_endpoints(P, api="ship", limit=3) == store.find_endpoints(P, api="ship", limit=3)
        assert await store.aresources(P, api="ship") == store.resources(P, api="ship")
        assert await store.arevision(P) == store.revision(P) != ""
        assert await store.arevision("other") == ""
        assert await store.anodes(P, "Endpoint") == store.nodes(P, "Endpoint")
        assert await store.anodes(P, "DocSection", scope="docs:guide") == store.nodes(P, "DocSection", scope="docs:guide")
        # Scoped to the project like every sync read.
        assert await store.asearch("other", "location") == [] and await store.aresources("other") == []
        assert await store.aget_endpoint("other", CREATE_SHIPMENT) is None

    @pytest.mark.asyncio
    async def test_async_reads_run_concurrently(self, store: KnowledgeGraphStore) -> None:
        load(store)
        expected = [store.search(P, text) for text in QUESTIONS] * 3
        found = await asyncio.gather(*(store.asearch(P, text) for text in QUESTIONS * 3))
        assert list(found) == expected
        trails = await asyncio.gather(*(store.adependency_trail(P, CREATE_SHIPMENT) for _ in range(5)))
        assert all(t == store.dependency_trail(P, CREATE_SHIPMENT) for t in trails)

    @pytest.mark.asyncio
    async def test_aclose_then_reuse(self, store: KnowledgeGraphStore) -> None:
        load(store)
        assert await store.asearch(P, "location")
        await store.aclose()
        await store.aclose()
        # aclose releases this loop's async connections only; the store stays usable.
        assert await store.asearch(P, "location") == store.search(P, "location")
        await store.aclose()

    def test_async_reads_follow_the_event_loop(self, store: KnowledgeGraphStore) -> None:
        load(store)
        expected = store.dependency_trail(P, CREATE_SHIPMENT)
        # Each asyncio.run is a new loop, and the previous one is closed by then.
        for _ in range(3):
            assert asyncio.run(store.adependency_trail(P, CREATE_SHIPMENT)) == expected
        store.close()
        with pytest.raises(StoreError):
            asyncio.run(store.asearch(P, "location"))
