"""Resource derivation: path nouns, singular forms, aliases from tags, schemas and prose."""

from __future__ import annotations

import pytest

from apiatlas.graph.build.resources import (
    definition_patterns,
    definitions,
    derive_resources,
    guide_definitions,
    id_resource_phrase,
    qualified_alias,
    resource_chain,
    with_definitions,
)
from apiatlas.graph.build.builder import build_docs_batch
from apiatlas.graph.model import ResourceInfo
from apiatlas.graph.words import noun_phrase, singular, split_words
from apiatlas.loaders.models import (
    ApiSpec,
    DocPage,
    DocSection,
    Endpoint,
    Provenance,
    RequestBodyInfo,
    SchemaInfo,
    TagInfo,
)

PROV = Provenance(source="spec.yaml")


@pytest.mark.parametrize(
    ("word", "expected"),
    [("locations", "location"), ("addresses", "address"), ("categories", "category"),
     ("statuses", "status"), ("sources", "source"), ("boxes", "box"), ("status", "status"),
     ("address", "address"), ("batches", "batch"), ("media", "media")],
)  # fmt: skip
def test_singular(word: str, expected: str) -> None:
    assert singular(word) == expected


def test_split_and_noun_phrase() -> None:
    assert split_words("V1ListOrders") == ["v1", "list", "orders"]
    assert noun_phrase("custom-attributes") == noun_phrase("customAttributes") == "custom attribute"
    assert noun_phrase("custom_attributes") == "custom attribute"


@pytest.mark.parametrize(
    ("path", "chain"),
    [
        ("/v2/locations/{location_id}", ["location"]),
        ("/v2/shipments/{shipment_id}/tracking-events", ["shipment", "tracking event"]),
        ("/V1/inventory/sources", ["inventory", "source"]),
        ("/rest/default/V1/inventory/sources/{sourceCode}", ["inventory", "source"]),
        ("/v2/customers/search", ["customer"]),
        ("/v2/orders/batch-retrieve", ["order"]),
        ("/V1/carts/mine/items", ["cart", "item"]),
        ("/v2/bank-accounts/by-v1-id/{v1_bank_account_id}", ["bank account"]),
        ("/V1/inventory/source-items-delete", ["inventory"]),
        ("/v2/{id}", ["root"]),
    ],
)
def test_resource_chain(path: str, chain: list[str]) -> None:
    assert resource_chain(path) == chain


def test_id_phrases() -> None:
    assert id_resource_phrase("origin_location_id") == "origin location"
    assert id_resource_phrase("locationId") == "location"
    assert id_resource_phrase("id") is None and id_resource_phrase("sku") is None


def test_definitions_are_recognised_conservatively() -> None:
    text = (
        "Creates a location (also called a facility or site). **Sources** are the physical "
        "locations from which you ship. Orders are created when paid. Segments, also known as "
        "smart groups, are handy."
    )
    assert definitions(text) == [
        ("location", "facility"),
        ("location", "site"),
        ("segment", "smart group"),
        ("source", "physical location"),
    ]
    assert definitions("Nothing to see here. Items are returned in pages.") == []
    # The phrase ends at the first word of the one stop-word list ("through", not only "which").
    assert definitions("Payouts are the transfers through which funds arrive.") == [
        ("payout", "transfer")
    ]


def test_the_definition_patterns_follow_their_phrase_lengths() -> None:
    paren, inline, are = definition_patterns(subject_words=1, alias_words=1, are_words=1)
    assert paren.search("Sales channel groups (also called storefronts)").group(1) == "groups"
    assert inline.search("Segments, also known as smart groups").group(2) == "smart"
    assert are.search("Payouts are bank transfers").group(2) == "bank"
    wide = definition_patterns(subject_words=3, paren_chars=12)[0]
    assert wide.search("Sales channel groups (also called storefronts)").group(1) == (
        "Sales channel groups")
    assert wide.search("Groups (also called sales channel storefronts)") is None  # > 12 chars


