"""The stance a memory takes towards each endpoint it names, from its kind and wording."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from apiatlas.rag.memory.model import Memory, MemoryKind, parse_ref
from apiatlas.rag.memory.stance import classify_stances, named_endpoints

NOW = datetime(2025, 3, 1, tzinfo=timezone.utc)
DELETE = "DELETE /v2/shipments/{shipment_id}"
CANCEL = "POST /v2/shipments/{shipment_id}/cancel"
V1 = "POST /v1/locations"
V2 = "POST /v2/locations"


def memory(
    text: str, refs: list[str], kind: MemoryKind = "decision", steps: tuple[str, ...] = ()
) -> Memory:
    return Memory(
        id="mem_test", project="p", kind=kind, text=text, steps=list(steps),
        refs=[parse_ref(r) for r in refs], created_at=NOW, valid_from=NOW,
    )


@pytest.mark.parametrize(
    ("text", "kind", "avoided", "preferred"),
    [
        ("never call DELETE /shipments in production; cancel instead", "warning", DELETE, CANCEL),
        ("Don't delete booked shipments, cancel them.", "warning", DELETE, CANCEL),
        ("Use POST /v2/shipments/{id}/cancel instead of DELETE /v2/shipments/{id}.", "decision",
         DELETE, CANCEL),
        ("Cancelling rather than deleting keeps the carrier informed", "fact", DELETE, CANCEL),
        ("DELETE /v2/shipments/{id} is forbidden in production. Cancel them.", "warning",
         DELETE, CANCEL),
        ("We must not use DELETE /v2/shipments/{shipment_id} — cancel instead", "decision",
         DELETE, CANCEL),
        ("Avoid deleting shipments: POST /v2/shipments/{id}/cancel tells the carrier", "warning",
         DELETE, CANCEL),
    ],
)
def test_a_prohibition_avoids_one_endpoint_and_prefers_the_other(
    text: str, kind: MemoryKind, avoided: str, preferred: str
) -> None:
    assert classify_stances(memory(text, [DELETE, CANCEL], kind)) == {
        avoided: "avoid", preferred: "prefer"
    }


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("We create locations with v2, v1 drops the timezone", "decision",
         {V2: "prefer", V1: "neutral"}),
        ("Use POST /v2/locations, not POST /v1/locations", "decision", {V2: "prefer", V1: "avoid"}),
        ("We switched to POST /v2/locations last quarter and stopped using v1", "episode",
         {V2: "prefer", V1: "avoid"}),
        ("Stick with v1 for locations: the ERP sends one address line", "decision",
         {V1: "prefer", V2: "neutral"}),
    ],
)
def test_versions_tell_refs_apart(text: str, kind: MemoryKind, expected: dict[str, str]) -> None:
    assert classify_stances(memory(text, [V2, V1], kind)) == expected


@pytest.mark.parametrize(
    ("text", "kind", "stance"),
    [
        ("We still create locations with POST /v1/locations: our ERP sends one address line.",
         "decision", "prefer"),
        ("Avoid v1 locations entirely", "warning", "avoid"),
        ("POST /v1/locations must never be called from the new services", "warning", "avoid"),
        ("Deleting a location is irreversible, check twice", "warning", "caution"),
        ("The v1 location endpoint returns the address as one line", "fact", "neutral"),
        ("Our integration uses the v1 endpoint for locations", "fact", "prefer"),
        ("We decided not to use the v1 endpoint", "decision", "avoid"),
    ],
)
def test_a_single_ref_takes_the_texts_stance_or_its_kinds(
    text: str, kind: MemoryKind, stance: str
) -> None:
    ref = "DELETE /v2/locations/{location_id}" if "Deleting" in text else V1
    assert classify_stances(memory(text, [ref], kind)) == {ref: stance}


def test_a_procedure_prefers_the_endpoints_its_steps_call_unless_a_step_forbids_one() -> None:
    steps = (
        "Register it with POST /v2/carriers",
        "Verify it with POST /v2/carriers/{carrier_id}/verify",
        "Do not call DELETE /v2/shipments/{id} while testing",
    )
    refs = ["POST /v2/carriers", "POST /v2/carriers/{carrier_id}/verify", DELETE]
    stances = classify_stances(memory("To onboard a carrier", refs, "procedure", steps))
    assert stances == {refs[0]: "prefer", refs[1]: "prefer", DELETE: "avoid"}


def test_resource_refs_take_no_stance() -> None:
    assert classify_stances(memory("Never delete shipments", ["shipments"], "warning")) == {}


def test_named_endpoints_come_from_refs_then_text_and_steps_without_duplicates() -> None:
    found = named_endpoints(
        memory(
            "Book with POST /v2/quotes/{id}/accept.",
            ["POST /v2/quotes"],
            "procedure",
            ("Request a quote: POST /v2/quotes", "Accept it: post /v2/quotes/{quote_id}/accept"),
        )
    )
    assert found == ["POST /v2/quotes", "POST /v2/quotes/{id}/accept"]


def test_a_word_inside_another_written_path_does_not_name_a_ref() -> None:
    emails = "POST /v3/contacts/search/emails"
    text = ("To find contacts by address use POST /v3/contacts/search/emails, "
            "not POST /v3/contacts/search.")
    assert classify_stances(memory(text, [emails])) == {emails: "prefer"}


def test_a_negated_passive_avoids_and_the_other_ref_is_preferred() -> None:
    text = (f"Booked shipments are not removed with {DELETE}. Cancel them with {CANCEL} "
            "and keep the record.")
    assert classify_stances(memory(text, [DELETE, CANCEL])) == {DELETE: "avoid", CANCEL: "prefer"}


def test_a_query_string_after_the_path_still_names_the_endpoint() -> None:
    listing = "GET /v2/shipments"
    text = "The weekly report reads GET /v2/shipments?carrier_id=... page by page; never sleep."
    assert classify_stances(memory(text, [listing], "fact")) == {listing: "neutral"}
