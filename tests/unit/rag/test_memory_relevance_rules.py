"""Which memories an answer uses and which may lead it: about the question, about the answer's
main endpoint, or forbidding a presented endpoint; the rest stay out."""

from __future__ import annotations

from datetime import datetime, timezone

from apiatlas.graph.model import Dependency, EndpointRef, MemoryLink, ResourceInfo
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.resource_matcher import ResourceMatch
from apiatlas.rag.memory.model import Matched, Memory, MemoryHit, MemoryKind, parse_ref
from apiatlas.rag.review.precedence import MemoryView, apply_precedence
from apiatlas.rag.review.relevance import (
    ALONG,
    FORBIDDING,
    STRONG_SEMANTIC_SCORE,
    about_answer,
    about_question,
    family,
    linked_to_read,
    main_endpoints,
    relevant_views,
)
from apiatlas.rag.memory.stance import classify_stances

NOW = datetime(2025, 3, 1, tzinfo=timezone.utc)


def endpoint(signature: str, resource: str, *, deprecated: bool = False) -> EndpointRef:
    method, path = signature.split(" ", 1)
    return EndpointRef(
        key=f"api/endpoint/{signature}", api="api", method=method, path=path,
        deprecated=deprecated, resource=f"api/resource/{resource}", source="spec.yaml",
        pointer=f"/paths/{path}",
    )


EVENTS = endpoint("GET /v2/shipments/{shipment_id}/tracking-events", "shipment/tracking-event")
RECORD = endpoint("POST /v2/shipments/{shipment_id}/tracking-events", "shipment/tracking-event")
HOOKS = endpoint("POST /v2/webhooks", "webhook")
DELIVERIES = endpoint("GET /v2/webhooks/{webhook_id}/deliveries", "webhook/delivery")
TEST = endpoint("POST /v2/webhooks/{webhook_id}/test", "webhook")
V1 = endpoint("POST /v1/locations", "location", deprecated=True)
V2 = endpoint("POST /v2/locations", "location")
LIST = endpoint("GET /v2/locations", "location")
SEARCH = endpoint("POST /v2/locations/search", "location")
SHIP = endpoint("POST /v2/shipments", "shipment")
CARRIER = endpoint("POST /v2/carriers", "carrier")
PATCH_CARRIER = endpoint("PATCH /v2/carriers/{carrier_id}", "carrier")
ALL = {e.signature: e for e in (EVENTS, RECORD, HOOKS, DELIVERIES, TEST, V1, V2, LIST, SEARCH,
                                SHIP, CARRIER, PATCH_CARRIER)}


def view(
    text: str, refs: list[str], kind: MemoryKind = "decision", *, matched: Matched = "semantic",
    score: float = 0.5,
) -> MemoryView:
    memory = Memory(
        id=f"mem_{abs(hash(text)) % 10_000}", project="p", kind=kind, text=text,
        refs=[parse_ref(r) for r in refs], created_at=NOW, valid_from=NOW,
    )
    return MemoryView(
        hit=MemoryHit(memory=memory, score=score, matched=matched),
        stances=classify_stances(memory),
        resolved={r: [ALL[r]] for r in memory.endpoint_refs},
    )


def lookup(*primary: EndpointRef, resources: tuple[str, ...] = (), **extra: object) -> GraphLookup:
    matched = [
        ResourceMatch(
            resource=ResourceInfo(key=f"api/resource/{r}", api="api", name=r.split("/")[-1]),
            term=r, score=1.0, how="lexical",
        )
        for r in resources
    ]
    return GraphLookup(
        intent=analyse_question("a question"), primary=list(primary), matched_resources=matched,
        **extra,
    )


TRACKING = (
    f"We no longer poll {EVENTS.signature} for tracking updates: use a webhook subscribed to "
    f"tracking_event.created instead ({HOOKS.signature})."
)


def test_versions_of_one_operation_share_a_family() -> None:
    assert family(V1) == family(V2)
    assert family(V2) != family(SEARCH)


def test_a_strong_match_is_about_the_question_whatever_the_graph_found() -> None:
    memo = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=STRONG_SEMANTIC_SCORE)
    assert about_question(memo, lookup(DELIVERIES, TEST, resources=("webhook",)))