def test_qualified_alias() -> None:
    assert qualified_alias("inventoryApiSourceRepositoryV1", "source") == "inventory source"
    assert qualified_alias("CreateLocationRequest", "location") is None  # same as the name
    assert qualified_alias("CustomerGroup", "group") == "customer group"
    assert qualified_alias("tax-data-tax-class-interface", "class") == "tax class"
    assert qualified_alias("carts/{cartId}/giftCards", "gift card") is None
    assert qualified_alias("LinkCustomerToGiftCard", "gift card") is None
    assert qualified_alias("Orders", "location") is None


def test_derive_resources_collects_aliases_and_parents() -> None:
    spec = ApiSpec(
        name="x",
        title="X",
        spec_format="openapi 3.0.3",
        source="spec.yaml",
        tags=[TagInfo(name="Facility Locations", description="A location (a.k.a. depot).")],
        endpoints=[
            Endpoint(method="POST", path="/v2/locations", operation_id="CreateLocation",
                     tags=["Facility Locations"], provenance=PROV,
                     request_body=RequestBodyInfo(schema_name="CreateLocationRequest", provenance=PROV)),
            Endpoint(method="GET", path="/v2/shipments/{shipment_id}/tracking-events",
                     description="Tracking events (also called scans) of a shipment.", provenance=PROV),
            Endpoint(method="POST", path="/v2/shipments/{shipment_id}/test", operation_id="TestShipment",
                     provenance=PROV),
        ],
    )  # fmt: skip
    index = derive_resources(spec)
    assert sorted(index.resources) == ["location", "shipment", "shipment/tracking-event"]
    assert index.resources["location"].aliases == {"depot", "facility location"}
    assert index.resources["shipment/tracking-event"].aliases == {"scan"}
    assert index.resources["shipment/tracking-event"].parent == "shipment"
    assert index.of_endpoint["POST /v2/shipments/{shipment_id}/test"] == "shipment"
    assert index.find("origin location") == "location"
    assert index.find("tracking event") == "shipment/tracking-event"
    assert index.find("carrier") is None


def test_schema_descriptions_define_the_resources_they_name() -> None:
    spec = ApiSpec(
        name="x", title="X", spec_format="openapi 3.0.3", source="spec.yaml",
        endpoints=[Endpoint(method="GET", path="/admins", provenance=PROV),
                   Endpoint(method="GET", path="/teams", provenance=PROV)],
        schemas={
            "admin": SchemaInfo(name="admin", provenance=PROV, description=(
                "Admins are teammate accounts that have access to a workspace.")),
            # A definition of something that is no resource here names nothing.
            "job": SchemaInfo(name="job", provenance=PROV, description="Jobs are queued tasks."),
        },
    )  # fmt: skip
    index = derive_resources(spec)
    assert index.resources["admin"].aliases == {"teammate account"}
    assert index.resources["team"].aliases == set()


def test_guide_definitions_reach_the_resources_they_name() -> None:
    page = DocPage(source="/g.md", title="G", sections=[
        DocSection(source="/g.md", title="G", section_path=["G"], anchor="g", text=(
            "**Sources** are the physical locations from which you ship. Orders are created when "
            "paid.")),
        DocSection(source="/g.md", title="G", section_path=["G", "More"], anchor="more",
                   text="Nothing is defined here."),
    ])  # fmt: skip
    nodes = build_docs_batch([page], project="p", name="guides").nodes
    assert [n.props["definitions"] for n in nodes] == [["source = physical location"], []]
    defined = guide_definitions(nodes)
    assert defined == [("source", "physical location")]
    resources = [
        ResourceInfo(key="a:inventory/source", api="a", name="source", aliases=["inventory source"]),
        ResourceInfo(key="a:order", api="a", name="order"),
    ]
    merged = with_definitions(resources, defined)
    assert merged[0].aliases == ["inventory source", "physical location"]
    assert merged[1] is resources[1]  # nothing defined for it: the same object
    assert resources[0].aliases == ["inventory source"]  # the input is not changed
