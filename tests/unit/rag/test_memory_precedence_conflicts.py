"""Project memory over the docs: forbidden endpoints leave, preferred ones lead, conflicts noted."""

from __future__ import annotations

from datetime import datetime, timezone

from apiatlas.graph.model import Dependency, EndpointRef
from apiatlas.rag.answer.citations import CitationRegistry
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.answer.team import endpoint_notes, lead_lines
from apiatlas.rag.memory.model import Matched, Memory, MemoryHit, MemoryKind, parse_ref
from apiatlas.rag.review.precedence import (
    PROCEDURE_ANSWER_SCORE,
    MemoryView,
    answering_procedure,
    apply_precedence,
)
from apiatlas.rag.memory.stance import classify_stances

NOW = datetime(2025, 3, 1, tzinfo=timezone.utc)


def endpoint(signature: str, *, deprecated: bool = False, summary: str = "") -> EndpointRef:
    method, path = signature.split(" ", 1)
    return EndpointRef(
        key=f"api/endpoint/{signature}", api="api", method=method, path=path,
        deprecated=deprecated, summary=summary, source="spec.yaml", pointer=f"/paths/{path}",
    )


DELETE = endpoint("DELETE /v2/shipments/{shipment_id}", summary="Delete a draft shipment")
CANCEL = endpoint("POST /v2/shipments/{shipment_id}/cancel", summary="Cancel a shipment")
UPDATE = endpoint("PATCH /v2/shipments/{shipment_id}")
V1 = endpoint("POST /v1/locations", deprecated=True)
V2 = endpoint("POST /v2/locations")
SEARCH = endpoint("POST /v2/locations/search")
ALL = {e.signature: e for e in (DELETE, CANCEL, UPDATE, V1, V2, SEARCH)}


def view(
    text: str, refs: list[str], kind: MemoryKind = "decision", *, matched: Matched = "semantic",
    score: float = 0.5, steps: tuple[str, ...] = (), missing: tuple[str, ...] = (),
) -> MemoryView:
    memory = Memory(
        id=f"mem_{abs(hash(text)) % 10_000}", project="p", kind=kind, text=text, steps=list(steps),
        refs=[parse_ref(r) for r in refs], created_at=NOW, valid_from=NOW,
    )
    resolved = {r: [ALL[r]] if r in ALL else [] for r in memory.endpoint_refs}
    return MemoryView(
        hit=MemoryHit(memory=memory, score=score, matched=matched),
        stances=classify_stances(memory), resolved=resolved, missing=list(missing),
    )


def lookup(question: str, *primary: EndpointRef, **extra: object) -> GraphLookup:
    return GraphLookup(intent=analyse_question(question), primary=list(primary), **extra)


def sigs(found: GraphLookup) -> list[str]:
    return [e.signature for e in found.primary]


def test_a_forbidden_endpoint_leaves_the_answer_and_its_instead_leads() -> None:
    warning = view(
        "Never call DELETE /v2/shipments/{id} in production; cancel instead",
        [DELETE.signature, CANCEL.signature], "warning",
    )
    found, team = apply_precedence([warning], lookup("delete a shipment", DELETE, UPDATE))
    assert sigs(found) == [CANCEL.signature, UPDATE.signature]
    assert [f.endpoint.signature for f in team.forbidden] == [DELETE.signature]
    assert [e.signature for e in team.forbidden[0].instead] == [CANCEL.signature]
    assert len(warning.conflicts) == 1 and "forbids" in warning.conflicts[0]
    lines = "\n".join(lead_lines(team, CitationRegistry()))
    assert "**Forbidden by your team**" in lines and f"`{DELETE.signature}`" in lines


def test_a_forbidden_prerequisite_is_dropped_too() -> None:
    dep = Dependency(endpoint=CANCEL, parameter="shipment_id", provider=DELETE)
    warning = view("Do not use DELETE /v2/shipments/{id}", [DELETE.signature], "warning")
    found, team = apply_precedence([warning], lookup("cancel", CANCEL, prerequisites=[dep]))
    assert found.prerequisites == [] and sigs(found) == [CANCEL.signature]
    assert team.forbidden[0].endpoint == DELETE


def test_a_deprecated_endpoint_the_team_uses_leads_with_the_replacement_named() -> None:
    decision = view("We still create locations with POST /v1/locations", [V1.signature])
    found, team = apply_precedence([decision], lookup("create a location", V2, SEARCH), pool=[V1])
    assert sigs(found) == [V1.signature, V2.signature, SEARCH.signature]
    assert "deprecated (replacement: `POST /v2/locations`)" in decision.conflicts[0]
    notes = endpoint_notes(team, CitationRegistry(), found.replacements)
    assert "your team's memory says to use it" in notes[V1.key][0]
    assert "replacement: `POST /v2/locations`" in notes[V1.key][0]