def test_a_plausible_match_naming_the_first_endpoint_or_a_version_of_it_leads() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=0.5)
    assert about_question(tracking, lookup(EVENTS, RECORD))
    v1 = view("We still create locations with POST /v1/locations.", [V1.signature], score=0.45)
    assert about_question(v1, lookup(V2, SEARCH))


def test_a_plausible_match_sharing_only_vocabulary_does_not_lead() -> None:
    # A question about webhook deliveries: the tracking decision names webhooks, not deliveries.
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=0.52)
    question = lookup(DELIVERIES, TEST, resources=("webhook/delivery", "webhook"))
    assert not about_question(tracking, question)
    assert not about_answer(tracking, question)
    assert relevant_views([tracking], question) == []


def test_a_first_endpoint_on_a_resource_the_question_names_makes_a_memory_about_it() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=0.5)
    question = lookup(RECORD, EVENTS, resources=("shipment", "shipment/tracking-event"))
    assert about_question(tracking, question)
    other = lookup(RECORD, EVENTS, resources=("shipment",))  # endpoint presented, topic not named
    assert not about_question(tracking, other)


def test_a_presented_endpoint_makes_a_memory_lead_only_when_it_does_what_is_asked() -> None:
    search = SEARCH.model_copy(update={"kind": "search"})
    create = V2.model_copy(update={"kind": "create"})
    ALL[SEARCH.signature] = search  # the memory resolves to the endpoint with its kind
    try:
        sites = view(f"To find our sites use {SEARCH.signature}.", [SEARCH.signature], score=0.5)
        asked_create = GraphLookup(
            intent=analyse_question("add a new location"), primary=[create, search],
            matched_resources=lookup(resources=("location",)).matched_resources,
        )
        asked_search = asked_create.model_copy(
            update={"intent": analyse_question("search the locations")}
        )
        asked_nothing = asked_create.model_copy(update={"intent": analyse_question("locations")})
    finally:
        ALL[SEARCH.signature] = SEARCH
    assert asked_create.intent.kinds == ["create"] and asked_search.intent.kinds == ["search"]
    assert not about_question(sites, asked_create)  # searching is not creating
    assert about_question(sites, asked_search)
    assert asked_nothing.intent.kinds == [] and about_question(sites, asked_nothing)


def test_when_the_graph_finds_nothing_a_memory_on_the_named_resource_leads() -> None:
    onboarding = view("To onboard a new carrier, register it with POST /v2/carriers",
                      [CARRIER.signature], kind="procedure", score=0.34)
    assert about_question(onboarding, lookup(resources=("carrier",)))
    assert not about_question(onboarding, lookup(resources=("quote",)))
    found, _ = apply_precedence(relevant_views([onboarding], lookup(resources=("carrier",))),
                                lookup(resources=("carrier",)))
    assert [e.signature for e in found.primary] == [CARRIER.signature]


def test_a_ref_linked_memory_comes_along_only_for_the_main_endpoint_and_its_prerequisites() -> None:
    create = lookup(
        SHIP, PATCH_CARRIER,
        prerequisites=[
            Dependency(endpoint=SHIP, parameter="origin_id", provider=V2),
            Dependency(endpoint=PATCH_CARRIER, parameter="carrier_id", provider=CARRIER),
        ],
    )
    assert [e.signature for e in main_endpoints(create)] == [SHIP.signature, V2.signature]
    v1 = view("We still create locations with POST /v1/locations.", [V1.signature],
              matched="ref", score=0.0)
    onboarding = view("Register carriers with POST /v2/carriers", [CARRIER.signature],
                      kind="procedure", matched="ref", score=0.0)
    assert about_answer(v1, create)  # a version of a prerequisite of the main endpoint
    assert not about_answer(onboarding, create)  # a prerequisite of a minor endpoint only
    assert relevant_views([v1, onboarding], create) == [v1]



