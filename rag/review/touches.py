"""What a memory being written touches: memories it almost repeats, and memories it contradicts.

Told when a memory is written (``apiatlas memory add``, the ``remember`` tool and MCP, Python's
:func:`touches`), never refusing the write: the team
decides whether the new memory supersedes the old one.

- **Near-duplicate**: a memory in force whose text the semantic index finds at least
  :data:`NEAR_DUPLICATE_SCORE` similar.
- **Contradiction**: a memory in force about the same endpoint (parameter names ignored) that
  takes the opposite stance: one forbids what the other says to use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.memory.links import LinkedMemory
from apiatlas.rag.memory.model import Memory
from apiatlas.rag.memory.stance import classify_stances

NEAR_DUPLICATE_SCORE = 0.85
"""Similarity of two memories' indexed texts from which one almost repeats the other
(all-MiniLM-L6-v2). Chosen on the dev memory sets by ``python -m
apiatlas.evals.memory_touches``: the lowest threshold at which every memory flagged is one the
team later superseded with it (the closest thing to a duplicate the sets label)."""
SHOWN_CHARS = 80
"""How much of the other memory's text a message quotes."""

TouchKind = Literal["near_duplicate", "contradiction"]
_VERBS = {"avoid": "forbids", "prefer": "says to use"}


class MemoryTouch(BaseModel):
    """An earlier memory a new one repeats or contradicts.

    Attributes:
        kind: ``near_duplicate`` or ``contradiction``.
        memory_id: The earlier memory.
        text: Its text.
        score: Their similarity (near-duplicates).
        endpoint: The endpoint they disagree about (contradictions).
        theirs: The earlier memory's stance towards it.
        ours: The new memory's stance towards it.
    """

    kind: TouchKind
    memory_id: str
    text: str
    score: float = 0.0
    endpoint: str = ""
    theirs: str = ""
    ours: str = ""

    @property
    def message(self) -> str:
        """One line for a person: what the memory touches and what to do."""
        quoted = self.text if len(self.text) <= SHOWN_CHARS else self.text[: SHOWN_CHARS - 1] + "…"
        if self.kind == "near_duplicate":
            return (
                f'almost the same as {self.memory_id} ("{quoted}"): supersede it? '
                f"`apiatlas memory supersede {self.memory_id} TEXT`"
            )
        return (
            f"contradicts {self.memory_id} about {self.endpoint}: it {_VERBS[self.theirs]} it, "
            f'this one {_VERBS[self.ours]} it ("{quoted}"); supersede the one that no longer '
            "holds"
        )


def touches(team: LinkedMemory, memory: Memory, *, limit: int = 5) -> list[MemoryTouch]:
    """The memories in force in ``team`` that ``memory`` almost repeats or contradicts: call it
    after writing, to tell the team.

    Args:
        team: The project's memory, where ``memory`` was written.
        memory: The memory written.
        limit: Near-duplicates to look for.
    """
    now = team.clock()
    hits = team.recall(
        memory.search_text(), at=now, limit=limit + 1, min_score=NEAR_DUPLICATE_SCORE
    )
    similar = [(hit.memory, hit.score) for hit in hits]
    refs = memory.endpoint_refs
    found = team.graph.resolve_signatures(team.project, refs) if refs else {}
    keys = list(dict.fromkeys(e.key for endpoints in found.values() for e in endpoints))
    about = team.about(keys, at=now) if keys else []
    return find_touches(memory, similar, about)


def find_touches(
    memory: Memory, similar: Sequence[tuple[Memory, float]], about: Sequence[Memory]
) -> list[MemoryTouch]:
    """What ``memory`` touches among memories in force.

    Args:
        memory: The memory written.
        similar: Memories the semantic index found for its text, with their scores.
        about: Memories linked to the endpoints it names.
    """
    mine = {endpoint_key(r): s for r, s in classify_stances(memory).items()}
    skip = {memory.id, memory.supersedes}
    out = [
        MemoryTouch(kind="near_duplicate", memory_id=m.id, text=m.text, score=round(score, 4))
        for m, score in similar
        if m.id not in skip and score >= NEAR_DUPLICATE_SCORE
    ]
    for other in about:
        if other.id in skip:
            continue
        for ref, theirs in classify_stances(other).items():
            ours = mine.get(endpoint_key(ref))
            if {ours, theirs} == {"avoid", "prefer"}:
                out.append(MemoryTouch(
                    kind="contradiction", memory_id=other.id, text=other.text, endpoint=ref,
                    theirs=theirs, ours=ours or "",
                ))  # fmt: skip
                break
    return out
