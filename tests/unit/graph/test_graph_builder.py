"""Batch building: keys, props, derived edges, determinism; FTS query sanitising."""

from __future__ import annotations

import json

from apiatlas.graph.build.builder import build_api_batch, build_docs_batch
from apiatlas.graph.records import fts_query
from apiatlas.loaders.models import (
    ApiSpec,
    CodeSample,
    DocPage,
    DocSection,
    Endpoint,
    ExampleInfo,
    FieldInfo,
    ParameterInfo,
    Provenance,
    RequestBodyInfo,
)

PROV = Provenance(source="/s.yaml", pointer="/paths/~1v2~1shipments/post")


def _spec() -> ApiSpec:
    body = RequestBodyInfo(
        schema_name="CreateShipmentRequest",
        fields=[
            FieldInfo(name="carrier_id", path="carrier_id", required=True, provenance=PROV),
            FieldInfo(name="location_id", path="options.location_id", required=True, provenance=PROV),
            FieldInfo(name="options", path="options", required=False, provenance=PROV),
        ],
        provenance=PROV,
    )
    return ApiSpec(
        name="ship",
        title="Ship",
        spec_format="openapi 3.0.3",
        source="/s.yaml",
        endpoints=[
            Endpoint(method="POST", path="/v2/shipments", operation_id="CreateShipment", tags=["b", "a"],
                     request_body=body, provenance=PROV,
                     examples=[ExampleInfo(kind="request", value={"d": __import__("datetime").date(2024, 1, 2)}, provenance=PROV)],
                     code_samples=[CodeSample(lang="curl", source="curl -X POST", provenance=PROV)]),
            Endpoint(method="POST", path="/v2/carriers", operation_id="CreateCarrier", provenance=PROV),
            Endpoint(method="POST", path="/v2/locations", operation_id="CreateLocation", provenance=PROV),
            Endpoint(method="GET", path="/v2/shipments/{id}", provenance=PROV,
                     parameters=[ParameterInfo(name="id", location="path", required=True, provenance=PROV)]),
        ],
    )  # fmt: skip


def test_api_batch_keys_props_and_edges() -> None:
    batch = build_api_batch(_spec(), project="p")
    assert batch.scope == "api:ship" and batch.project == "p"
    nodes = {n.key: n for n in batch.nodes}
    ep = nodes["ship/endpoint/POST /v2/shipments"].props
    assert (ep["kind"], ep["resource"], ep["tags"]) == ("create", "ship/resource/shipment", ["a", "b"])
    assert ep["examples"][0]["value"] == {"d": "2024-01-02"}
    assert ep["code_samples"][0]["lang"] == "curl" and ep["request_schema"] == "CreateShipmentRequest"
    assert nodes["ship/kind/create"].label == "OperationKind"
    assert nodes["ship/schema/CreateShipmentRequest/field/carrier_id"].props["required"] is True
    json.dumps([n.props for n in batch.nodes])
    requires = {(e.src.split("/", 2)[2], e.dst.split("/", 2)[2], e.props["param"]) for e in batch.edges if e.type == "REQUIRES"}
    # options.location_id sits in an optional object: not required by the call.
    assert requires == {
        ("POST /v2/shipments", "POST /v2/carriers", "carrier_id"),
        ("GET /v2/shipments/{id}", "POST /v2/shipments", "id"),
    }
    types = {e.type for e in batch.edges}
    assert {"HAS_RESOURCE", "HAS_ENDPOINT", "OF_KIND", "ACCEPTS", "HAS_FIELD", "TAGGED", "HAS_PARAMETER"} <= types


NOUNS = ("envelope", "template", "folder", "brand", "group", "user", "contact", "report", "invoice", "payment")


