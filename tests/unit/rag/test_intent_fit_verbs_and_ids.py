"""A known id makes a look-up a read; resource nouns in a path are not verbs the question named."""

from __future__ import annotations

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.endpoint_fit import intent_fit


def _ref(method: str, path: str, kind: str, operation_id: str, summary: str) -> EndpointRef:
    return EndpointRef(
        key=f"api/endpoint/{method} {path}", api="api", method=method, path=path,
        operation_id=operation_id, summary=summary, kind=kind,
    )


def test_looking_up_one_thing_by_its_id_is_a_read() -> None:
    assert analyse_question("look up one depot by its id").kinds[0] == "read"
    assert analyse_question("find a haulier by its identifier").kinds[0] == "read"


def test_searching_without_an_id_or_for_many_things_stays_a_search() -> None:
    assert analyse_question("look up a depot by postcode").kinds == ["search"]
    assert analyse_question("look up depots by carrier id").kinds[0] == "search"
    assert analyse_question("get the depot with id 42").kinds[0] == "read"


def test_a_resource_noun_in_the_path_is_not_a_named_verb() -> None:
    intent = analyse_question("set up a callback so we get tracking updates pushed to us")
    record = _ref(
        "POST", "/v2/shipments/{shipment_id}/tracking-events", "create",
        "createTrackingEvent", "Record a tracking event",
    )
    subscribe = _ref("POST", "/v2/webhooks", "create", "createWebhook", "Register a webhook")
    assert intent_fit(record, intent) == intent_fit(subscribe, intent)


def test_an_action_keeps_its_last_segment_as_its_verb() -> None:
    intent = analyse_question("verify a carrier")
    verify = _ref("POST", "/v2/carriers/{carrier_id}/verify", "action", "", "")
    test = _ref("POST", "/v2/webhooks/{webhook_id}/test", "action", "sendTestEvent", "")
    assert intent_fit(verify, intent) > intent_fit(test, intent) == 0.0
