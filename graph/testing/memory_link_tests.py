"""The conformance tests of :class:`~apiatlas.graph.store.MemoryLinks`, on a store that keeps the
graph too (a :class:`~apiatlas.graph.store.LinkedGraphStore`)."""

from __future__ import annotations

import pytest

from apiatlas.errors import UsageError
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.model import LinkNotes, MemoryLink
from apiatlas.graph.store import LinkedGraphStore
from apiatlas.graph.testing.base import (
    CREATE_LOCATION,
    CREATE_SHIPMENT,
    LIST_CARRIERS,
    P,
    READ_LOCATION,
    READ_SHIPMENT,
    load,
    snapshot,
)
from apiatlas.graph.testing.fixtures import shipping_guide, shipping_spec


class MemoryLinksTests:
    """What every store keeping memory links must answer (the adopter defines the ``store``
    fixture)."""

    def test_links_reach_endpoints_directly_and_through_their_resource(
        self, store: LinkedGraphStore
    ) -> None:
        load(store)
        assert store.link_memory(P, "m-direct", ["post /v2/locations/", "GET /v2/locations/{id}"]) == []
        assert store.link_memory(P, "m-plural", ["Locations"]) == []
        assert store.link_memory(P, "m-alias", ["facilities"]) == []
        about = store.memories_about(P, [CREATE_LOCATION, READ_LOCATION, CREATE_SHIPMENT, "nope"])
        assert about == {
            CREATE_LOCATION: ["m-alias", "m-direct", "m-plural"],
            READ_LOCATION: ["m-alias", "m-direct", "m-plural"],
        }
        listed = store.memories_about(P, ["ship/endpoint/GET /v2/locations"])
        assert listed == {"ship/endpoint/GET /v2/locations": ["m-alias", "m-plural"]}

    def test_links_say_what_the_memory_forbids_and_names_in_reading_order(
        self, store: LinkedGraphStore
    ) -> None:
        load(store)
        store.link_memory(P, "m-ban", ["POST /v2/locations", "GET /v2/locations/{id}"],
                          LinkNotes(avoid=frozenset({"POST /v2/locations"}), rank="2"))
        text = frozenset({"post /v2/locations"})
        store.link_memory(P, "m-text", list(text), LinkNotes(avoid=text, inferred=text, rank="1"))
        store.link_memory(P, "m-res", ["location"], LinkNotes(avoid=frozenset({"location"}), rank="1"))
        store.link_memory(P, "m-tie", ["GET /v2/locations/{id}"], LinkNotes(rank="1"))
        assert store.memory_links(P, [CREATE_LOCATION, READ_LOCATION, "nope"]) == {
            CREATE_LOCATION: [
                MemoryLink("m-res", avoids=False, named=False, rank="1"),
                MemoryLink("m-text", avoids=True, named=False, rank="1"),
                MemoryLink("m-ban", avoids=True, named=True, rank="2"),
            ],
            READ_LOCATION: [
                MemoryLink("m-res", avoids=False, named=False, rank="1"),
                MemoryLink("m-tie", avoids=False, named=True, rank="1"),
                MemoryLink("m-ban", avoids=False, named=True, rank="2"),
            ],
        }
        assert store.memories_about(P, [CREATE_LOCATION]) == {
            CREATE_LOCATION: ["m-ban", "m-res", "m-text"]
        }
        # At most one of each kind per endpoint: forbidding, naming it, the others.
        assert store.memory_links(P, [CREATE_LOCATION, READ_LOCATION], limit=1) == {
            CREATE_LOCATION: [MemoryLink("m-res", avoids=False, named=False, rank="1"),
                              MemoryLink("m-text", avoids=True, named=False, rank="1")],
            READ_LOCATION: [MemoryLink("m-res", avoids=False, named=False, rank="1"),
                            MemoryLink("m-tie", avoids=False, named=True, rank="1")],
        }  # fmt: skip
        store.link_memory(P, "m-ban", ["POST /v2/locations"], LinkNotes(rank="0"))  # no ban now
        assert store.memory_links(P, [CREATE_LOCATION])[CREATE_LOCATION][0] == MemoryLink(
            "m-ban", avoids=False, named=True, rank="0"
        )

    def test_link_replaces_returns_unmatched_and_unlinks(self, store: LinkedGraphStore) -> None:
        load(store)
        unmatched = store.link_memory(P, "m", ["POST /v2/locations", "DELETE /v2/nope", "warehouse"])
        assert unmatched == ["DELETE /v2/nope", "warehouse"]
        assert store.link_memory(P, "m", ["GET /v2/carriers"]) == []
        assert store.memories_about(P, [CREATE_LOCATION, LIST_CARRIERS]) == {LIST_CARRIERS: ["m"]}
        with pytest.raises(UsageError):
            store.link_memory(P, "m", ["GET /v2/carriers", "POST"])
        assert store.memories_about(P, [LIST_CARRIERS]) == {LIST_CARRIERS: ["m"]}
        store.unlink_memory(P, "m")
        store.unlink_memory(P, "m")
        assert store.memories_about(P, [LIST_CARRIERS]) == {}

    def test_links_follow_reingests(self, store: LinkedGraphStore) -> None:
        load(store)
        before = snapshot(store)
        hits = store.search(P, "retrieve a shipment")
        assert store.link_memory(P, "m-read", ["GET /v2/shipments/{shipment_id}"]) == []
        assert store.link_memory(P, "m-res", ["shipment"]) == []
        # Memory links are not graph nodes or edges: stats, nodes, neighbourhoods, search agree.
        assert snapshot(store) == before and store.search(P, "retrieve a shipment") == hits
        assert not ingest_graph(store, P, specs=[shipping_spec()], docs={"guide": shipping_guide()}).changed
        assert store.memories_about(P, [READ_SHIPMENT]) == {READ_SHIPMENT: ["m-read", "m-res"]}
        edges = sum(store.stats(P).edges.values())
        removed = ingest_graph(store, P, specs=[shipping_spec(drop={"GET /v2/shipments/{shipment_id}"})])
        assert removed.nodes_removed == 2
        assert removed.edges_removed == edges - sum(store.stats(P).edges.values())
        assert store.memories_about(P, [READ_SHIPMENT]) == {}
        assert store.memories_about(P, [CREATE_SHIPMENT]) == {CREATE_SHIPMENT: ["m-res"]}
        assert store.resolve_signatures(P, ["GET /v2/shipments/{id}"]) == {"GET /v2/shipments/{id}": []}
        back = ingest_graph(store, P, specs=[shipping_spec()])
        assert back.nodes_added == 2
        assert store.memories_about(P, [READ_SHIPMENT]) == {READ_SHIPMENT: ["m-read", "m-res"]}

    def test_memory_links_are_project_isolated(self, store: LinkedGraphStore) -> None:
        load(store, "a")
        load(store, "b")
        assert store.link_memory("a", "m", ["POST /v2/locations", "carrier"]) == []
        assert store.memories_about("b", [CREATE_LOCATION, LIST_CARRIERS]) == {}
        assert store.link_memory("b", "m", ["GET /v2/carriers"]) == []
        store.unlink_memory("b", "m")
        assert store.memories_about("a", [CREATE_LOCATION, LIST_CARRIERS]) == {
            CREATE_LOCATION: ["m"], LIST_CARRIERS: ["m"],
        }  # fmt: skip
        store.link_memory("b", "m-b", ["location"])
        store.delete_project("a")
        load(store, "a")
        assert store.memories_about("a", [CREATE_LOCATION, LIST_CARRIERS]) == {}
        assert store.memories_about("b", [CREATE_LOCATION]) == {CREATE_LOCATION: ["m-b"]}
