"""Which memories an answer uses and which may lead it: those the relevance model finds about the
question, and those forbidding the answer's first endpoint; a prohibition of another presented
endpoint leaves it out without a citation; the rest stay out."""

from __future__ import annotations

from datetime import datetime, timezone

from apiatlas.graph.model import Dependency, EndpointRef, MemoryLink, ResourceInfo
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.resource_matcher import ResourceMatch
from apiatlas.rag.memory.model import Matched, Memory, MemoryHit, MemoryKind, parse_ref
from apiatlas.rag.review.precedence import MemoryView, apply_precedence
from apiatlas.rag.ranking.model import Linear
from apiatlas.rag.review.relevance import (
    ALONG,
    FORBIDDING,
    RELEVANCE_FEATURES,
    RelevanceModel,
    family,
    linked_to_read,
    main_endpoints,
    quietly_forbidden,
    relevance_vector,
    relevant_views,
    shipped_model,
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
    score: float = 0.5, importance: int = 5,
) -> MemoryView:
    memory = Memory(
        id=f"mem_{abs(hash(text)) % 10_000}", project="p", kind=kind, text=text,
        refs=[parse_ref(r) for r in refs], created_at=NOW, valid_from=NOW, importance=importance,
    )
    return MemoryView(
        hit=MemoryHit(memory=memory, score=score, matched=matched),
        stances=classify_stances(memory),
        resolved={r: [ALL[r]] for r in memory.endpoint_refs},
    )


def lookup(*primary: EndpointRef, resources: tuple[str, ...] = (), question: str = "a question",
           **extra: object) -> GraphLookup:
    matched = [
        ResourceMatch(
            resource=ResourceInfo(key=f"api/resource/{r}", api="api", name=r.split("/")[-1]),
            term=r, score=1.0, how="lexical",
        )
        for r in resources
    ]
    return GraphLookup(
        intent=analyse_question(question), primary=list(primary), matched_resources=matched,
        **extra,
    )


TRACKING = (
    f"We no longer poll {EVENTS.signature} for tracking updates: use a webhook subscribed to "
    f"tracking_event.created instead ({HOOKS.signature})."
)


def by(feature: str, threshold: float = 0.5) -> RelevanceModel:
    """A model that keeps a memory exactly when ``feature`` is 1."""
    n = len(RELEVANCE_FEATURES)
    coef = tuple(10.0 if f == feature else 0.0 for f in RELEVANCE_FEATURES)
    return RelevanceModel(Linear(RELEVANCE_FEATURES, (0.5,) * n, (1.0,) * n, coef, 0.0),
                          threshold)


def test_versions_of_one_operation_share_a_family() -> None:
    assert family(V1) == family(V2)
    assert family(V2) != family(SEARCH)


def test_the_features_read_what_the_graph_and_the_memory_say() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=0.6, importance=8)
    v1 = view("We still create locations with POST /v1/locations.", [V1.signature],
              matched="ref", score=0.0)
    question = lookup(V2, EVENTS, question="how do we create a location")
    f = dict(zip(RELEVANCE_FEATURES, relevance_vector(v1, question, [tracking, v1]), strict=True))
    assert len(f) == len(RELEVANCE_FEATURES)
    assert f["names_first"] == 1.0 and f["share_first"] == 1.0  # a version of the first endpoint
    assert f["semantic"] == 0.0 and f["score"] == 0.0 and f["sem_rank"] == 0.5
    assert f["stance_first"] == 1.0 and f["forbids_first"] == 0.0  # it prefers v1
    assert f["lex_q"] == 2 / 2  # "create" and "location" of "how do we create a location"
    assert f["kind_decision"] == 1.0 and f["no_refs"] == 0.0
    t = dict(zip(RELEVANCE_FEATURES, relevance_vector(tracking, question, [tracking, v1]),
                 strict=True))
    assert t["semantic"] == 1.0 and t["sem_rank"] == 1.0 and t["ratio"] == 1.0
    assert t["names_first"] == 0.0 and t["names_presented"] == 1.0  # it names EVENTS
    assert t["importance"] == 0.8 and t["lex_q"] == 0.0


