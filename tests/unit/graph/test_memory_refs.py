"""The matching rules that link project-memory refs to endpoints and resources."""

from __future__ import annotations

import pytest

from apiatlas.errors import UsageError
from apiatlas.graph.memory_refs import (
    RefTarget,
    endpoint_matches,
    probe,
    ref_target,
    resolve_refs,
    resource_forms,
)


def test_ref_target_classifies_and_normalises() -> None:
    assert ref_target("post /v2/locations/{location_id}/") == RefTarget("endpoint", "POST /v2/locations/{}")
    assert ref_target(" Tracking Events ") == RefTarget("resource", "tracking event")
    assert ref_target("facilities") == RefTarget("resource", "facility")
    for bad in ("", "   ", "POST", "GET locations", "/v2/locations"):
        with pytest.raises(UsageError):
            ref_target(bad)


def test_probe_prefix_stops_at_the_first_parameter() -> None:
    found = probe("GET /v2/shipments/{id}/events/")
    assert (found.signature, found.method, found.prefix) == (
        "GET /v2/shipments/{}/events", "GET", "/v2/shipments/",
    )  # fmt: skip
    assert endpoint_matches(found, "GET", "/v2/shipments/{shipment_id}/events")
    assert endpoint_matches(found, "get", "/v2/shipments/{shipment_id}/events/")
    assert not endpoint_matches(found, "GET", "/v2/shipments/{shipment_id}/Events")
    assert not endpoint_matches(found, "GET", "/v2/shipments/{a}/events/{b}")


def test_resolve_refs_by_signature_name_and_alias() -> None:
    endpoints = [
        ("a/POST /v2/locations", "POST", "/v2/locations"),
        ("b/POST /v2/locations/", "POST", "/v2/locations/"),
        ("a/GET /v2/locations/{id}", "GET", "/v2/locations/{id}"),
        ("a/hook", "POST", "locationCreated"),
    ]
    resources = [("a/resource/location", {"name": "location", "aliases": ["facility", "site"]})]
    found = resolve_refs(
        ["POST /v2/locations", "GET /v2/locations/{location_id}", "Locations", "sites", "DELETE /x", "carrier"],
        endpoints,
        resources,
    )
    assert found == {
        "POST /v2/locations": ["a/POST /v2/locations", "b/POST /v2/locations/"],
        "GET /v2/locations/{location_id}": ["a/GET /v2/locations/{id}"],
        "Locations": ["a/resource/location"],
        "sites": ["a/resource/location"],
        "DELETE /x": [],
        "carrier": [],
    }
    assert resource_forms({"name": "tracking event", "aliases": ["Tracking Events", ""]}) == {"tracking event"}
