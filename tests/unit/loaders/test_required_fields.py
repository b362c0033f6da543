"""Required means required: a body field is required only when it and every object above it
are, and a field required inside an optional object is required only if that object is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiatlas.graph.model import EndpointDetail, EndpointRef, FieldRef
from apiatlas.loaders.models import ApiSpec, Endpoint, FieldInfo
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.answer.composer import _inputs
from apiatlas.rag.answer.examples import synthesise_body

ORDER = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "paths": {"/orders": {"post": {
        "operationId": "createOrder",
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/CreateOrder"}}}},
        "responses": {"200": {"description": "ok"}},
    }}},
    "components": {"schemas": {
        "CreateOrder": {
            "type": "object",
            "required": ["idempotency_key", "customer"],
            "properties": {
                "idempotency_key": {"type": "string"},
                "customer": {"$ref": "#/components/schemas/Customer"},
                "shipping": {"$ref": "#/components/schemas/Shipping"},
                "note": {"type": "string", "nullable": True},
                "lines": {"type": "array", "items": {
                    "type": "object", "required": ["sku"],
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
            },
        },
        # allOf: the required names of every part apply.
        "Customer": {"allOf": [
            {"$ref": "#/components/schemas/Named"},
            {"type": "object", "required": ["email"],
             "properties": {"email": {"type": "string", "nullable": True}}},
        ]},
        "Named": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "nickname": {"type": "string"}}},
        # An optional object whose own fields are required inside it, two levels deep.
        "Shipping": {"type": "object", "required": ["address"], "properties": {
            "address": {"type": "object", "required": ["line1", "city"], "properties": {
                "line1": {"type": "string"}, "city": {"type": "string"},
                "gate": {"type": "object", "required": ["code"],
                         "properties": {"code": {"type": "string"}}}}},
        }},
    }},
}


def request_fields(spec: ApiSpec, method: str, path: str) -> list[FieldInfo]:
    endpoint: Endpoint = next(e for e in spec.endpoints if (e.method, e.path) == (method, path))
    assert endpoint.request_body is not None
    return endpoint.request_body.fields


def body_fields(spec: ApiSpec, method: str, path: str) -> dict[str, tuple[bool, str]]:
    return {f.path: (f.required, f.required_if) for f in request_fields(spec, method, path)}


def detail_of(spec: ApiSpec, method: str, path: str) -> EndpointDetail:
    return EndpointDetail(
        endpoint=EndpointRef(key=f"x/endpoint/{method} {path}", api="x", method=method, path=path),
        request_fields=[FieldRef(name=f.path, type=f.type, required=f.required,
                                 required_if=f.required_if)
                        for f in request_fields(spec, method, path)],
    )


@pytest.fixture
def shop(tmp_path: Path) -> ApiSpec:
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(ORDER), encoding="utf-8")
    [spec] = load_openapi(path)
    return spec


def test_a_field_is_required_only_when_every_object_above_it_is(shop: ApiSpec) -> None:
    fields = body_fields(shop, "POST", "/orders")
    assert fields["idempotency_key"] == (True, "")
    assert fields["customer"] == (True, "")
    assert fields["customer.name"] == (True, "")  # allOf's first part
    assert fields["customer.email"] == (True, "")  # nullable, still sent
    assert fields["customer.nickname"] == (False, "")
    assert fields["note"] == (False, "")
    # Required inside the optional `shipping`, down the chain of required objects.
    assert fields["shipping"] == (False, "")
    assert fields["shipping.address"] == (False, "shipping")
    assert fields["shipping.address.city"] == (False, "shipping")
    # `gate` is optional inside `address`: its required code hangs on `gate`.
    assert fields["shipping.address.gate"] == (False, "")
    assert fields["shipping.address.gate.code"] == (False, "shipping.address.gate")
    assert fields["lines[].sku"] == (False, "lines")
    assert fields["lines[].qty"] == (False, "")


def test_the_answer_lists_conditional_fields_under_their_object(shop: ApiSpec) -> None:
    lines = _inputs(detail_of(shop, "POST", "/orders"))
    assert lines[0] == ("   - Required body fields: `idempotency_key` (string), `customer` (Customer), "
                        "`customer.name` (string), `customer.email` (string|null)")
    assert "   - If you send `shipping`: `address`, `address.line1`, `address.city`" in lines
    assert "   - If you send `lines`: `sku`" in lines
    assert "   - If you send `shipping.address.gate`: `code`" in lines


def test_the_synthesised_body_holds_no_object_that_is_not_required(shop: ApiSpec) -> None:
    body = synthesise_body(detail_of(shop, "POST", "/orders").request_fields)
    assert body == {"idempotency_key": "<idempotency_key>",
                    "customer": {"name": "<name>", "email": "<email>"}}
    # Nothing required at all: a few top-level plain fields, never an optional object.
    loose = [FieldRef(name="meta", type="Meta"), FieldRef(name="meta.tag", type="string"),
             FieldRef(name="note", type="string"), FieldRef(name="count", type="integer")]
    assert synthesise_body(loose) == {"note": "<note>", "count": 0}


@pytest.fixture(scope="module")
def square(shared_data: Path) -> ApiSpec:
    [spec] = load_openapi(shared_data / "square" / "spec" / "api.json")
    return spec


@pytest.mark.shared_data
def test_square_refund_payment_requires_two_fields(square: ApiSpec) -> None:
    fields = body_fields(square, "POST", "/v2/refunds")
    assert sorted(p for p, (required, _) in fields.items() if required) == [
        "amount_money", "idempotency_key"]
    assert fields["cash_details.seller_supplied_money"] == (False, "cash_details")
    assert fields["external_details.type"] == (False, "external_details")
    assert fields["external_details.source"] == (False, "external_details")
    lines = _inputs(detail_of(square, "POST", "/v2/refunds"))
    assert any(line.startswith("   - If you send `cash_details`: `seller_supplied_money`")
               for line in lines)
    body = synthesise_body(detail_of(square, "POST", "/v2/refunds").request_fields)
    assert set(body) == {"idempotency_key", "amount_money"}


@pytest.mark.shared_data
def test_square_create_order_requires_nothing_but_a_location_inside_the_order(
    square: ApiSpec,
) -> None:
    fields = body_fields(square, "POST", "/v2/orders")
    assert [p for p, (required, _) in fields.items() if required] == []
    assert fields["order.location_id"] == (False, "order")
    assert fields["order.line_items[].quantity"] == (False, "order.line_items")
    body = synthesise_body(detail_of(square, "POST", "/v2/orders").request_fields)
    assert "order" not in body


@pytest.mark.shared_data
def test_square_catalog_upsert_requires_the_object_and_its_type_and_id(square: ApiSpec) -> None:
    fields = body_fields(square, "POST", "/v2/catalog/object")
    assert sorted(p for p, (required, _) in fields.items() if required) == [
        "idempotency_key", "object", "object.id", "object.type"]
    assert all(not required for p, (required, _) in fields.items()
               if p.startswith("object.item_data."))
    body = synthesise_body(detail_of(square, "POST", "/v2/catalog/object").request_fields)
    assert body == {"idempotency_key": "<idempotency_key>",
                    "object": {"type": "<type>", "id": "<id>"}}


@pytest.mark.shared_data
def test_lob_one_of_all_of_bodies_require_what_every_alternative_requires(
    shared_data: Path,
) -> None:
    [lob] = load_openapi(shared_data / "lob" / "spec" / "lob-api-public.yml")
    # oneOf of two allOf alternatives: each adds its own required field to the shared ones.
    checks = body_fields(lob, "POST", "/checks")
    assert sorted(p for p, (required, _) in checks.items() if required) == [
        "amount", "bank_account", "from", "to", "use_type"]
    assert checks["message"] == (False, "") and checks["check_bottom"] == (False, "")
    # oneOf of a US and an international address: only what both require.
    addresses = body_fields(lob, "POST", "/addresses")
    assert [p for p, (required, _) in addresses.items() if required] == ["address_line1"]
