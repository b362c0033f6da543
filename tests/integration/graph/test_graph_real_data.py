"""The graph builders and the SQLite store on the bundled sample API and real third-party specs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.graph.build.builder import endpoint_key
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.models import ApiSpec
from apiatlas.loaders.openapi import load_openapi
from apiatlas.sample import sample_guides_dir, sample_spec_path

P = "real"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteGraphStore]:
    store = SqliteGraphStore(tmp_path / "g.sqlite")
    yield store
    store.close()


def _key(spec: ApiSpec, signature: str) -> str:
    return next(endpoint_key(spec.name, e) for e in spec.endpoints if e.key == signature)


def test_sample_api_trail_and_guide_links(store: SqliteGraphStore) -> None:
    spec = load_openapi(sample_spec_path())[0]
    summary = ingest_graph(store, P, specs=[spec], docs={"guides": load_docs(sample_guides_dir())})
    assert summary.nodes_added > 0
    trail = store.dependency_trail(P, _key(spec, "POST /v2/shipments"))
    direct = {(d.parameter, d.provider.signature) for d in trail if d.depth == 1}
    assert ("origin_location_id", "POST /v2/locations") in direct
    assert ("carrier_id", "POST /v2/carriers") in direct
    # The deprecated v1 create comes after the current one.
    location_creates = [d.provider.signature for d in trail if d.parameter == "origin_location_id"]
    assert location_creates.index("POST /v2/locations") < location_creates.index("POST /v1/locations")
    detail = store.get_endpoint(P, _key(spec, "POST /v2/shipments"))
    assert detail is not None and any(d.source.endswith("shipments.md") for d in detail.docs)
    assert store.search(P, "what endpoints can I use to create a location?")[0].signature == "POST /v2/locations"
    again = ingest_graph(store, P, specs=[spec], docs={"guides": load_docs(sample_guides_dir())})
    assert not again.changed


@pytest.mark.shared_data
def test_square_locations(store: SqliteGraphStore, shared_data: Path) -> None:
    spec = load_openapi(shared_data / "square" / "spec" / "api.json")[0]
    ingest_graph(store, P, specs=[spec])
    create = store.get_endpoint(P, _key(spec, "POST /v2/locations"))
    assert create is not None
    assert (create.endpoint.kind, create.endpoint.resource) == ("create", "square/resource/location")
    update = store.get_endpoint(P, _key(spec, "PUT /v2/locations/{location_id}"))
    assert update is not None and update.endpoint.kind == "update"
    search = store.get_endpoint(P, _key(spec, "POST /v2/customers/search"))
    assert search is not None and search.endpoint.kind == "search"
    trail = store.dependency_trail(P, _key(spec, "GET /v2/locations/{location_id}"))
    assert [d.provider.operation_id for d in trail if d.depth == 1][:2] == ["CreateLocation", "ListLocations"]
    listed = {e.signature for e in store.find_endpoints(P, resource="square/resource/location")}
    assert {"GET /v2/locations", "POST /v2/locations"} <= listed
    assert len(store.nodes(P, "Endpoint")) == len(spec.endpoints)


@pytest.mark.shared_data
def test_adobe_sources_are_described_by_the_tutorial(store: SqliteGraphStore, shared_data: Path) -> None:
    root = shared_data / "adobe-commerce"
    spec = load_openapi(root / "spec" / "src" / "openapi" / "admin-schema-2.4.8.yaml")[0]
    docs = load_docs(root / "docs" / "src" / "pages")
    ingest_graph(store, P, specs=[spec], docs={"adobe": docs})
    detail = store.get_endpoint(P, _key(spec, "POST /V1/inventory/sources"))
    assert detail is not None
    assert detail.endpoint.kind == "create"
    assert detail.endpoint.resource == f"{spec.name}/resource/inventory/source"
    described = {Path(d.source).as_posix() for d in detail.docs}
    assert any(s.endswith("tutorials/inventory/create-sources.md") for s in described)
    products = store.get_endpoint(P, _key(spec, "GET /V1/products"))
    assert products is not None and products.endpoint.kind == "list"
    hits = store.search(P, "create inventory source", api=spec.name)
    assert hits[0].signature == "POST /V1/inventory/sources"
