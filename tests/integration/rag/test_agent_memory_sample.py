"""Project memory in the agent, on the packaged sample API: real SQLite graph, Chroma, MiniLM and
a real ``SqliteStore`` memory. Each test keeps its memories under its own agent type, so tests
see only their own memories while sharing one ingest."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.cli import main
from apiatlas.config import Settings
from apiatlas.rag.agent.graph import build_agent, run_agent
from apiatlas.rag.agent.context import AgentContext
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.memory.backends import close_memory_store, open_memory_store
from apiatlas.rag.memory.links import LinkedMemory
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.rag.agent.context import NAMED
from apiatlas.sample import sample_guides_dir, sample_spec_path

PROJECT = "sample"
DELETE = "DELETE /v2/shipments/{shipment_id}"
CANCEL = "POST /v2/shipments/{shipment_id}/cancel"


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiAtlas]:
    settings = Settings(home=Path(tmp_path_factory.mktemp("agent-memory")), project=PROJECT)
    embeddings = load_embeddings(settings)
    store = open_memory_store(settings, embeddings)
    with ApiAtlas(settings, embeddings=embeddings, memory_store=store) as atlas:
        atlas.ingest(openapi=[sample_spec_path()], docs=[sample_guides_dir()])
        yield atlas
    close_memory_store(store)


def team(atlas: ApiAtlas, agent_type: str, clock: datetime | None = None) -> LinkedMemory:
    kwargs = {"clock": lambda: clock} if clock is not None else {}
    return LinkedMemory(
        atlas.memory_store, PROJECT, graph=atlas.graph, agent_type=agent_type, **kwargs
    )


def primary(result: AnswerResult) -> list[str]:
    return [f"{e.method} {e.path}" for e in result.endpoints if e.role == "primary"]


def test_a_deprecated_endpoint_the_team_uses_leads_the_cited_answer(atlas: ApiAtlas) -> None:
    memory = team(atlas, "erp").remember(
        "We still create locations with POST /v1/locations: our ERP only sends one address line.",
        kind="decision", refs=["POST /v1/locations"], scope="agent_type",
    )
    result = atlas.ask("What endpoints can I use to create a location?", agent_type="erp")
    assert result.route[0] == "memory" and result.notes == []
    assert result.answer.startswith("**Team memory**")
    assert result.citations[0].kind == "memory"
    assert result.citations[0].uri == f"memory:{memory.id}"
    assert primary(result)[0] == "POST /v1/locations"
    assert (
        "deprecated** (replacement: `POST /v2/locations`); your team's memory says to use it [1]"
        in result.answer
    )
    [used] = result.memories
    assert used.id == memory.id and used.citation == 1
    assert used.stances == {"POST /v1/locations": "prefer"}
    assert used.conflicts and "deprecated" in used.conflicts[0]


def test_an_endpoint_the_team_forbids_is_not_recommended(atlas: ApiAtlas) -> None:
    memory = team(atlas, "ops").remember(
        "Never call DELETE /v2/shipments/{shipment_id} in production; cancel the shipment instead.",
        kind="warning", refs=[DELETE, CANCEL], scope="agent_type",
    )
    result = atlas.ask("How do I delete a shipment?", agent_type="ops")
    assert DELETE not in primary(result)
    assert primary(result)[0] == CANCEL
    assert "**Forbidden by your team**" in result.answer
    assert f"`{DELETE}`" in result.answer.split("**Endpoints**")[0]
    [used] = result.memories
    assert used.id == memory.id
    assert used.stances == {DELETE: "avoid", CANCEL: "prefer"}
    assert any("forbids" in c for c in used.conflicts)


def test_a_rule_written_without_refs_is_linked_by_what_its_text_names(atlas: ApiAtlas) -> None:
    # As a chat tool or an agent records it: no refs, the endpoints only in the text (one with
    # another parameter name than the spec's).
    memory = team(atlas, "chat").remember(
        "Never call DELETE /v2/shipments/{id} in production; cancel the shipment with "
        f"{CANCEL} instead.",
        kind="decision", scope="agent_type",
    )
    assert memory.refs == [] and memory.inferred_refs == [DELETE, CANCEL]
    result = atlas.ask("How do I delete a shipment?", agent_type="chat")
    assert primary(result)[0] == CANCEL and DELETE not in primary(result)
    assert "**Forbidden by your team**" in result.answer
    [used] = result.memories
    assert used.id == memory.id and used.inferred_refs == [DELETE, CANCEL]
    assert used.stances == {DELETE: "avoid", CANCEL: "prefer"} and used.missing_refs == []
    assert any("the team forbids it" in c for c in used.conflicts)
    assert "Memory and docs disagree" in result.answer


def test_refs_given_replace_what_the_text_names(atlas: ApiAtlas) -> None:
    memory = team(atlas, "given").remember(
        f"Cancel with {CANCEL}; DELETE /v2/shipments/{{id}} is for drafts.",
        kind="fact", refs=[CANCEL], scope="agent_type",
    )
    assert memory.refs == [CANCEL] and memory.inferred_refs == []
    unknown = team(atlas, "given").remember(
        "POST /v9/teleport is what the old system called.", scope="agent_type"
    )
    assert unknown.inferred_refs == []  # only endpoints the API has are linked


def test_a_procedure_answers_alone_with_its_endpoints_verified(atlas: ApiAtlas) -> None:
    steps = [
        "Register it with POST /v2/carriers",
        "Verify it with POST /v2/carriers/{carrier_id}/verify",
        "Book a test shipment with POST /v2/shipments",
    ]
    memory = team(atlas, "onboarding").remember(
        "To onboard a new carrier", kind="procedure", steps=steps, scope="agent_type",
        refs=["POST /v2/carriers", "POST /v2/carriers/{carrier_id}/verify", "POST /v2/shipments"],
    )
    result = atlas.ask("How do we onboard a carrier?", agent_type="onboarding")
    assert result.route == ["memory", "compose"]
    assert primary(result) == [
        "POST /v2/carriers", "POST /v2/carriers/{carrier_id}/verify", "POST /v2/shipments"
    ]
    assert result.citations[0].uri == f"memory:{memory.id}"
    assert all(c.kind == "spec" for c in result.citations[1:]) and len(result.citations) == 4
    assert all(e.citation is not None for e in result.endpoints)
    assert "(checked against the API)" in result.answer and result.memories[0].missing_refs == []


def test_a_memory_naming_a_removed_endpoint_is_flagged(atlas: ApiAtlas) -> None:
    memory = team(atlas, "legacy").remember(
        "To onboard a new carrier", kind="procedure", scope="agent_type",
        steps=["Register it with POST /v2/carriers", "Approve it with POST /v1/carriers/approve"],
        refs=["POST /v2/carriers", "POST /v1/carriers/approve"],
    )
    result = atlas.ask("How do we onboard a carrier?", agent_type="legacy")
    assert primary(result) == ["POST /v2/carriers"]
    assert result.memories[0].missing_refs == ["POST /v1/carriers/approve"]
    assert (
        f"`memory:{memory.id}` names `POST /v1/carriers/approve`, which the API no longer has"
        in result.answer
    )


def test_at_answers_with_the_memory_valid_then(atlas: ApiAtlas) -> None:
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    old = team(atlas, "history", clock=start).remember(
        "We create locations with POST /v1/locations", kind="decision",
        refs=["POST /v1/locations"], scope="agent_type",
    )
    new = team(atlas, "history", clock=start + timedelta(days=31)).supersede(
        old.id,
        "We create locations with POST /v2/locations; do not use POST /v1/locations any more",
        refs=["POST /v2/locations", "POST /v1/locations"],
    )
    question = "What endpoints can I use to create a location?"
    then = atlas.ask(question, agent_type="history", at=start + timedelta(days=10))
    now = atlas.ask(question, agent_type="history")
    assert [m.id for m in then.memories] == [old.id] and primary(then)[0] == "POST /v1/locations"
    assert [m.id for m in now.memories] == [new.id] and primary(now)[0] == "POST /v2/locations"
    assert "POST /v1/locations" not in primary(now)


def test_a_question_no_memory_is_about_gets_the_docs_answer_unchanged(atlas: ApiAtlas) -> None:
    team(atlas, "quiet").remember(
        "We create locations with POST /v1/locations", kind="decision",
        refs=["POST /v1/locations"], scope="agent_type",
    )
    question = "What endpoints can I use to create a webhook?"
    with_memory = atlas.ask(question, agent_type="quiet")
    plain = build_agent(
        store=atlas.graph, vector_retriever=atlas.retriever, embeddings=atlas.embeddings
    )
    without = run_agent(plain, question, context=AgentContext(project=PROJECT))
    assert with_memory.memories == [] and "Team memory" not in with_memory.answer
    assert with_memory.answer == without.answer
    assert with_memory.endpoints == without.endpoints
    assert with_memory.citations == without.citations
    assert "memory" in with_memory.route and with_memory.notes == []
    assert without.route[0] == "memory" and without.notes == ["memory: none"]


def test_ask_json_prints_the_memories_used(
    atlas: ApiAtlas, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = team(atlas, "cli").remember(
        "Never call DELETE /v2/shipments/{shipment_id}; cancel the shipment instead.",
        kind="warning", refs=[DELETE, CANCEL], scope="agent_type",
    )
    capsys.readouterr()
    argv = ["ask", "--home", str(atlas.settings.home), "--project", PROJECT, "--json",
            "--agent-type", "cli", "How do I delete a shipment?"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    [used] = printed["memories"]
    assert used["id"] == memory.id and used["kind"] == "warning" and used["citation"] == 1
    assert used["stances"] == {DELETE: "avoid", CANCEL: "prefer"}
    assert printed["citations"][0] == {
        "n": 1, "kind": "memory", "source": "memory", "uri": f"memory:{memory.id}",
        "pointer": memory.id, "title": "Team memory (warning)",
    }


def test_memory_add_says_what_a_memory_without_refs_is_linked_to(
    atlas: ApiAtlas, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    argv = ["memory", "add", "--home", str(atlas.settings.home), "--project", PROJECT,
            "--agent-type", "cli-add", "--kind", "warning",
            "Never call delete /v2/shipments/{id}/ in production."]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"linked to what its text names: {DELETE} (inferred;" in out
    argv = ["memory", "list", "--home", str(atlas.settings.home), "--project", PROJECT,
            "--agent-type", "cli-add", "--json"]
    assert main(argv) == 0
    [stored] = [m for m in json.loads(capsys.readouterr().out) if m["agent_type"] == "cli-add"]
    assert stored["refs"] == [] and stored["inferred_refs"] == [DELETE]



def test_memory_add_says_what_an_earlier_memory_it_repeats_or_contradicts_is(
    atlas: ApiAtlas, capsys: pytest.CaptureFixture[str]
) -> None:
    def add(kind: str, text: str) -> str:
        capsys.readouterr()
        argv = ["memory", "add", "--home", str(atlas.settings.home), "--project", PROJECT,
                "--agent-type", "cli-touch", "--kind", kind, text]
        assert main(argv) == 0  # told, never refused
        return " ".join(capsys.readouterr().out.split())

    first = add("decision", f"We cancel booked shipments with {CANCEL}.")
    [first_id] = re.findall(r"mem_[0-9a-f]{12}", first)
    assert "almost the same" not in first and "contradicts" not in first
    forbids = add("warning", f"Never call {CANCEL} from the nightly jobs.")
    assert f"contradicts {first_id} about {CANCEL}: it says to use it, this one forbids it" in forbids
    again = add("decision", f"We cancel booked shipments with {CANCEL}.")
    assert f"almost the same as {first_id}" in again
    assert f"memory supersede {first_id}" in again
    assert len(team(atlas, "cli-touch").list()) == 3


def test_the_ranked_endpoints_after_the_first_k_are_named_and_one_the_team_forbids_goes(
    atlas: ApiAtlas,
) -> None:
    question = "How do I update a shipment?"
    before = atlas.ask(question, agent_type="tail")
    named = [f"{e.method} {e.path}" for e in before.endpoints]
    assert len(named) == len(set(named)) >= NAMED  # five in full, the ranker's next a line each
    tail = [e for e in before.endpoints[5:] if e.role == "related"]
    assert tail and all(f"- `{e.method} {e.path}` — " in before.answer for e in tail)
    last = f"{tail[-1].method} {tail[-1].path}"
    memory = team(atlas, "tail").remember(
        f"Never call {last}: it is not enabled for our account.", kind="warning",
        refs=[last], scope="agent_type",
    )
    after = atlas.ask(question, agent_type="tail")
    assert last not in [f"{e.method} {e.path}" for e in after.endpoints]
    # Forbidding an endpoint the answer only names in passing brings no memory into it.
    assert memory.id not in [m.id for m in after.memories]
    assert after.endpoints[:5] == before.endpoints[:5]
