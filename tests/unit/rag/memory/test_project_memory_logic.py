"""ProjectMemory's pure logic on LangGraph's InMemoryStore, with a fixed clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from langgraph.store.memory import InMemoryStore

from apiatlas.errors import UsageError
from apiatlas.rag.memory import Memory, ProjectMemory, UnknownMemory, parse_ref
from tests.clock import Clock

START = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def memory(store: InMemoryStore, clock: Clock) -> ProjectMemory:
    return ProjectMemory(store, "acme", clock=clock)


def test_parse_ref_normalises_endpoints_and_resources() -> None:
    assert parse_ref("post /v2/locations/") == "POST /v2/locations"
    assert parse_ref("  get /v2/locations/{location_id} ") == "GET /v2/locations/{location_id}"
    assert parse_ref("Locations") == "locations"
    assert parse_ref("GET /") == "GET /"


@pytest.mark.parametrize("bad", ["", "   ", "POST", "DELETE shipments"])
def test_parse_ref_rejects_what_names_nothing(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_ref(bad)


def test_remember_stores_normalised_fields(memory: ProjectMemory) -> None:
    m = memory.remember(
        "We create locations with v2; v1 drops the timezone",
        kind="decision",
        refs=["post /v2/locations/", "Locations", "POST /v2/locations"],
        importance=8,
        author="dana",
        source="ADR-12",
    )
    assert m.refs == ["POST /v2/locations", "locations"]  # normalised, duplicates dropped
    assert m.endpoint_refs == ["POST /v2/locations"] and m.resource_refs == ["locations"]
    assert (m.created_at, m.valid_from, m.valid_to) == (START, START, None)
    assert m.citation == f"memory:{m.id}"
    assert memory.get(m.id) == m


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "  "}, "needs text"),
        ({"text": "x", "kind": "rumour"}, "unknown memory kind"),
        ({"text": "x", "importance": 0}, "1..10"),
        ({"text": "x", "importance": 11}, "1..10"),
        ({"text": "x", "refs": ["POST"]}, "POST"),
        ({"text": "x", "scope": "agent_type"}, "agent_type"),
    ],
)
def test_remember_rejects_bad_input(memory: ProjectMemory, kwargs: dict, message: str) -> None:
    text = kwargs.pop("text")
    with pytest.raises(UsageError, match=message):
        memory.remember(text, **kwargs)


def test_bad_project_name_is_a_usage_error(store: InMemoryStore) -> None:
    with pytest.raises(UsageError, match="namespace"):
        ProjectMemory(store, "acme.prod")


def test_procedure_keeps_its_steps_in_order(memory: ProjectMemory) -> None:
    steps = ["POST /v2/carriers", "  ", "POST /v2/carriers/{id}/accounts", "GET /v2/carriers/{id}"]
    m = memory.remember("To onboard a carrier", kind="procedure", steps=steps)
    assert memory.get(m.id).steps == [steps[0], steps[2], steps[3]]
    assert "POST /v2/carriers/{id}/accounts" in m.search_text()


def test_supersede_chain_keeps_every_version(memory: ProjectMemory, clock: Clock) -> None:
    v1 = memory.remember("Use v1 for locations", kind="decision", refs=["POST /v1/locations"])
    t2 = clock.advance(days=10)
    v2 = memory.supersede(v1.id, "Use v2 for locations", refs=["POST /v2/locations"])
    t3 = clock.advance(days=10)
    v3 = memory.supersede(v2.id, "Use v2 for locations, with the timezone set", importance=9)

    assert (v2.supersedes, v3.supersedes) == (v1.id, v2.id)
    assert v3.kind == "decision" and v3.refs == ["POST /v2/locations"]  # carried over
    assert v3.importance == 9 and v3.valid_from == t3
    assert [m.id for m in memory.history(v2.id)] == [v1.id, v2.id, v3.id]
    old = memory.get(v1.id)
    assert (old.valid_to, old.superseded_by) == (t2, v2.id)
    assert [m.id for m in memory.list()] == [v3.id]
    assert len(memory.list(include_history=True)) == 3


def test_superseding_an_old_version_names_the_latest(memory: ProjectMemory) -> None:
    v1 = memory.remember("a", kind="fact")
    v2 = memory.supersede(v1.id, "b")
    with pytest.raises(UsageError, match=v2.id):
        memory.supersede(v1.id, "c")
    with pytest.raises(UsageError, match=v2.id):
        memory.forget(v1.id)


def test_forget_is_soft_and_idempotent(memory: ProjectMemory, clock: Clock) -> None:
    m = memory.remember("Never call DELETE /shipments in production", kind="warning")
    when = clock.advance(hours=1)
    gone = memory.forget(m.id)
    assert (gone.forgotten_at, gone.valid_to) == (when, when)
    clock.advance(hours=1)
    assert memory.forget(m.id) == gone
    assert memory.list() == []
    assert [x.id for x in memory.list(include_history=True)] == [m.id]
    assert memory.history(m.id) == [gone]
    with pytest.raises(UsageError, match="forgotten"):
        memory.supersede(m.id, "changed my mind")


def test_unknown_ids_say_how_to_find_ids(memory: ProjectMemory) -> None:
    with pytest.raises(UnknownMemory, match="apiatlas memory list"):
        memory.get("mem_nope")
    with pytest.raises(UnknownMemory):
        memory.forget("mem_nope")


def test_list_at_answers_for_the_past(memory: ProjectMemory, clock: Clock) -> None:
    v1 = memory.remember("Shipments are cancelled with DELETE", kind="fact")
    before_v2 = clock.advance(days=30)
    clock.advance(days=1)
    v2 = memory.supersede(v1.id, "Shipments are cancelled with POST /shipments/{id}/cancel")
    clock.advance(minutes=1)
    later = memory.remember("Carriers need an account first", kind="fact")

    assert memory.list(at=START - timedelta(days=1)) == []  # nothing was known yet
    assert [m.id for m in memory.list(at=before_v2)] == [v1.id]
    assert [m.id for m in memory.list()] == [v2.id, later.id]
    assert [m.id for m in memory.list(kind="fact", at=before_v2)] == [v1.id]
    assert memory.list(kind="warning") == []


def test_valid_at_respects_valid_from_and_creation() -> None:
    m = Memory(
        id="mem_1", project="acme", kind="fact", text="x", created_at=START,
        valid_from=START + timedelta(days=5), valid_to=START + timedelta(days=9),
    )  # fmt: skip
    assert not m.valid_at(START + timedelta(days=1))
    assert m.valid_at(START + timedelta(days=5))
    assert not m.valid_at(START + timedelta(days=9))
    assert m.valid_at(datetime(2026, 9, 7))  # naive means UTC


def test_recall_by_ref_matches_parameter_names_loosely(memory: ProjectMemory, clock: Clock) -> None:
    about = memory.remember("Cancel, never delete", kind="warning", refs=["POST /v2/shipments/{id}/cancel"])
    memory.remember("Unrelated", kind="fact", refs=["GET /v2/carriers"])
    resource = memory.remember("Locations need a timezone", kind="fact", refs=["locations"])
    hits = memory.recall("anything", refs=["post /v2/shipments/{shipment_id}/cancel/", "Locations"])
    assert {h.memory.id for h in hits} == {about.id, resource.id}
    assert all(h.matched == "ref" and h.score == 0.0 for h in hits)
    clock.advance(days=1)
    memory.forget(about.id)
    assert [h.memory.id for h in memory.recall("anything", refs=["POST /v2/shipments/{x}/cancel"])] == []
    assert [h.memory.id for h in memory.recall("x", refs=["POST /v2/shipments/{x}/cancel"], at=START)] == [about.id]


def test_agent_types_are_scoped(store: InMemoryStore, clock: Clock) -> None:
    project = ProjectMemory(store, "acme", clock=clock)
    support = ProjectMemory(store, "acme", agent_type="support", clock=clock)
    billing = ProjectMemory(store, "acme", agent_type="billing", clock=clock)
    shared = project.remember("Everyone: use v2", kind="decision")
    mine = support.remember("Support: refunds need a ticket", kind="procedure", scope="agent_type")
    assert mine.agent_type == "support"

    assert {m.id for m in support.list()} == {shared.id, mine.id}
    assert {m.id for m in billing.list()} == {shared.id}
    assert {m.id for m in project.list()} == {shared.id}
    with pytest.raises(UnknownMemory):
        billing.get(mine.id)
    newer = support.supersede(mine.id, "Support: refunds need a ticket and a manager")
    assert newer.agent_type == "support"
    assert store.get(("apiatlas", "acme", "agent_types", "support", "memories"), newer.id) is not None


def test_projects_never_see_each_other(store: InMemoryStore, clock: Clock) -> None:
    acme = ProjectMemory(store, "acme", clock=clock)
    other = ProjectMemory(store, "globex", clock=clock)
    a = acme.remember("Acme only", kind="fact", refs=["GET /v2/locations"])
    assert other.list(include_history=True) == []
    assert other.recall("Acme only", refs=["GET /v2/locations"]) == []
    with pytest.raises(UnknownMemory):
        other.get(a.id)


def test_secrets_are_scrubbed_before_storing(memory: ProjectMemory, store: InMemoryStore) -> None:
    m = memory.remember(
        "Staging uses postgres://svc:Tr0ub4dor-3@db.internal:5432/app",
        kind="fact",
        steps=["export STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc"],
        author="dana",
    )
    assert "Tr0ub4dor-3" not in m.text and "[REDACTED:credentials]" in m.text
    assert "sk_live_4eC39HqLyjWDarjtT1zdp7dc" not in m.steps[0]
    assert sorted(m.scrubbed) == ["connection-string-credentials", "stripe-key"]
    raw = store.get(("apiatlas", "acme", "memories"), m.id)
    assert raw is not None and "Tr0ub4dor-3" not in str(raw.value)


def test_now_is_the_memory_clock_not_the_wall_clock(store: InMemoryStore) -> None:
    future = ProjectMemory(store, "acme", clock=Clock(datetime(2031, 1, 1, tzinfo=timezone.utc)))
    m = future.remember("Recorded by a clock ahead of the wall clock", kind="fact", refs=["locations"])
    assert [x.id for x in future.list()] == [m.id]
    assert [h.memory.id for h in future.recall("q", refs=["locations"])] == [m.id]
