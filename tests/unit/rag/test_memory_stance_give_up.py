"""A team that gave an endpoint up ("no longer poll", "stopped using", "replaced … with",
"deprecated for us") forbids it, and prefers what it moved to."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from apiatlas.rag.memory.model import Memory, MemoryKind, parse_ref
from apiatlas.rag.memory.stance import classify_stances

NOW = datetime(2025, 3, 1, tzinfo=timezone.utc)
EVENTS = "GET /v2/shipments/{shipment_id}/tracking-events"
HOOKS = "POST /v2/webhooks"
LIST = "GET /v2/locations"
SEARCH = "POST /v2/locations/search"


def memory(text: str, refs: list[str], kind: MemoryKind = "decision") -> Memory:
    return Memory(
        id="mem_test", project="p", kind=kind, text=text,
        refs=[parse_ref(r) for r in refs], created_at=NOW, valid_from=NOW,
    )


@pytest.mark.parametrize(
    ("text", "refs", "avoided", "preferred"),
    [
        (f"We no longer poll {EVENTS} for tracking updates: use a webhook subscribed to "
         f"tracking_event.created instead ({HOOKS}).", [HOOKS, EVENTS], EVENTS, HOOKS),
        (f"We no longer call {LIST}; {SEARCH} is what the sync uses.", [LIST, SEARCH],
         LIST, SEARCH),
        (f"We stopped using {LIST} last spring, {SEARCH} pages by cursor.", [LIST, SEARCH],
         LIST, SEARCH),
        (f"Stop paging through {LIST}. Search with {SEARCH}.", [LIST, SEARCH], LIST, SEARCH),
        (f"We replaced {LIST} with {SEARCH} in the nightly report.", [LIST, SEARCH],
         LIST, SEARCH),
        (f"{LIST} was replaced by {SEARCH} in our ERP sync.", [LIST, SEARCH], LIST, SEARCH),
        (f"{LIST} is deprecated for us; the report calls {SEARCH}.", [LIST, SEARCH],
         LIST, SEARCH),
        (f"We've retired {LIST} in the ERP sync and moved to {SEARCH}.", [LIST, SEARCH],
         LIST, SEARCH),
    ],
)
def test_an_endpoint_the_team_gave_up_is_avoided(
    text: str, refs: list[str], avoided: str, preferred: str
) -> None:
    stances = classify_stances(memory(text, refs))
    assert stances[avoided] == "avoid"
    assert stances[preferred] == "prefer"


def test_a_single_endpoint_deprecated_for_us_is_avoided() -> None:
    stances = classify_stances(memory(f"{LIST} is deprecated for us.", [LIST]))
    assert stances == {LIST: "avoid"}


@pytest.mark.parametrize(
    "text",
    [
        f"We poll {EVENTS} every 15 minutes for shipments not delivered yet.",
        f"Use {EVENTS} to replay a shipment's history.",
        f"The docs say {EVENTS} replaced the old status field; we use it daily.",
    ],
)
def test_using_an_endpoint_is_not_read_as_giving_it_up(text: str) -> None:
    assert classify_stances(memory(text, [EVENTS])) == {EVENTS: "prefer"}