def test_a_decision_puts_its_endpoint_first_among_the_candidates() -> None:
    decision = view("We search before creating: use POST /v2/locations/search", [SEARCH.signature])
    found, _ = apply_precedence([decision], lookup("find a location", V2, SEARCH))
    assert sigs(found) == [SEARCH.signature, V2.signature]
    assert "the docs rank `POST /v2/locations` first" in decision.conflicts[0]


def test_an_unjudged_memory_pulls_no_endpoint_from_outside_the_candidates() -> None:
    decision = view("Use POST /v2/locations/search", [SEARCH.signature])
    found, team = apply_precedence([decision], lookup("update a shipment", UPDATE))
    assert sigs(found) == [UPDATE.signature] and not decision.conflicts and not team.notes


def test_a_memory_judged_about_the_question_leads_with_its_endpoint_outside_the_candidates(
) -> None:
    decision = view("Shipments are never changed in place; cancel them and book anew",
                    [CANCEL.signature])
    decision.leads = True
    found, _ = apply_precedence([decision], lookup("update a shipment", UPDATE))
    assert sigs(found) == [CANCEL.signature, UPDATE.signature]
    assert "the team prefers `POST /v2/shipments/{shipment_id}/cancel`" in decision.conflicts[0]


def test_an_abstention_stays_an_abstention() -> None:
    decision = view("We create locations with POST /v1/locations", [V1.signature])
    found, _ = apply_precedence([decision], lookup("create a warehouse"), pool=[V1])
    assert found.primary == []


def test_a_memory_found_by_ref_annotates_but_does_not_reorder() -> None:
    procedure = view(
        "To move stock", [V2.signature, SEARCH.signature], "procedure", matched="ref", score=0.0
    )
    found, team = apply_precedence([procedure], lookup("search locations", SEARCH, V2))
    assert sigs(found) == [SEARCH.signature, V2.signature]
    assert set(team.notes) == {SEARCH.key, V2.key} and not procedure.conflicts


def test_a_warning_without_a_prohibition_annotates_the_endpoint() -> None:
    warning = view(
        "PATCH /v2/shipments/{id} resets the pickup window", [UPDATE.signature], "warning"
    )
    found, team = apply_precedence([warning], lookup("update a shipment", UPDATE))
    assert sigs(found) == [UPDATE.signature]
    notes = endpoint_notes(team, CitationRegistry(), found.replacements)
    assert notes[UPDATE.key] == [f"   - **Team warning** [1]: {warning.memory.text}"]


def test_only_endpoints_of_the_asked_api_are_brought_in() -> None:
    decision = view("We still create locations with POST /v1/locations", [V1.signature])
    found, _ = apply_precedence([decision], lookup("create", V2), pool=[V1], api="other")
    assert sigs(found) == [V2.signature]


def test_lead_lists_memories_first_cited_and_flags_stale_refs() -> None:
    stale = view(
        "We book with POST /v1/shipments", ["POST /v1/shipments"], missing=("POST /v1/shipments",)
    )
    cites = CitationRegistry()
    _, team = apply_precedence([stale], lookup("book", UPDATE))
    text = "\n".join(lead_lines(team, cites))
    assert text.startswith("**Team memory**")
    flag = f"`memory:{stale.memory.id}` names `POST /v1/shipments`, which the API no longer has"
    assert flag in text
    assert cites.citations()[0].kind == "memory"
    assert cites.citations()[0].uri == f"memory:{stale.memory.id}"


def test_a_strong_procedure_that_names_endpoints_answers_alone() -> None:
    strong = view("To onboard a carrier", ["POST /v2/carriers"], "procedure",
                  score=PROCEDURE_ANSWER_SCORE + 0.05)
    weak = view("To onboard a carrier", ["POST /v2/carriers"], "procedure", score=0.4)
    bare = view("Ask ops to onboard", [], "procedure", score=0.9)
    decision = view("We onboard carriers on Mondays", [], "decision", score=0.9)
    assert answering_procedure([strong.hit]) == strong.hit
    assert answering_procedure([weak.hit]) is None
    assert answering_procedure([bare.hit]) is None
    assert answering_procedure([strong.hit, decision.hit]) is None


def test_a_forbidden_endpoint_a_guide_answer_would_list_is_recorded_and_avoided() -> None:
    warning = view("Never call DELETE /v2/shipments/{id}", [DELETE.signature], "warning")
    _, team = apply_precedence([warning], lookup("how do I remove freight"), related=[DELETE])
    assert team.avoided == {DELETE.key}
    assert [f.endpoint for f in team.forbidden] == [DELETE]