def test_the_model_decides_which_memories_lead_and_a_ban_of_the_first_endpoint_applies() -> None:
    semantic = view("Tracking updates come by webhook.", [HOOKS.signature], score=0.7)
    linked = view(TRACKING, [HOOKS.signature, EVENTS.signature], matched="ref", score=0.0)
    report = lookup(EVENTS, SHIP)
    kept = relevant_views([semantic, linked], report, model=by("semantic"))
    # The linked memory is not about the question but forbids the first endpoint: kept, and
    # it does not lead.
    assert kept == [semantic, linked]
    assert semantic.leads is True and linked.leads is False
    assert relevant_views([semantic, linked], report, model=by("names_first")) == [linked]


def test_a_ban_of_another_presented_endpoint_leaves_it_out_without_a_citation() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], matched="ref", score=0.0)
    report = lookup(LIST, EVENTS, SHIP)
    kept = relevant_views([tracking], report, model=by("semantic"))
    assert kept == []
    assert quietly_forbidden([tracking], kept, {LIST.key, EVENTS.key, SHIP.key}) == {EVENTS.key}
    assert quietly_forbidden([tracking], [tracking], {EVENTS.key}) == set()


def test_the_shipped_model_tells_a_memory_about_the_question_from_a_neighbour() -> None:
    model = shipped_model()
    assert model.model.features == RELEVANCE_FEATURES and 0.0 < model.threshold < 1.0
    question = lookup(RECORD, EVENTS, question="record a tracking event for a shipment")
    about = view("Record tracking events for a shipment with POST "
                 "/v2/shipments/{shipment_id}/tracking-events, never by hand.",
                 [RECORD.signature], score=0.8, importance=8)
    neighbour = view("Register carriers with POST /v2/carriers.", [CARRIER.signature],
                     kind="procedure", matched="ref", score=0.0)
    assert relevant_views([about, neighbour], question) == [about]


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


def test_a_prohibition_not_about_the_question_substitutes_in_place() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], matched="ref", score=0.0)
    tracking.leads = False
    report = lookup(EVENTS, SEARCH, SHIP)
    found, team = apply_precedence([tracking], report)
    assert [e.signature for e in found.primary] == [HOOKS.signature, SEARCH.signature,
                                                     SHIP.signature]
    assert EVENTS.key in team.avoided


def test_a_prohibition_about_the_question_puts_what_to_use_instead_first() -> None:
    tracking = view(TRACKING, [HOOKS.signature, EVENTS.signature], score=0.5)
    tracking.leads = True
    question = lookup(RECORD, EVENTS, resources=("shipment/tracking-event",))
    found, team = apply_precedence([tracking], question)
    assert found.primary[0].signature == HOOKS.signature
    assert EVENTS.signature not in [e.signature for e in found.primary]


def test_when_the_graph_finds_nothing_a_leading_memory_gives_the_answer() -> None:
    onboarding = view("To onboard a new carrier, register it with POST /v2/carriers",
                      [CARRIER.signature], kind="procedure", score=0.34)
    onboarding.leads = True
    found, _ = apply_precedence([onboarding], lookup(resources=("carrier",)))
    assert [e.signature for e in found.primary] == [CARRIER.signature]
    onboarding.leads = None  # unjudged: the abstention stands
    found, _ = apply_precedence([onboarding], lookup(resources=("carrier",)))
    assert found.primary == []


def test_a_preference_that_does_not_lead_does_not_reorder_the_answer() -> None:
    sites = view(f"To list our sites use {SEARCH.signature}; do not page through "
                 f"{LIST.signature}.", [SEARCH.signature, LIST.signature], matched="ref", score=0.0)
    sites.leads = False
    create = lookup(V2, SHIP, prerequisites=[Dependency(endpoint=V2, parameter="x", provider=LIST)])
    found, team = apply_precedence([sites], create)
    assert found.primary[0].signature == V2.signature
    assert [f.endpoint.signature for f in team.forbidden] == [LIST.signature]


def test_main_endpoints_are_the_first_and_its_direct_prerequisites() -> None:
    create = lookup(
        SHIP, PATCH_CARRIER,
        prerequisites=[
            Dependency(endpoint=SHIP, parameter="origin_id", provider=V2),
            Dependency(endpoint=PATCH_CARRIER, parameter="carrier_id", provider=CARRIER),
        ],
    )
    assert [e.signature for e in main_endpoints(create)] == [SHIP.signature, V2.signature]
