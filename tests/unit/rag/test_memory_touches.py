"""What a memory being written touches: near-duplicates by score, contradictions by stance."""

from __future__ import annotations

from datetime import datetime, timezone

from apiatlas.rag.memory.model import Memory, MemoryKind
from apiatlas.rag.review.touches import NEAR_DUPLICATE_SCORE, find_touches

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
CANCEL = "POST /v2/shipments/{shipment_id}/cancel"


def memory(key: str, text: str, kind: MemoryKind = "decision", refs: tuple[str, ...] = (),
           supersedes: str | None = None) -> Memory:
    return Memory(id=f"mem_{key:0>12}", project="p", kind=kind, text=text, refs=list(refs),
                  created_at=NOW, valid_from=NOW, supersedes=supersedes)


def test_a_memory_close_enough_is_a_near_duplicate_and_one_below_is_not() -> None:
    new = memory("3", "Book shipments with POST /v2/shipments.")
    close, far = memory("1", "Book shipments via POST /v2/shipments."), memory("2", "Quotes.")
    found = find_touches(new, [(close, NEAR_DUPLICATE_SCORE), (far, NEAR_DUPLICATE_SCORE - 0.01),
                               (new, 1.0)], [])
    assert [(t.kind, t.memory_id) for t in found] == [("near_duplicate", close.id)]
    assert found[0].message.startswith(f'almost the same as {close.id} ("Book shipments via')


def test_opposite_stances_on_one_endpoint_contradict_whatever_its_parameter_names() -> None:
    uses = memory("1", "We cancel booked shipments with POST /v2/shipments/{id}/cancel.",
                  refs=("POST /v2/shipments/{id}/cancel",))
    cautions = memory("2", f"Calls to {CANCEL} are slow on Mondays.", kind="episode",
                      refs=(CANCEL,))
    new = memory("3", f"Never call {CANCEL} from the nightly jobs.", kind="warning",
                 refs=(CANCEL,))
    found = find_touches(new, [], [uses, cautions, new])
    assert [(t.kind, t.memory_id, t.theirs, t.ours) for t in found] == [
        ("contradiction", uses.id, "prefer", "avoid")
    ]
    assert "it says to use it, this one forbids it" in found[0].message


def test_the_memory_it_supersedes_is_neither() -> None:
    old = memory("1", f"Never call {CANCEL} from the nightly jobs.", kind="warning",
                 refs=(CANCEL,))
    new = memory("2", f"We cancel booked shipments with {CANCEL}.", refs=(CANCEL,),
                 supersedes=old.id)
    assert find_touches(new, [(old, 0.99)], [old]) == []
