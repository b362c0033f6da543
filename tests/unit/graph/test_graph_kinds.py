"""Operation-kind classification from method, path shape and operationId."""

from __future__ import annotations

import pytest

from apiatlas.graph.build.kinds import classify
from apiatlas.loaders.models import Endpoint, Provenance


def _ep(method: str, path: str, operation_id: str = "", summary: str = "") -> Endpoint:
    return Endpoint(
        method=method,  # type: ignore[arg-type]
        path=path,
        operation_id=operation_id,
        summary=summary,
        provenance=Provenance(source="spec.yaml"),
    )


@pytest.mark.parametrize(
    ("method", "path", "operation_id", "expected"),
    [
        ("POST", "/v2/locations", "", "create"),
        ("GET", "/v2/locations", "", "list"),
        ("GET", "/v2/locations/{id}", "", "read"),
        ("PATCH", "/v2/locations/{id}", "", "update"),
        ("PUT", "/v2/locations/{location_id}", "UpdateLocation", "update"),
        ("DELETE", "/v2/locations/{id}", "", "delete"),
        ("POST", "/v2/locations", "CreateLocation", "create"),
        ("POST", "/v2/customers/search", "SearchCustomers", "search"),
        ("GET", "/v2/things", "ThingSearch", "search"),
        ("POST", "/x/{id}/cancel", "", "action"),
        ("POST", "/v2/shipments/{shipment_id}/tracking-events", "", "create"),
        # "batch" is no verb: the operation retrieves (a POST because its body lists the ids).
        ("POST", "/v2/orders/batch-retrieve", "BatchRetrieveOrders", "read"),
        ("POST", "/V1/inventory/sources", "PostV1InventorySources", "create"),
        ("GET", "/V1/products", "GetV1Products", "list"),
        ("GET", "/V1/products/{sku}", "GetV1ProductsSku", "read"),
        ("PUT", "/V1/inventory/sources/{sourceCode}", "PutV1InventorySourcesSourceCode", "update"),
        ("POST", "/V1/inventory/source-items-delete", "PostV1InventorySourceItemsDelete", "delete"),
        ("GET", "/v2/bank-accounts/{bank_account_id}", "GetBankAccount", "read"),
        ("GET", "/v1/{location_id}/orders", "V1ListOrders", "list"),
        ("GET", "/v2/bookings/business-booking-profile", "RetrieveBusinessBookingProfile", "read"),
        ("POST", "/oauth2/revoke", "RevokeToken", "action"),
        ("POST", "/v2/catalog/object", "UpsertCatalogObject", "update"),
    ],
)
def test_classify(method: str, path: str, operation_id: str, expected: str) -> None:
    assert classify(_ep(method, path, operation_id)) == expected


def test_summary_verb_is_used_when_the_operation_id_says_nothing() -> None:
    assert classify(_ep("POST", "/v2/widgets/{id}/publish-now")) == "action"
    assert classify(_ep("GET", "/v2/report", summary="List report rows")) == "list"
    # Adobe summaries are only the path: they must not count as a verb.
    assert classify(_ep("GET", "/V1/products", summary="/products")) == "list"
