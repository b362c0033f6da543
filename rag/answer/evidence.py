"""The numbered evidence of an answer: what each of its citations says, as text for a model.

The deterministic composer's citations are the evidence, in their numbers: a spec citation of an
endpoint becomes its summary, description, inputs and prerequisites; a spec citation of an
example becomes the example request; a guide citation becomes the passage the composer quoted
(or the section's title when the answer only points at it); a memory citation becomes what the
team recorded. The endpoints the evidence describes (from the knowledge graph, never from a guide
passage's text) are the only ones an answer written from it may name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from langchain_core.documents import Document

from apiatlas.graph.model import EndpointDetail, EndpointRef
from apiatlas.rag.answer.composer import relevant_passages
from apiatlas.rag.answer.result import AnswerExample, AnswerMemory, AnswerResult, Citation
from apiatlas.rag.review.precedence import TeamMemory
from apiatlas.rag.retrieval.lookup import GraphLookup

MAX_ITEM_CHARS = 3000
"""Longest evidence text given to a model (a long passage is cut at a line)."""
MAX_INPUTS = 20
"""Most parameters and body fields listed per endpoint."""
ROLES = {
    "primary": "answers the question",
    "candidate": "may answer the question: apiatlas is not sure which candidate does",
    "prerequisite": "a call to make first",
    "related": "related, ranked lower",
}


@dataclass(frozen=True)
class Evidence:
    """One numbered item: what citation ``[n]`` says.

    Attributes:
        n: The citation number.
        kind: ``spec``, ``doc`` or ``memory``.
        title: What is cited (``POST /v2/locations``, ``Guide > Section``...).
        uri: Where it comes from (``source#pointer``, ``source#anchor``, ``memory:<id>``).
        text: The quoted content.
    """

    n: int
    kind: str
    title: str
    uri: str
    text: str


@dataclass(frozen=True)
class EvidenceSet:
    """The numbered evidence of one answer and the endpoints it describes.

    Attributes:
        items: One item per citation of the answer, in citation order.
        endpoints: ``METHOD /path`` of each endpoint the evidence describes, in order.
    """

    items: list[Evidence] = field(default_factory=list)
    endpoints: list[str] = field(default_factory=list)

    @property
    def numbers(self) -> set[int]:
        """The citation numbers that point at evidence."""
        return {item.n for item in self.items}


def gather_evidence(
    base: AnswerResult,
    *,
    lookup: GraphLookup | None = None,
    details: Mapping[str, EndpointDetail] | None = None,
    documents: Sequence[Document] = (),
    team: TeamMemory | None = None,
) -> EvidenceSet:
    """The evidence behind ``base``, the deterministic answer, numbered as its citations.

    Args:
        base: The deterministic composer's answer (its citations are the evidence).
        lookup: What the graph found (the one the answer was composed from).
        details: Endpoint details by key.
        documents: The vector hits the answer was composed from (guide chunks).
        team: The project memories that lead the answer.
    """
    details = details or {}
    refs = _endpoint_refs(lookup, details, team)
    by_uri = {f"{r.source}#{r.pointer}": r for r in refs.values() if r.source}
    passages = _passages(lookup, documents)
    examples = {e.citation: e for e in base.examples if e.citation is not None}
    memories = {m.citation: m for m in base.memories if m.citation is not None}
    items: list[Evidence] = []
    for c in base.citations:
        if c.kind == "memory" and c.n in memories:
            text = _memory_text(memories[c.n])
        elif c.kind == "doc":
            title_only = f"(Only the title of this section: {c.title})"
            text = passages.get((c.source, c.pointer)) or title_only
        elif c.n in examples:
            text = _example_text(examples[c.n])
        elif c.uri in by_uri:
            text = _endpoint_text(by_uri[c.uri], base, lookup, details, team)
        else:
            text = c.title
        items.append(Evidence(n=c.n, kind=c.kind, title=c.title, uri=c.uri, text=_cut(text)))
    named = [f"{e.method} {e.path}" for e in base.endpoints]
    named += [r.signature for r in refs.values() if _cited(r, base.citations)]
    if lookup is not None:
        named += [r.signature for r in lookup.replacements.values()]
    return EvidenceSet(items=items, endpoints=list(dict.fromkeys(named)))


def _endpoint_refs(
    lookup: GraphLookup | None,
    details: Mapping[str, EndpointDetail],
    team: TeamMemory | None,
) -> dict[str, EndpointRef]:
    """Every graph endpoint the answer may cite, by key."""
    refs: list[EndpointRef] = [d.endpoint for d in details.values()]
    if lookup is not None:
        refs += lookup.primary + lookup.related + [d.provider for d in lookup.prerequisites]
        refs += list(lookup.replacements.values())
    if team is not None:
        for forbidden in team.forbidden:
            refs += [forbidden.endpoint, *forbidden.instead]
        refs += [r for v in team.views for found in v.resolved.values() for r in found]
    out: dict[str, EndpointRef] = {}
    for ref in refs:
        out.setdefault(ref.key, ref)
    return out


def _cited(ref: EndpointRef, citations: Iterable[Citation]) -> bool:
    return any(c.kind == "spec" and c.uri == f"{ref.source}#{ref.pointer}" for c in citations)


def _passages(
    lookup: GraphLookup | None, documents: Sequence[Document]
) -> dict[tuple[str, str], str]:
    """Guide text by (source, anchor): the joined passages the composer quotes, else the
    section's first chunk."""
    out: dict[tuple[str, str], str] = {}
    joined = relevant_passages(lookup, documents) if lookup is not None else []
    for doc in [*joined, *documents]:
        if doc.metadata.get("kind") != "doc":
            continue
        key = (str(doc.metadata.get("source", "")), str(doc.metadata.get("anchor", "") or ""))
        out.setdefault(key, doc.page_content.strip())
    return out


def _endpoint_text(
    ref: EndpointRef,
    base: AnswerResult,
    lookup: GraphLookup | None,
    details: Mapping[str, EndpointDetail],
    team: TeamMemory | None,
) -> str:
    detail = details.get(ref.key)
    ep = detail.endpoint if detail is not None else ref
    lines = [f"Endpoint: {ep.signature}" + (f" (API: {ep.api})" if ep.api else "")]
    if ep.summary:
        lines.append(f"Summary: {ep.summary}")
    if ep.operation_id:
        lines.append(f"Operation id: {ep.operation_id}")
    roles = [e.role for e in base.endpoints if (e.method, e.path) == (ep.method, ep.path)]
    role = roles[0] if roles else None
    if role:
        lines.append(f"In this answer: {ROLES[role]}")
    if ep.deprecated:
        new = lookup.replacements.get(ep.key) if lookup is not None else None
        lines.append(f"Deprecated: use {new.signature} instead." if new else "Deprecated.")
    if detail is not None:
        lines += _detail_lines(detail)
    if lookup is not None:
        lines += [
            f"Gives `{d.parameter}`, which {d.endpoint.signature} needs: call it first."
            for d in lookup.prerequisites
            if d.provider.key == ep.key
        ]
        lines += [
            f"Finds `{d.parameter}` from the name or value the question gives, which "
            f"{d.endpoint.signature} needs: call it first."
            for d in lookup.lookups
            if d.provider.key == ep.key
        ]
    if team is not None:
        for f in team.forbidden:
            if f.endpoint.key == ep.key:
                instead = f" Use {f.instead[0].signature} instead." if f.instead else ""
                lines.append(f"The team's memory forbids it.{instead}")
    for ex in base.examples:
        if ex.citation is None and ex.endpoint == ep.signature:
            lines.append(_example_text(ex))
    return "\n".join(lines)


def _detail_lines(detail: EndpointDetail) -> list[str]:
    lines: list[str] = []
    if detail.description:
        lines.append(f"Description: {detail.description.strip()}")
    params = [
        f"- `{p.name}` ({p.location}{', ' + p.type if p.type else ''}"
        f"{', required' if p.required else ''}){': ' + p.description if p.description else ''}"
        for p in detail.parameters[:MAX_INPUTS]
    ]
    if params:
        lines += ["Parameters:", *params]
    fields = [
        f"- `{f.name}`{' (' + f.type + ')' if f.type else ''}{' required' if f.required else ''}"
        f"{': ' + f.description if f.description else ''}"
        for f in sorted(detail.request_fields, key=lambda f: not f.required)[:MAX_INPUTS]
    ]
    if fields:
        lines += ["Request body fields:", *fields]
    if detail.security:
        lines.append("Authentication: " + ", ".join(detail.security))
    return lines


def _example_text(example: AnswerExample) -> str:
    origin = "from the spec" if example.origin == "spec" else "built from its required inputs"
    return (
        f"Example request for {example.endpoint} ({origin}):\n"
        f"```{example.language}\n{example.content}\n```"
    )


def _memory_text(memory: AnswerMemory) -> str:
    lines = [f"Team memory ({memory.kind}, importance {memory.importance}): {memory.text}"]
    lines += [f"{i}. {step}" for i, step in enumerate(memory.steps, 1)]
    lines += [f"It disagrees with the docs: {c}" for c in memory.conflicts]
    lines += [
        f"The team's stance on {ref}: {stance}"
        for ref, stance in memory.stances.items()
        if stance != "neutral"
    ]
    lines += [f"It names {ref}, which the API no longer has." for ref in memory.missing_refs]
    return "\n".join(lines)


def _cut(text: str) -> str:
    if len(text) <= MAX_ITEM_CHARS:
        return text
    head = text[:MAX_ITEM_CHARS]
    return re.sub(r"\n[^\n]*$", "", head) + "\n…"
