"""The conformance tests of :class:`~apiatlas.graph.store.KnowledgeGraphStore`'s sync methods."""

from __future__ import annotations

import math

import pytest

from apiatlas.errors import StoreError, UsageError
from apiatlas.graph.build.builder import build_api_batch
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.model import GraphBatch, Node
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.testing.base import (
    CREATE_LOCATION,
    CREATE_SHIPMENT,
    P,
    READ_SHIPMENT,
    load,
    snapshot,
)
from apiatlas.graph.testing.fixtures import shipping_code, shipping_guide, shipping_spec


class KnowledgeGraphStoreTests:
    """What every :class:`KnowledgeGraphStore` must answer (the adopter defines the ``store``
    fixture)."""

    def test_upsert_makes_everything_queryable(self, store: KnowledgeGraphStore) -> None:
        summary = ingest_graph(store, P, specs=[shipping_spec()], docs={"guide": shipping_guide()})
        assert summary.nodes_added > 0 and summary.edges_added > 0 and summary.nodes_removed == 0
        assert len(store.nodes(P, "Endpoint")) == 11
        assert store.scopes(P) == ["api:ship", "docs:guide", "links"]
        creates = store.find_endpoints(P, resource="ship/resource/location", kind="create")
        assert [e.signature for e in creates] == ["POST /v2/locations"]
        listed = store.find_endpoints(P, resource="ship/resource/location")
        assert [e.signature for e in listed] == [
            "GET /v2/locations", "POST /v2/locations",
            "GET /v2/locations/{location_id}", "PUT /v2/locations/{location_id}",
        ]  # fmt: skip
        assert len(store.find_endpoints(P, api="ship", limit=3)) == 3

    def test_get_endpoint_assembles_detail(self, store: KnowledgeGraphStore) -> None:
        load(store)
        detail = store.get_endpoint(P, CREATE_SHIPMENT)
        assert detail is not None
        assert detail.endpoint.kind == "create" and detail.endpoint.resource == "ship/resource/shipment"
        assert detail.request_schema == "CreateShipmentRequest" and detail.response_schema == "Shipment"
        names = [f.name for f in detail.request_fields]
        assert names == ["carrier_id", "origin_location_id", "parcel.weight", "reference"]
        assert detail.servers == ["https://api.ship.example"]
        assert [d.anchor for d in detail.docs] == ["book-a-shipment"]
        location = store.get_endpoint(P, CREATE_LOCATION)
        assert location is not None and location.examples[0]["value"] == {"name": "Main St"}
        assert location.examples[0]["pointer"] == "/paths/~1v2~1locations/post"
        read = store.get_endpoint(P, "ship/endpoint/GET /v2/locations/{location_id}")
        assert read is not None and [(p.name, p.location, p.required) for p in read.parameters] == [
            ("location_id", "path", True)
        ]
        assert store.get_endpoint(P, "ship/endpoint/GET /nope") is None
        assert store.get_endpoint(P, "ship/resource/location") is None

    def test_resolve_signatures_ignores_parameter_names(self, store: KnowledgeGraphStore) -> None:
        load(store)
        asked = ["post /v2/shipments/{id}/cancel/", "GET /v2/locations/{x}", "DELETE /v2/nope"]
        found = store.resolve_signatures(P, asked)
        assert list(found) == asked
        assert [e.key for e in found[asked[0]]] == ["ship/endpoint/POST /v2/shipments/{shipment_id}/cancel"]
        assert [e.operation_id for e in found[asked[1]]] == ["RetrieveLocation"]
        assert found[asked[2]] == []
        assert store.resolve_signatures(P, ["GET /v2/carriers"], api="other") == {"GET /v2/carriers": []}
        assert store.resolve_signatures("b", ["GET /v2/carriers"]) == {"GET /v2/carriers": []}
        with pytest.raises(UsageError):
            store.resolve_signatures(P, ["locations"])

    def test_reapply_is_a_no_op(self, store: KnowledgeGraphStore) -> None:
        load(store)
        before = snapshot(store)
        again = ingest_graph(store, P, specs=[shipping_spec()], docs={"guide": shipping_guide()})
        assert not again.changed
        assert again.nodes_unchanged == sum(store.stats(P).nodes.values())
        assert snapshot(store) == before

    def test_a_scope_read_back_as_a_batch_puts_it_back(self, store: KnowledgeGraphStore) -> None:
        load(store)
        before = snapshot(store)
        saved = [store.batch(P, scope) for scope in store.scopes(P)]
        built = build_api_batch(shipping_spec(), project=P)
        api = next(b for b in saved if b.scope == built.scope)
        assert sorted(api.nodes, key=lambda n: n.key) == sorted(built.nodes, key=lambda n: n.key)
        assert {(e.src, e.type, e.dst) for e in api.edges} == {
            (e.src, e.type, e.dst) for e in built.edges}
        assert api.edges == sorted(api.edges, key=lambda e: (e.src, e.type, e.dst))
        assert not store.apply(saved).changed  # as stored: applied again, nothing changes
        ingest_graph(store, P, specs=[shipping_spec(
            summary_override={"GET /v2/carriers": "Enumerate hauliers"},
            drop={"GET /v2/shipments/{shipment_id}"})])
        assert snapshot(store) != before
        assert store.apply(saved).changed  # an ingest's undo
        assert snapshot(store) == before
        assert store.batch(P, "no-such-scope") == GraphBatch(project=P, scope="no-such-scope")

    def test_changed_summary_updates_exactly_one_node(self, store: KnowledgeGraphStore) -> None:
        load(store)
        changed = ingest_graph(
            store, P, specs=[shipping_spec(summary_override={"GET /v2/carriers": "Enumerate hauliers"})]
        )
        assert (changed.nodes_updated, changed.nodes_added, changed.nodes_removed) == (1, 0, 0)
        assert (changed.edges_added, changed.edges_removed) == (0, 0)
        hits = store.search(P, "hauliers")
        assert [h.signature for h in hits] == ["GET /v2/carriers"]
        # Links to the untouched doc set survive an API-only ingest.
        detail = store.get_endpoint(P, CREATE_SHIPMENT)
        assert detail is not None and len(detail.docs) == 1

    def test_removed_endpoint_takes_only_its_own_nodes_and_edges(self, store: KnowledgeGraphStore) -> None:
        load(store)
        before = store.stats(P)
        removed = ingest_graph(store, P, specs=[shipping_spec(drop={"GET /v2/shipments/{shipment_id}"})])
        # The endpoint and its own path parameter node; the shared "read" kind node stays.
        assert removed.nodes_removed == 2 and removed.nodes_added == 0 and removed.nodes_updated == 0
        assert store.get_endpoint(P, READ_SHIPMENT) is None
        assert store.neighbourhood(P, READ_SHIPMENT).nodes == []
        after = store.stats(P)
        assert after.nodes["Endpoint"] == before.nodes["Endpoint"] - 1
        assert after.nodes["Resource"] == before.nodes["Resource"]
        assert after.nodes["DocSection"] == before.nodes["DocSection"]
        # Its REQUIRES edges (to the shipment create) went with it, nothing else did.
        assert after.edges["REQUIRES"] == before.edges["REQUIRES"] - 1
        assert after.edges["DESCRIBES"] == before.edges["DESCRIBES"]
        assert removed.edges_removed == sum(before.edges.values()) - sum(after.edges.values())

    def test_projects_are_isolated(self, store: KnowledgeGraphStore) -> None:
        load(store, "a")
        load(store, "b", summary_override={"GET /v2/carriers": "Enumerate hauliers"})
        assert store.search("a", "hauliers") == []
        assert [h.signature for h in store.search("b", "hauliers")] == ["GET /v2/carriers"]
        a_detail = store.get_endpoint("a", "ship/endpoint/GET /v2/carriers")
        assert a_detail is not None and a_detail.endpoint.summary == "List carriers"
        projects = store.projects()
        assert {"a", "b"} <= set(projects) and projects == sorted(projects)
        store.delete_project("a")
        assert "a" not in store.projects() and "b" in store.projects()
        assert store.nodes("a", "Endpoint") == [] and store.scopes("a") == []
        assert store.search("a", "carriers") == [] and store.dependency_trail("a", CREATE_SHIPMENT) == []
        assert store.stats("a").nodes == {} and store.resources("a") == []
        assert len(store.nodes("b", "Endpoint")) == 11
        assert store.stats().apis == ["ship"]
        assert len(store.dependency_trail("b", CREATE_SHIPMENT)) > 0

    def test_dependency_trail(self, store: KnowledgeGraphStore) -> None:
        load(store)
        direct = [d for d in store.dependency_trail(P, CREATE_SHIPMENT) if d.depth == 1]
        assert [(d.parameter, d.provider.operation_id) for d in direct] == [
            ("carrier_id", "CreateCarrier"),
            ("carrier_id", "ListCarriers"),
            ("origin_location_id", "CreateLocation"),
            ("origin_location_id", "ListLocations"),
        ]
        trail = store.dependency_trail(P, "ship/endpoint/POST /v2/shipments/{shipment_id}/tracking-events")
        assert (trail[0].parameter, trail[0].provider.operation_id, trail[0].depth) == (
            "shipment_id", "CreateShipment", 1,
        )  # fmt: skip
        assert {d.provider.operation_id for d in trail if d.depth == 2} >= {"CreateCarrier", "CreateLocation"}
        providers = [d.provider.key for d in trail]
        assert len(providers) == len(set(providers))
        assert all(d.depth == 1 for d in store.dependency_trail(P, trail[0].endpoint.key, max_depth=1))
        assert store.dependency_trail(P, CREATE_LOCATION) == []

    def test_describes_links_across_ingests(self, store: KnowledgeGraphStore) -> None:
        ingest_graph(store, P, docs={"guide": shipping_guide()})
        ingest_graph(store, P, specs=[shipping_spec()])
        shipment = store.get_endpoint(P, CREATE_SHIPMENT)
        assert shipment is not None and [d.anchor for d in shipment.docs] == ["book-a-shipment"]
        assert shipment.docs[0].section_path == ["Shipping guide", "Book a shipment"]
        carrier = store.get_endpoint(P, "ship/endpoint/POST /v2/carriers")
        assert carrier is not None and [d.anchor for d in carrier.docs] == ["carriers"]
        assert store.stats(P).edges["DESCRIBES"] == 2

    def test_code_sites_link_across_ingests(self, store: KnowledgeGraphStore) -> None:
        ingest_graph(store, P, code={"app": shipping_code()})
        assert len(store.nodes(P, "CodeFile")) == 2
        assert store.nodes(P, "CodeSite") == []  # no API yet: nothing the calls reach
        ingest_graph(store, P, specs=[shipping_spec()])  # the code is linked, not re-read
        sites = {(n.props["file"], n.props["line"]): n.props for n in store.nodes(P, "CodeSite")}
        assert {place: (s["endpoint"], s["matched_by"]) for place, s in sites.items()} == {
            ("app/client.py", 8): ("POST /v2/shipments", "http"),
            ("app/client.py", 11): ("GET /v2/shipments/{shipment_id}", "http"),
            ("app/client.py", 14): (None, "host"),
            ("app/tools.py", 2): ("POST /v2/locations", "operation-id"),
        }
        assert sites[("app/client.py", 8)]["function"] == "Shipments.book"
        assert sites[("app/client.py", 8)]["api"] == "ship"
        stats = store.stats(P)
        assert stats.nodes["CodeSite"] == 4 and stats.edges["CALLS"] == 3
        assert stats.nodes["CodeFunction"] == 4 and stats.edges["HAS_SITE"] == 4
        around = store.neighbourhood(P, CREATE_SHIPMENT)
        assert any(n.label == "CodeSite" and n.props["line"] == 8 for n in around.nodes)
        assert store.nodes("a", "CodeSite") == []

    def test_a_removed_code_file_takes_only_its_sites(self, store: KnowledgeGraphStore) -> None:
        ingest_graph(store, P, specs=[shipping_spec()], code={"app": shipping_code()})
        ingest_graph(store, P, code={"app": shipping_code(without=frozenset({"app/tools.py"}))})
        files = {n.props["path"] for n in store.nodes(P, "CodeFile")}
        sites = {(n.props["file"], n.props["line"]) for n in store.nodes(P, "CodeSite")}
        assert files == {"app/client.py"}
        assert sites == {("app/client.py", 8), ("app/client.py", 11), ("app/client.py", 14)}
        assert store.stats(P).edges["CALLS"] == 2
        ingest_graph(store, P, specs=[shipping_spec(drop=frozenset({"POST /v2/shipments"}))])
        left = {(n.props["line"], n.props["endpoint"]) for n in store.nodes(P, "CodeSite")}
        assert (8, "POST /v2/shipments") not in left and (11, "GET /v2/shipments/{shipment_id}") in left

    def test_search_ranks_and_survives_hostile_input(self, store: KnowledgeGraphStore) -> None:
        load(store)
        hits = store.search(P, "what endpoints can I use to create a location?")
        assert hits[0].signature == "POST /v2/locations" and hits[0].score > 0
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert store.search(P, "facility")[0].resource == "ship/resource/location"
        assert store.search(P, "tracking event")[0].operation_id == "CreateTrackingEvent"
        assert store.search(P, "shipments", api="other") == []
        total = len(store.nodes(P, "Endpoint"))
        for hostile in ['"); DROP TABLE nodes; --', "NEAR(", 'loc* OR "', "a:b AND NOT c", "", "*"]:
            assert len(store.search(P, hostile, limit=50)) < total
        assert len(store.nodes(P, "Endpoint")) == total

    def test_failed_apply_leaves_previous_graph_intact(self, store: KnowledgeGraphStore) -> None:
        load(store)
        before = snapshot(store)
        changed = build_api_batch(shipping_spec(summary_override={"GET /v2/carriers": "Changed"}), project=P)
        bad_object = GraphBatch(project=P, scope="bad", nodes=[Node(key="x", label="Tag", props={"v": object()})])
        bad_nan = GraphBatch(project=P, scope="bad", nodes=[Node(key="y", label="Tag", props={"v": math.nan})])
        for bad in (bad_object, bad_nan):
            with pytest.raises(StoreError):
                store.apply([changed, bad])
            assert snapshot(store) == before
        assert store.search(P, "Changed") == []
        assert store.dependency_trail(P, CREATE_SHIPMENT)

    def test_edges_to_missing_nodes_are_skipped(self, store: KnowledgeGraphStore) -> None:
        load(store)
        batch = GraphBatch(
            project=P,
            scope="extra",
            nodes=[Node(key="extra/tag", label="Tag", props={"name": "extra"})],
            edges=[
                {"src": CREATE_LOCATION, "type": "TAGGED", "dst": "extra/tag"},  # type: ignore[list-item]
                {"src": CREATE_LOCATION, "type": "TAGGED", "dst": "missing/tag"},  # type: ignore[list-item]
            ],
        )
        summary = store.apply([batch])
        assert (summary.nodes_added, summary.edges_added) == (1, 1)
        assert not store.apply([batch]).changed
        removal = store.apply([GraphBatch(project=P, scope="extra")])
        assert (removal.nodes_removed, removal.edges_removed) == (1, 1)

    def test_resources_and_neighbourhood(self, store: KnowledgeGraphStore) -> None:
        load(store)
        by_key = {r.key: r for r in store.resources(P, api="ship")}
        assert {"facility", "site"} <= set(by_key["ship/resource/location"].aliases)
        event = by_key["ship/resource/shipment/tracking-event"]
        assert (event.name, event.parent) == ("tracking event", "ship/resource/shipment")
        assert store.resources(P, api="other") == []
        hood = store.neighbourhood(P, CREATE_LOCATION)
        keys = {n.key for n in hood.nodes}
        assert {CREATE_LOCATION, "ship/resource/location", "ship/kind/create", "ship/schema/CreateLocationRequest"} <= keys
        assert all(CREATE_LOCATION in (e.src, e.dst) for e in hood.edges)
        wider = store.neighbourhood(P, CREATE_LOCATION, depth=2)
        assert len(wider.nodes) > len(hood.nodes)
        assert store.neighbourhood(P, "nope").nodes == []

    def test_revision_changes_with_the_projects_graph_only(self, store: KnowledgeGraphStore) -> None:
        assert store.revision("never-ingested") == ""
        empty = store.revision(P)  # "" or, after a fixture's delete_project, that delete's
        load(store)
        first = store.revision(P)
        assert first not in ("", empty)
        load(store)  # no-op re-ingest
        store.search(P, "location")
        assert store.revision(P) == first
        other = store.revision("b")
        load(store, "b", summary_override={"GET /v2/carriers": "Enumerate hauliers"})
        assert store.revision(P) == first and store.revision("b") not in (other, first)
        load(store, summary_override={"GET /v2/carriers": "Enumerate hauliers"})
        second = store.revision(P)
        assert second not in ("", first)
        ingest_graph(store, P, specs=[shipping_spec(drop={"GET /v2/shipments/{shipment_id}"})])
        third = store.revision(P)
        assert third not in (first, second)
        store.delete_project(P)
        deleted = store.revision(P)
        assert deleted not in ("", first, second, third)
        load(store)  # the same graph as at `first`, but a new revision: caches must not revive
        reloaded = store.revision(P)
        assert reloaded not in (first, second, third, deleted)
        with pytest.raises(StoreError):
            store.apply([GraphBatch(project=P, scope="bad", nodes=[Node(key="x", label="Tag", props={"v": math.nan})])])
        assert store.revision(P) == reloaded  # a failed apply changed nothing

    def test_stats(self, store: KnowledgeGraphStore) -> None:
        assert store.stats(P).nodes == {}
        load(store)
        stats = store.stats(P)
        assert stats.apis == ["ship"] and stats.project == P
        assert stats.nodes["Endpoint"] == 11 and stats.nodes["DocSection"] == 3
        assert stats.nodes["OperationKind"] == 6  # no search endpoint in this API
        assert stats.edges["OF_KIND"] == 11 and stats.edges["HAS_ENDPOINT"] == 11
        assert store.stats().nodes["Endpoint"] == 11
        store.close()
        store.close()