def test_few_memories_come_along_for_the_main_endpoint_and_every_prohibition_applies() -> None:
    # At a team's scale hundreds of memories are about the main endpoint: only the first
    # ALONG come along; every presented endpoint the team forbids stays forbidden, citing the
    # first FORBIDDING memories that forbid it.
    create = lookup(V2, LIST, SEARCH)
    along = [view(f"Location note {i}: POST /v2/locations.", [V2.signature], kind="fact",
                  matched="ref", score=0.0) for i in range(ALONG + 3)]
    bans = [view(f"Never call GET /v2/locations from job {i}.", [LIST.signature],
                 kind="warning", matched="ref", score=0.0) for i in range(FORBIDDING + 2)]
    search = view("Never call POST /v2/locations/search from the jobs.", [SEARCH.signature],
                  kind="warning", matched="ref", score=0.0)
    kept = relevant_views([*along, *bans, search], create)
    assert kept == [*along[:ALONG], *bans[:FORBIDDING], search]
    # A ban past the bound does not come along either, though it names the main endpoint.
    ban_v2 = [view(f"Never call POST /v2/locations from job {i}.", [V2.signature],
                   kind="warning", matched="ref", score=0.0) for i in range(FORBIDDING + 1)]
    assert relevant_views([*ban_v2, along[0]], create) == [*ban_v2[:FORBIDDING], along[0]]
    _, team = apply_precedence(kept, create)
    assert {LIST.key, SEARCH.key} <= team.avoided


def test_only_the_linked_memories_an_answer_may_use_are_read() -> None:
    # The graph's links say which memory forbids or names each presented endpoint, in reading
    # order: the review reads the first forbidding ones of each and the first naming the main
    # endpoint (a version of it too), not every memory linked to what the answer shows.
    create = lookup(V2, LIST)
    links = {
        V2.key: [MemoryLink("res", avoids=False, named=False, rank="1"),
                 MemoryLink("ban-v2", avoids=True, named=True, rank="2"),
                 MemoryLink("note-v2", avoids=False, named=True, rank="3")],
        V1.key: [MemoryLink("note-v1", avoids=False, named=True, rank="0")],
        LIST.key: [MemoryLink("note-list", avoids=False, named=True, rank="0"),
                   MemoryLink("ban-list", avoids=True, named=True, rank="1"),
                   MemoryLink("ban-list-2", avoids=True, named=True, rank="2")],
    }  # fmt: skip
    assert linked_to_read(links, create, [V2, LIST, V1, LIST]) == [
        (["ban-v2"], FORBIDDING),
        (["ban-list", "ban-list-2"], FORBIDDING),
        ([], FORBIDDING),
        (["note-v1", "note-v2"], ALONG),  # a ban is read as one, or not at all
    ]
    # A memory recalled for the question is at hand: neither read again nor counted.
    assert linked_to_read(links, create, [V2], recalled={"note-v1", "ban-v2"}) == [
        ([], FORBIDDING), (["note-v2"], ALONG),
    ]


def test_a_team_prohibition_of_any_presented_endpoint_always_applies() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], matched="ref", score=0.0)
    report = lookup(LIST, EVENTS, SHIP)
    assert relevant_views([tracking], report) == [tracking]
    assert tracking.leads is False


def test_a_prohibition_not_about_the_question_substitutes_in_place() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], matched="ref", score=0.0)
    report = lookup(SEARCH, EVENTS, SHIP)
    found, team = apply_precedence(relevant_views([tracking], report), report)
    assert [e.signature for e in found.primary] == [SEARCH.signature, HOOKS.signature,
                                                     SHIP.signature]
    assert EVENTS.key in team.avoided


def test_a_prohibition_about_the_question_puts_what_to_use_instead_first() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=0.5)
    question = lookup(RECORD, EVENTS, resources=("shipment/tracking-event",))
    found, team = apply_precedence(relevant_views([tracking], question), question)
    assert found.primary[0].signature == HOOKS.signature
    assert EVENTS.signature not in [e.signature for e in found.primary]


def test_a_ref_linked_preference_does_not_reorder_the_answer() -> None:
    sites = view(f"To list our sites use {SEARCH.signature}; do not page through "
                 f"{LIST.signature}.", [SEARCH.signature, LIST.signature], matched="ref", score=0.0)
    create = lookup(V2, SHIP, prerequisites=[Dependency(endpoint=V2, parameter="x", provider=LIST)])
    found, team = apply_precedence(relevant_views([sites], create), create)
    assert found.primary[0].signature == V2.signature
    assert [f.endpoint.signature for f in team.forbidden] == [LIST.signature]