def _account_scoped(resources: int) -> ApiSpec:
    """An API whose every call but the account's own creation runs under ``{accountId}``."""

    def ep(method: str, path: str) -> Endpoint:
        params = [ParameterInfo(name=p.strip("{}"), location="path", required=True, provenance=PROV)
                  for p in path.split("/") if p.startswith("{")]
        return Endpoint(method=method, path=path, parameters=params, provenance=PROV)

    endpoints = [ep("POST", "/accounts")]
    for noun in NOUNS[:resources]:
        base = f"/accounts/{{accountId}}/{noun}s"
        endpoints += [ep("POST", base), ep("GET", base + f"/{{{noun}Id}}")]
    return ApiSpec(name="acct", title="Acct", spec_format="openapi 3.0.3", source="/s.yaml",
                   endpoints=endpoints)


def test_a_parameter_nearly_every_endpoint_needs_is_a_scope_not_a_prerequisite() -> None:
    def requires(spec: ApiSpec) -> set[tuple[str, str]]:
        batch = build_api_batch(spec, project="p")
        edges = [e for e in batch.edges if e.type == "REQUIRES"]
        return {(e.src.split("/", 2)[2], e.props["param"]) for e in edges}

    # 20 of 21 endpoints need the account: it comes with the credentials, not from a call.
    scoped = requires(_account_scoped(10))
    assert scoped and all(param != "accountId" for _, param in scoped)
    assert ("GET /accounts/{accountId}/brands/{brandId}", "brandId") in scoped
    # 4 of 5 need it: below the share, so creating the account stays the first step.
    assert ("POST /accounts/{accountId}/envelopes", "accountId") in requires(_account_scoped(2))


def test_batches_are_deterministic() -> None:
    assert build_api_batch(_spec(), project="p") == build_api_batch(_spec(), project="p")
    keys = [n.key for n in build_api_batch(_spec(), project="p").nodes]
    assert keys == sorted(keys)


def test_docs_batch() -> None:
    page = DocPage(source="/g.md", title="G", sections=[
        DocSection(source="/g.md", title="G", section_path=["G", "Ex"], anchor="ex", text="POST /v2/shipments"),
        DocSection(source="/g.md", title="G", section_path=["G", "Ex"], anchor="ex", text="CreateCarrier"),
    ])  # fmt: skip
    batch = build_docs_batch([page], project="p", name="guides")
    assert batch.scope == "docs:guides"
    assert [n.key for n in batch.nodes] == ["guides/doc//g.md#ex", "guides/doc//g.md#ex~2"]
    assert batch.nodes[0].props["mentions"] == ["POST /v2/shipments"]
    assert batch.nodes[1].props["section_path"] == ["G", "Ex"]


def test_fts_query_never_passes_syntax_through() -> None:
    assert fts_query('"); DROP TABLE nodes; --') == '"drop" OR "table" OR "nodes"'
    assert fts_query("NEAR(") == '"near"'
    assert fts_query("what can I use to create a location?") == '"create" OR "location"'
    assert fts_query("*") is None and fts_query("") is None
    assert fts_query("CreateLocation") == '"create" OR "location" OR "createlocation"'


def test_a_required_id_inside_an_object_needs_the_object_s_resource() -> None:
    body = RequestBodyInfo(
        fields=[
            FieldInfo(name="group", path="group", required=True, provenance=PROV),
            FieldInfo(name="id", path="group.id", required=True, provenance=PROV),
            FieldInfo(name="user", path="user", required=False, provenance=PROV),
            FieldInfo(name="id", path="user.id", required=True, provenance=PROV),
        ],
        provenance=PROV,
    )
    spec = ApiSpec(name="box", title="Box", spec_format="openapi 3.0.3", source="/s.yaml", endpoints=[
        Endpoint(method="POST", path="/group_memberships", request_body=body, provenance=PROV),
        Endpoint(method="POST", path="/groups", provenance=PROV),
        Endpoint(method="GET", path="/groups", provenance=PROV),
        Endpoint(method="POST", path="/users", provenance=PROV),
    ])  # fmt: skip
    batch = build_api_batch(spec, project="p")
    requires = {(e.dst.split("/", 2)[2], e.props["param"]) for e in batch.edges if e.type == "REQUIRES"}
    # group.id reads as group_id; user.id sits in an optional object, so the call needs no user.
    assert requires == {("POST /groups", "group_id"), ("GET /groups", "group_id")}
