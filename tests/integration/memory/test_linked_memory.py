"""LinkedMemory keeps project memory and the knowledge graph in step, on both graph backends.

The memories live in a real ``SqliteStore`` (with its semantic index); the graph is a real SQLite
file or the session's real Neo4j, holding the small shipping API of the conformance suite.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore

from apiatlas.config import Settings
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.neo4j.store import Neo4jGraphStore
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.memory.backends import close_memory_store, open_memory_store
from apiatlas.rag.memory.links import LinkedMemory
from apiatlas.rag.memory.model import Memory
from apiatlas.graph.testing.fixtures import shipping_spec
from tests.clock import Clock

P = "linked-memory"
CREATE_LOCATION = "ship/endpoint/POST /v2/locations"
READ_LOCATION = "ship/endpoint/GET /v2/locations/{location_id}"
DELETE_SHIPMENT = "ship/endpoint/DELETE /v2/shipments/{shipment_id}"
CANCEL_SHIPMENT = "ship/endpoint/POST /v2/shipments/{shipment_id}/cancel"
START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture
def memory_store(tmp_path: Path, embeddings: Embeddings) -> Iterator[BaseStore]:
    store = open_memory_store(Settings(home=tmp_path, memory="sqlite"), embeddings)
    yield store
    close_memory_store(store)


@pytest.fixture(params=["sqlite", "neo4j"])
def graph(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeGraphStore]:
    if request.param == "sqlite":
        store: KnowledgeGraphStore = SqliteGraphStore(tmp_path / "graph.sqlite")
    else:
        s: Settings = request.getfixturevalue("neo4j_settings")
        store = Neo4jGraphStore(s.neo4j_uri, s.neo4j_username, s.neo4j_password, database=s.neo4j_database)
        store.delete_project(P)
    ingest_graph(store, P, specs=[shipping_spec()])
    yield store
    store.delete_project(P)
    store.close()


def _team_and_support(
    graph: KnowledgeGraphStore, memory_store: BaseStore
) -> tuple[Clock, LinkedMemory, LinkedMemory]:
    """The team's memory and a support agent's, an hour after ``START`` on one clock."""
    clock = Clock(START)
    team = LinkedMemory(memory_store, P, graph=graph, clock=clock)
    support = LinkedMemory(memory_store, P, graph=graph, agent_type="support", clock=clock)
    clock.advance(hours=1)
    return clock, team, support


def _ids(memories: list[Memory]) -> list[str]:
    return [m.id for m in memories]


def test_writes_keep_links_in_step(graph: KnowledgeGraphStore, memory_store: BaseStore) -> None:
    clock = Clock(START)
    memory = LinkedMemory(memory_store, P, graph=graph, clock=clock)
    first = memory.remember(
        "We create locations with v2; v1 drops the timezone.", kind="decision", refs=["POST /v2/locations"]
    )
    assert _ids(memory.about([CREATE_LOCATION])) == [first.id]
    clock.advance(hours=1)
    second = memory.supersede(
        first.id,
        "Create locations with v2 and read them back.",
        refs=["POST /v2/locations", "GET /v2/locations/{id}"],
    )
    assert graph.memories_about(P, [CREATE_LOCATION, READ_LOCATION]) == {
        CREATE_LOCATION: [second.id], READ_LOCATION: [second.id],
    }  # fmt: skip
    assert _ids(memory.about([READ_LOCATION])) == [second.id]
    # The superseded version stays as history, unlinked.
    assert memory.get(first.id).superseded_by == second.id
    clock.advance(hours=1)
    memory.forget(second.id)
    assert graph.memories_about(P, [CREATE_LOCATION, READ_LOCATION]) == {}
    assert memory.about([CREATE_LOCATION]) == []


def test_about_follows_resources_time_and_agent_type(
    graph: KnowledgeGraphStore, memory_store: BaseStore
) -> None:
    _, team, support = _team_and_support(graph, memory_store)
    warning = team.remember(
        "Never delete shipments in production; cancel them.", kind="warning", refs=["shipments"], importance=9
    )
    fact = team.remember(
        "Deleting a shipment is irreversible.", refs=["DELETE /v2/shipments/{id}"], importance=3
    )
    private = support.remember(
        "Support agents may cancel shipments for customers.",
        refs=["POST /v2/shipments/{id}/cancel"],
        scope="agent_type",
    )
    assert _ids(team.about([DELETE_SHIPMENT])) == [warning.id, fact.id]
    assert team.about([DELETE_SHIPMENT], at=START) == []
    assert _ids(team.about([CANCEL_SHIPMENT])) == [warning.id]
    assert _ids(support.about([CANCEL_SHIPMENT])) == [warning.id, private.id]


def test_missing_refs_and_relink(graph: KnowledgeGraphStore, memory_store: BaseStore) -> None:
    memory = LinkedMemory(memory_store, P, graph=graph, clock=Clock(START))
    procedure = memory.remember(
        "To call off a shipment: cancel it, then check it.",
        kind="procedure",
        steps=["POST /v2/shipments/{id}/cancel", "GET /v2/shipments/{id}"],
        refs=["POST /v2/shipments/{id}/cancel", "GET /v2/shipments/{id}", "tracking events"],
    )
    old = memory.remember("Cancel by phone.", refs=["POST /v2/shipments/{id}/cancel"])
    memory.forget(old.id)
    assert memory.missing_refs(procedure) == []
    ingest_graph(graph, P, specs=[shipping_spec(drop={"POST /v2/shipments/{shipment_id}/cancel"})])
    assert memory.missing_refs(procedure) == ["POST /v2/shipments/{id}/cancel"]
    assert memory.about([CANCEL_SHIPMENT]) == []
    # A graph rebuilt from scratch has no links until relink(); closed versions stay unlinked.
    graph.delete_project(P)
    ingest_graph(graph, P, specs=[shipping_spec()])
    assert memory.about([CANCEL_SHIPMENT]) == []
    memory.relink()
    assert _ids(memory.about([CANCEL_SHIPMENT])) == [procedure.id]
    assert graph.memories_about(P, [CANCEL_SHIPMENT]) == {CANCEL_SHIPMENT: [procedure.id]}


def test_links_carry_what_a_memory_forbids_and_the_review_reads_only_the_first_in_force(
    graph: KnowledgeGraphStore, memory_store: BaseStore
) -> None:
    clock, team, support = _team_and_support(graph, memory_store)
    private = support.remember(
        "Never delete shipments from the support tools.", kind="warning",
        refs=["DELETE /v2/shipments/{id}"], scope="agent_type", importance=10,
    )  # fmt: skip
    clock.advance(hours=1)
    ban = team.remember("Never call DELETE /v2/shipments/{id}; cancel instead.",
                        kind="warning", importance=8)  # refs inferred from the text
    clock.advance(hours=1)
    note = team.remember("Deleting a shipment is irreversible.",
                         refs=["DELETE /v2/shipments/{id}"], importance=8)
    later = team.remember("Never delete shipments on Fridays.", kind="warning",
                          refs=["DELETE /v2/shipments/{id}"], importance=2)
    links = graph.memory_links(P, [DELETE_SHIPMENT])[DELETE_SHIPMENT]
    assert [(link.memory_id, link.avoids, link.named) for link in links] == [
        (private.id, True, True), (ban.id, True, False), (note.id, False, True),
        (later.id, True, True),
    ]  # most important first, then oldest; the inferred ref does not name it for the team
    bans = [link.memory_id for link in links if link.avoids]
    # The support agent's memory is not this agent type's: the next ban is read instead.
    assert _ids(team.first_in_force([(bans, 1), ([note.id], 1)])) == [ban.id, note.id]
    assert _ids(support.first_in_force([(bans, 1)])) == [private.id]
    assert _ids(team.first_in_force([(bans, 2)])) == [ban.id, later.id]
    assert team.first_in_force([(bans, 1)], at=START) == []
