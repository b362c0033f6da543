"""The verb lexicon, explicit endpoint / operation id mentions, and how-to detection."""

from __future__ import annotations

import pytest

from apiatlas.rag.question import intent as intent_module
from apiatlas.rag.question.intent import analyse_question, normalise_path


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What endpoints can I use to create a location?", "create"),
        ("How do I add a new facility?", "create"),
        ("register a courier", "create"),
        ("I need to set up a webhook", "create"),
        ("onboard a carrier", "create"),
        ("list all shipments", "list"),
        ("show all carriers", "list"),
        ("browse quotes", "list"),
        ("fetch a shipment", "read"),
        ("look at the details of a quote", "read"),
        ("rename a location", "update"),
        ("change the pickup window of a shipment", "update"),
        ("remove a webhook", "delete"),
        ("look up a location by postcode", "search"),
        ("filter shipments by status", "search"),
        ("cancel a shipment", "action"),
        ("verify a carrier", "action"),
        ("refund a payment", "action"),
        ("creating a shipment fails", "create"),
    ],
)
def test_first_kind_follows_the_lexicon(question: str, kind: str) -> None:
    assert analyse_question(question).kinds[0] == kind


def test_cancel_falls_back_to_delete_and_kinds_keep_question_order() -> None:
    assert analyse_question("cancel a shipment").kinds == ["action", "delete"]
    assert analyse_question("list shipments, then delete one").kinds == ["list", "delete"]


def test_set_up_is_create_not_update() -> None:
    intent = analyse_question("set up a webhook")
    assert intent.kinds == ["create"]
    assert intent.verbs == ["set up"]


def test_resource_terms_drop_verbs_stopwords_and_generic_words() -> None:
    intent = analyse_question("What endpoints can I use to create a location?")
    assert intent.resource_terms == ["location"]
    assert analyse_question("delete a payment method").resource_terms[0] == "payment method"


def test_plural_nouns_are_not_read_as_verbs() -> None:
    intent = analyse_question("list posts")
    assert intent.kinds == ["list"]
    assert intent.resource_terms == ["posts"]


@pytest.mark.parametrize(
    ("question", "method", "path"),
    [
        ("What does POST /v2/locations need?", "POST", "/v2/locations"),
        ("what does post /V2/Locations/ return", "POST", "/v2/locations"),
        ("Is `GET /v2/shipments/{shipment_id}` paginated?", "GET", "/v2/shipments/{}"),
        ("GET https://api.parcelroute.example/v2/carriers.", "GET", "/v2/carriers"),
        ("delete /api/v2/webhooks/:id please", "DELETE", "/api/v2/webhooks/{}"),
    ],
)
def test_explicit_endpoint_mentions(question: str, method: str, path: str) -> None:
    intent = analyse_question(question)
    assert [(e.method, e.path) for e in intent.endpoints] == [(method, path)]
    assert intent.explicit


def test_bare_paths_and_urls_are_mentions_without_a_method() -> None:
    intent = analyse_question("is /v2/carriers/{carrier_id}/verify idempotent?")
    assert [(e.method, e.path) for e in intent.endpoints] == [(None, "/v2/carriers/{}/verify")]
    intent = analyse_question("what is https://api.x.example/v2/quotes?limit=5 for")
    assert [e.path for e in intent.endpoints] == ["/v2/quotes"]


def test_operation_ids_in_camel_pascal_and_snake_case() -> None:
    intent = analyse_question("Explain createLocation, CreateLocation and create_location")
    assert intent.operation_ids == ["createLocation", "CreateLocation", "create_location"]
    assert "createlocation" not in intent.resource_terms


@pytest.mark.parametrize(
    ("setting", "left"),
    [("none", []), ("words", ["pod", "template"]), ("token", ["podtemplate"]),
     ("both", ["podtemplate", "pod", "template"])],
)
def test_a_shaped_token_leaves_what_the_setting_says(
    monkeypatch: pytest.MonkeyPatch, setting: str, left: list[str]
) -> None:
    monkeypatch.setattr(intent_module, "IDENTIFIER_TEXT", setting)
    intent = analyse_question("scale a PodTemplate")
    assert intent.operation_ids == ["PodTemplate"]
    assert intent.keywords == ["scale", *left]


def test_normalise_path_blanks_parameter_names_and_hosts() -> None:
    assert normalise_path("https://h.example/v2/A/{id}/b/") == "/v2/a/{}/b"
    assert normalise_path("/v2/a/:id") == "/v2/a/{}"


def test_howto_needs_no_crud_ask() -> None:
    assert analyse_question("How do I verify webhook signatures?").is_howto
    assert analyse_question("Explain how pagination works").is_howto
    assert not analyse_question("How do I create a shipment?").is_howto
    assert not analyse_question("How do I call POST /v2/quotes?").is_howto


def test_deprecated_and_version_cues() -> None:
    intent = analyse_question("get the old v1 location")
    assert intent.wants_deprecated
    assert intent.versions == ["v1"]
    assert "v1" not in intent.resource_terms
    assert not analyse_question("get a location").wants_deprecated
