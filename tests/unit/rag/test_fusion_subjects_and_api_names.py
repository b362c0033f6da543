"""Fusion credits doing-what-was-asked only to the subject's endpoints; a question about an
unknown thing of the API itself abstains."""

from __future__ import annotations

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.fusion import UNKNOWN_SUBJECT_SCORE, fuse, gather_evidence, should_answer
from apiatlas.rag.intent import analyse_question
from apiatlas.rag.kg_retriever import GraphLookup
from apiatlas.rag.vocabulary import Vocabulary


def ref(method: str, path: str, kind: str, resource: str, summary: str = "") -> EndpointRef:
    return EndpointRef(key=f"api/endpoint/{method} {path}", api="api", method=method, path=path,
                       kind=kind, resource=f"api/resource/{resource}", summary=summary)


VERIFY = ref("POST", "/carriers/{id}/verify", "action", "carrier", "Verify a carrier")
HOOK = ref("POST", "/hooks", "create", "hook", "Register a hook")
HOOK_TEST = ref("POST", "/hooks/{id}/test", "action", "hook", "Send a test event")


def test_a_verb_match_on_a_resource_the_question_does_not_name_earns_nothing() -> None:
    intent = analyse_question("how do I verify the signature of hook calls")
    cards = [HOOK, VERIFY, HOOK_TEST]
    assert fuse([], cards, intent)[0].key == VERIFY.key  # the verb outweighs the card order
    assert fuse([], cards, intent, subjects={"api/resource/hook"})[0].key == HOOK.key


def test_endpoints_under_a_subject_count_as_the_subject() -> None:
    events = ref("GET", "/hooks/{id}/deliveries", "list", "hook/delivery", "List deliveries")
    intent = analyse_question("list the deliveries")
    fused = fuse([], [HOOK, events], intent, subjects={"api/resource/hook"})
    assert fused[0].key == events.key


def _lookup(question: str) -> GraphLookup:
    return GraphLookup(intent=analyse_question(question))


def test_a_question_about_an_unknown_thing_of_the_api_itself_abstains() -> None:
    vocabulary = Vocabulary(["acme", "order", "shipment"])
    lookup = _lookup("does acme have a graphql api")
    found = gather_evidence(lookup, vocabulary, best_card_score=0.9, api_names={"acme"})
    assert found.unknown_terms == ("graphql",) and not found.other_subjects
    assert not should_answer(found, lookup.intent)


def test_an_unknown_word_next_to_a_known_subject_can_still_be_vouched_for() -> None:
    vocabulary = Vocabulary(["acme", "order", "shipment"])
    lookup = _lookup("does acme have a graphql shipment feed")
    found = gather_evidence(
        lookup, vocabulary, best_card_score=UNKNOWN_SUBJECT_SCORE, api_names={"acme"}
    )
    assert found.other_subjects
    assert should_answer(found, lookup.intent)


def test_a_generic_operation_on_an_unnamed_resource_keeps_its_bonus() -> None:
    # "create a shipment" may need "create a location": CRUD kinds are not specific doings.
    shipment = ref("POST", "/shipments", "create", "shipment", "Create a shipment")
    location = ref("POST", "/locations", "create", "location", "Create a location")
    read = ref("GET", "/shipments/{id}", "read", "shipment", "Get a shipment")
    intent = analyse_question("create a shipment")
    fused = fuse([shipment], [shipment, read, location], intent,
                 subjects={"api/resource/shipment"})
    assert [f.key for f in fused][:2] == [shipment.key, location.key]


def test_a_qualifiers_own_operations_earn_nothing() -> None:
    shipments = ref("GET", "/shipments", "list", "shipment", "List shipments")
    carriers = ref("GET", "/carriers", "list", "carrier", "List carriers")
    intent = analyse_question("list all shipments with a given carrier")
    plain = fuse([shipments, carriers], [carriers], intent)
    assert plain[0].key == carriers.key  # both rankings name it
    fused = fuse([shipments, carriers], [carriers], intent,
                 subjects={"api/resource/shipment"}, qualifiers={"api/resource/carrier"})
    assert fused[0].key == shipments.key
