"""DESCRIBES linking: method+path mentions with prefixes and param spellings, operationIds."""

from __future__ import annotations

from apiatlas.graph.build.linker import extract_mentions, is_distinctive_id, link, normalise_path
from apiatlas.graph.model import Node


def _endpoint(method: str, path: str, operation_id: str = "", servers: list[str] | None = None) -> Node:
    props = {"method": method, "path": path, "operation_id": operation_id, "servers": servers or []}
    return Node(key=f"api/endpoint/{method} {path}", label="Endpoint", props=props)


def _doc(key: str, text: str) -> Node:
    return Node(key=key, label="DocSection", props={"mentions": extract_mentions(text)})


def test_extract_mentions() -> None:
    text = (
        "Call `POST <host>/rest/default/V1/inventory/sources` or GET https://api.x.example/v2/"
        "locations?limit=2. Use CreateLocation, not Locations or create_location_v2. "
        "DELETE is dangerous."
    )
    assert extract_mentions(text) == [
        "CreateLocation",
        "GET /v2/locations",
        "POST /rest/default/v1/inventory/sources",
        "create_location_v2",
    ]


def test_normalise_path_and_distinctive_ids() -> None:
    assert normalise_path("V1/products/:sku") == normalise_path("/V1/products/{productSku}") == "/v1/products/{}"
    assert normalise_path("https://h.example:8443/v2/x/<id>/") == "/v2/x/{}"
    assert is_distinctive_id("CreateLocation") and is_distinctive_id("create_location")
    assert not is_distinctive_id("Locations") and not is_distinctive_id("getX")


def test_link_tolerates_prefixes_and_param_spellings() -> None:
    endpoints = [
        _endpoint("POST", "/V1/inventory/sources"),
        _endpoint("GET", "/V1/products/{sku}"),
        _endpoint("POST", "/v2/locations", "CreateLocation", servers=["https://api.x.example/base"]),
        _endpoint("GET", "/items"),
        _endpoint("GET", "/v2/search", "search"),
    ]
    docs = [
        _doc("d/rest", "POST <host>/rest/default/V1/inventory/sources"),
        _doc("d/store", "POST /rest/us_store/V1/inventory/sources"),
        _doc("d/noslash", "The `POST V1/inventory/sources` endpoint creates a source."),
        _doc("d/colon", "GET /V1/products/:sku returns one product"),
        _doc("d/named", "GET /rest/all/V1/products/{productSku}"),
        _doc("d/server", "POST https://api.x.example/base/v2/locations"),
        _doc("d/opid", "Then call CreateLocation."),
        _doc("d/wrong-method", "GET /V1/inventory/sources lists them"),
        _doc("d/deeper", "GET /carts/mine/items is not /items"),
        _doc("d/plain", "You can search for things."),
        _doc("d/lower", "createlocation is not the id"),
    ]
    pairs = {(e.src, e.dst.split("/", 2)[2], e.props["via"]) for e in link(docs, endpoints)}
    assert pairs == {
        ("d/rest", "POST /V1/inventory/sources", "path"),
        ("d/store", "POST /V1/inventory/sources", "path"),
        ("d/noslash", "POST /V1/inventory/sources", "path"),
        ("d/colon", "GET /V1/products/{sku}", "path"),
        ("d/named", "GET /V1/products/{sku}", "path"),
        ("d/server", "POST /v2/locations", "path"),
        ("d/opid", "POST /v2/locations", "operation_id"),
    }
