"""How project memory reads in an answer: the "Team memory" lead, endpoint notes, stale refs.

Memories are cited like spec items and guide sections, with numbers; their citations have kind
``memory`` and uri ``memory:<id>``. They are cited first, so the team's word comes first.
"""

from __future__ import annotations

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.answer.citations import CitationRegistry
from apiatlas.rag.review.precedence import MemoryView, TeamMemory
from apiatlas.rag.answer.result import AnswerEndpoint, AnswerMemory, AnswerResult


def cite(cites: CitationRegistry, view: MemoryView) -> int:
    """The citation number of a memory."""
    return cites.memory(view.memory.id, f"Team memory ({view.memory.kind})")


def lead_lines(team: TeamMemory, cites: CitationRegistry) -> list[str]:
    """The section that opens the answer: each memory, where it disagrees with the docs, and the
    endpoints the team forbids."""
    if not team.views:
        return []
    lines = ["**Team memory** (your team's memory takes precedence over the docs)", ""]
    for view in team.views:
        n = cite(cites, view)
        lines.append(f"- **{view.memory.kind.capitalize()}** [{n}]: {view.memory.text}")
        lines += [f"  {i}. {step}" for i, step in enumerate(view.memory.steps, 1)]
        lines += [f"  - Memory and docs disagree: {c} [{n}]." for c in view.conflicts]
        lines += [f"  - {stale_note(view, ref)}" for ref in view.missing]
    if team.forbidden:
        lines += ["", "**Forbidden by your team** (not recommended here)", ""]
        for item in team.forbidden:
            e = item.endpoint
            spec = _ref(cites.spec(e.source, e.pointer, e.signature))
            n = cites.memory(item.memory_id)
            use = f"; use `{item.instead[0].signature}` instead" if item.instead else ""
            lines.append(
                f"- `{e.signature}` — {e.summary}{spec}: the docs offer "
                f"it, but your team's memory forbids it [{n}]{use}."
            )
    return [*lines, ""]


def stale_note(view: MemoryView, ref: str) -> str:
    """The flag on a memory that names an endpoint the API no longer has."""
    return f"**Stale memory:** `{view.memory.citation}` names `{ref}`, which the API no longer has."


def endpoint_notes(
    team: TeamMemory, cites: CitationRegistry, replacements: dict[str, EndpointRef]
) -> dict[str, list[str]]:
    """Lines to show under presented endpoints (by key), in place of the docs' own notes."""
    out: dict[str, list[str]] = {}
    for key, notes in team.notes.items():
        lines: list[str] = []
        for note in notes:
            n = cites.memory(note.memory_id)
            if note.kind == "deprecated_used":
                new = f" (replacement: `{note.replacement.signature}`)" if note.replacement else ""
                lines.append(
                    f"   - The docs mark it **deprecated**{new}; your team's memory says to use "
                    f"it [{n}]."
                )
            elif note.kind == "preferred":
                lines.append(f"   - Your team's memory says to use this one [{n}].")
            else:
                lines.append(f"   - **Team warning** [{n}]: {note.text}")
        if not any(n.kind == "deprecated_used" for n in notes) and key in replacements:
            lines.insert(0, f"   - **Deprecated**: use `{replacements[key].signature}` instead.")
        out[key] = lines
    return out


def answer_memories(team: TeamMemory, cites: CitationRegistry) -> list[AnswerMemory]:
    """The structured record of the memories used (``AnswerResult.memories``)."""
    return [
        AnswerMemory(
            id=v.memory.id,
            kind=v.memory.kind,
            text=v.memory.text,
            steps=list(v.memory.steps),
            refs=list(v.memory.refs),
            inferred_refs=list(v.memory.inferred_refs),
            importance=v.memory.importance,
            matched=v.hit.matched,
            score=round(v.hit.score, 4),
            citation=cite(cites, v),
            stances=dict(v.stances),
            conflicts=list(v.conflicts),
            missing_refs=list(v.missing),
        )
        for v in team.views
    ]


def with_team(
    result: AnswerResult, lead: list[str], team: TeamMemory, cites: CitationRegistry
) -> AnswerResult:
    """``result`` led by the memory section, with the memories and their citations recorded."""
    answer = "\n".join([*lead, result.answer]).strip()
    if not result.citations and cites.citations():
        answer += "\n\n**Sources**\n\n" + cites.sources_markdown()
    return result.model_copy(
        update={
            "answer": answer,
            "citations": cites.citations(),
            "memories": answer_memories(team, cites),
        }
    )


def memory_answer(
    question: str, view: MemoryView, named: list[str], *, checked: bool = True
) -> AnswerResult:
    """The answer when a team procedure answers alone: its steps, then the endpoints it names,
    each verified against the graph (a missing one is flagged).

    Args:
        question: The question as asked.
        view: The procedure, with its refs resolved against the graph.
        named: The endpoints it names (``METHOD /path``), in order.
        checked: ``False`` when the graph could not be asked (the endpoints are listed unchecked).
    """
    cites = CitationRegistry()
    n = cite(cites, view)
    lines = [f"**Team memory** — your team's procedure answers this [{n}]:", ""]
    lines += [f"> {view.memory.text}", ""]
    lines += [f"{i}. {step}" for i, step in enumerate(view.memory.steps, 1)]
    endpoints: list[AnswerEndpoint] = []
    status = "checked against the API" if checked else "not checked: the graph is unavailable"
    lines += ["", f"**Endpoints it names** ({status})", ""]
    for ref in named:
        found = view.resolved.get(ref, [])
        if not found:
            endpoints_line = f"- `{ref}`" + ("" if not checked else " — not in the API")
            lines.append(endpoints_line)
            continue
        for e in found:
            c = cites.spec(e.source, e.pointer, e.signature)
            endpoints.append(
                AnswerEndpoint(
                    method=e.method, path=e.path, summary=e.summary, api=e.api,
                    operation_id=e.operation_id, deprecated=e.deprecated, citation=c,
                )
            )
            dep = " (deprecated)" if e.deprecated else ""
            lines.append(f"- `{e.signature}` — {e.summary}{dep}{_ref(c)}")
    if view.missing:
        lines += ["", *(f"> {stale_note(view, ref)}" for ref in view.missing)]
    lines += ["", "**Sources**", "", cites.sources_markdown()]
    team = TeamMemory(views=[view])
    return AnswerResult(
        question=question,
        answer="\n".join(lines).strip(),
        endpoints=endpoints,
        citations=cites.citations(),
        memories=answer_memories(team, cites),
    )


def _ref(n: int | None) -> str:
    return f" [{n}]" if n is not None else ""
