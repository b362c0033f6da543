"""A small shipping API, its guide and the team's code calling it, built in Python: the graph the
conformance suite loads."""

from __future__ import annotations

import hashlib
from typing import Any

from apiatlas.loaders.code.models import CodeFile
from apiatlas.loaders.models import (
    ApiSpec,
    DocPage,
    DocSection,
    Endpoint,
    ExampleInfo,
    FieldInfo,
    ParameterInfo,
    Provenance,
    RequestBodyInfo,
    ResponseInfo,
)

SOURCE = "/specs/ship.yaml"


def _prov(pointer: str) -> Provenance:
    return Provenance(source=SOURCE, pointer=pointer)


def _ptr(method: str, path: str) -> str:
    return "/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method.lower()


def _path_params(path: str, method: str) -> list[ParameterInfo]:
    names = [s.strip("{}") for s in path.split("/") if s.startswith("{")]
    return [
        ParameterInfo(name=n, location="path", required=True, type="string", provenance=_prov(_ptr(method, path)))
        for n in names
    ]


def endpoint(
    method: str,
    path: str,
    operation_id: str,
    summary: str,
    *,
    description: str = "",
    body: list[tuple[str, bool]] | None = None,
    schema: str | None = None,
    response: str | None = None,
    example: Any = None,
) -> Endpoint:
    """One endpoint; ``body`` lists ``(field path, required)``."""
    pointer = _ptr(method, path)
    request = None
    if body is not None:
        request = RequestBodyInfo(
            required=True,
            content_types=["application/json"],
            schema_name=schema,
            fields=[
                FieldInfo(name=p.rsplit(".", 1)[-1], path=p, type="string", required=r, provenance=_prov(pointer))
                for p, r in body
            ],
            provenance=_prov(pointer + "/requestBody"),
        )
    responses = [ResponseInfo(status="200", schema_name=response, provenance=_prov(pointer + "/responses/200"))]
    examples = []
    if example is not None:
        examples.append(ExampleInfo(kind="request", name="default", media_type="application/json", value=example, provenance=_prov(pointer)))
    return Endpoint(
        method=method,  # type: ignore[arg-type]
        path=path,
        operation_id=operation_id,
        summary=summary,
        description=description,
        parameters=_path_params(path, method),
        request_body=request,
        responses=responses,
        examples=examples,
        servers=["https://api.ship.example"],
        provenance=_prov(pointer),
    )


def shipping_spec(
    *,
    name: str = "ship",
    summary_override: dict[str, str] | None = None,
    drop: frozenset[str] | set[str] = frozenset(),
) -> ApiSpec:
    """The shipping API. ``summary_override`` maps ``METHOD /path`` to a new summary; ``drop``
    removes endpoints by ``METHOD /path``."""
    endpoints = [
        endpoint("POST", "/v2/locations", "CreateLocation", "Create a location",
                 description="Creates a location (also called a facility or site) for a seller.",
                 body=[("name", True), ("address.city", False)], schema="CreateLocationRequest",
                 response="CreateLocationResponse", example={"name": "Main St"}),
        endpoint("GET", "/v2/locations", "ListLocations", "List locations"),
        endpoint("GET", "/v2/locations/{location_id}", "RetrieveLocation", "Retrieve a location"),
        endpoint("PUT", "/v2/locations/{location_id}", "UpdateLocation", "Update a location",
                 body=[("name", False)], schema="UpdateLocationRequest"),
        endpoint("POST", "/v2/carriers", "CreateCarrier", "Register a carrier",
                 body=[("name", True)], schema="CreateCarrierRequest"),
        endpoint("GET", "/v2/carriers", "ListCarriers", "List carriers"),
        endpoint("POST", "/v2/shipments", "CreateShipment", "Create a shipment",
                 description="Books a parcel shipment from one of your locations.",
                 body=[("reference", False), ("carrier_id", True), ("origin_location_id", True),
                       ("parcel.weight", True)],
                 schema="CreateShipmentRequest", response="Shipment"),
        endpoint("GET", "/v2/shipments/{shipment_id}", "RetrieveShipment", "Retrieve a shipment"),
        endpoint("DELETE", "/v2/shipments/{shipment_id}", "DeleteShipment", "Delete a shipment"),
        endpoint("POST", "/v2/shipments/{shipment_id}/cancel", "CancelShipment", "Cancel a shipment"),
        endpoint("POST", "/v2/shipments/{shipment_id}/tracking-events", "CreateTrackingEvent",
                 "Add a tracking event", body=[("status", True)], schema="CreateTrackingEventRequest"),
    ]  # fmt: skip
    overrides = summary_override or {}
    kept = []
    for ep in endpoints:
        if ep.key in drop:
            continue
        if ep.key in overrides:
            ep = ep.model_copy(update={"summary": overrides[ep.key]})
        kept.append(ep)
    return ApiSpec(
        name=name,
        title="Shipping API",
        version="2.0",
        spec_format="openapi 3.0.3",
        source=SOURCE,
        servers=["https://api.ship.example"],
        endpoints=kept,
    )


def shipping_guide() -> list[DocPage]:
    """One guide page: a section that names ``POST /v2/shipments`` and one naming an opId."""
    source = "/docs/shipping.md"
    return [
        DocPage(
            source=source,
            title="Shipping guide",
            sections=[
                DocSection(source=source, title="Shipping guide", section_path=["Shipping guide"],
                           anchor="shipping-guide", text="Welcome to shipping."),
                DocSection(source=source, title="Shipping guide",
                           section_path=["Shipping guide", "Book a shipment"], anchor="book-a-shipment",
                           text="Call `POST https://api.ship.example/v2/shipments` with a carrier."),
                DocSection(source=source, title="Shipping guide",
                           section_path=["Shipping guide", "Carriers"], anchor="carriers",
                           text="Use CreateCarrier first. Locations are not covered here."),
            ],
        )
    ]  # fmt: skip


SHIPPING_CLIENT = '''import requests

BASE = "https://api.ship.example"


class Shipments:
    def book(self, body):
        return requests.post(f"{BASE}/v2/shipments", json=body)

    def fetch(self, shipment_id):
        return self.http.get(f"/v2/shipments/{shipment_id}")

    def labels(self):
        return requests.get("https://api.ship.example/v2/labels")


def elsewhere():
    return requests.get("https://example.org/v2/shipments")
'''
SHIPPING_TOOLS = '''def open_site(client):
    return client.create_location(name="Main St")
'''


def shipping_code(*, without: frozenset[str] = frozenset()) -> list[CodeFile]:
    """The team's code calling the shipping API, read by the code loader: ``app/client.py``
    books (POST /v2/shipments, line 8) and reads (GET /v2/shipments/{shipment_id}, line 11) a
    shipment, calls a path the spec lacks (line 14) and another host (line 18);
    ``app/tools.py`` calls the ``CreateLocation`` SDK method (line 2). ``without`` leaves files
    out."""
    from apiatlas.loaders.code.calls import calls, parse

    files = []
    for path, text in (("app/client.py", SHIPPING_CLIENT), ("app/tools.py", SHIPPING_TOOLS)):
        if path in without:
            continue
        source = text.encode()
        files.append(CodeFile(path=path, language="python", sha256=hashlib.sha256(source).hexdigest(),
                              lines=text.count("\n"), calls=calls(parse(source, "python"), source)))
    return files
