"""The deterministic composer: graph lookup + guide passages -> a cited Markdown answer.

Three shapes of answer: endpoints (with required inputs, an example request, prerequisite calls
and a guide passage), a guide answer (how-to questions the guides answer, with the endpoints the
cited sections describe), or an abstention that names the closest existing things. Only endpoints
that exist in the knowledge graph are ever presented. Relevant project memories lead any of them
(see :mod:`apiatlas.rag.answer.team`).

Each answer carries its outcome (:func:`with_outcome`): an endpoint answer below the confidence
threshold says plainly that it is not sure, and presents candidates, none of them primary, with
what tells them apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from langchain_core.documents import Document

from apiatlas.graph.model import Dependency, EndpointDetail, EndpointRef
from apiatlas.graph.words import singular, split_words
from apiatlas.rag.answer.citations import CitationRegistry
from apiatlas.rag.answer.examples import example_for
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.answer.team import endpoint_notes, lead_lines, with_team
from apiatlas.rag.review.precedence import TeamMemory
from apiatlas.rag.answer.result import AnswerEndpoint, AnswerExample, AnswerResult

MAX_EXAMPLES = 2
MAX_FIELDS = 8
PASSAGE_CHARS = 600
# A how-to answered from the guides shows the whole passage: the steps are the answer.
GUIDE_PASSAGE_CHARS = 1500
ENDPOINT_PASSAGES = 1  # guide passages quoted under an endpoint answer
GUIDE_PASSAGES = 2  # guide passages quoted in a guide (how-to) answer
PROVIDERS_SHOWN = 2  # "Call these first": providers per needed id (the first, one alternative)
GUIDE_LINKS = 2  # "Guides": sections linked under an endpoint answer
CODE_OVERRUN = 2  # a code block left open by a passage's cut may run to this many times the cut
TEAM_CONFIDENCE = 1.0
"""The confidence of an answer a team procedure gives alone: the team's own word, which wins
over the docs by the product's rule."""


def compose_answer(
    question: str,
    *,
    lookup: GraphLookup,
    details: Mapping[str, EndpointDetail],
    documents: Sequence[Document] = (),
    related: Sequence[EndpointRef] = (),
    team: TeamMemory | None = None,
    confidence: float = 1.0,
    min_confidence: float = 0.0,
) -> AnswerResult:
    """Write the answer for ``question``.

    Args:
        question: The question as asked.
        lookup: The knowledge-graph lookup (already made to follow ``team``'s memory).
        details: Endpoint details by key, for primary and prerequisite endpoints.
        documents: Vector hits (guide chunks ``kind="doc"``; others are ignored).
        related: Graph endpoints described by the guide sections found (for how-to answers).
        team: Project memories relevant to the question: they lead the answer, cited first,
            and their notes replace the docs' own under the endpoints they concern.
        confidence: The ranking's confidence in its first endpoint.
        min_confidence: The lowest confidence of an ``answer``; below it, ``unsure``.
    """
    cites = CitationRegistry()
    sure = _Sureness(confidence, confidence >= min_confidence)
    if team is None or not team.views:
        result = _compose_docs(question, lookup, details, documents, related, cites, {}, sure)
        return with_outcome(result, confidence, min_confidence)
    # Memories are cited before anything else: the team's word comes first.
    lead = lead_lines(team, cites)
    notes = endpoint_notes(team, cites, lookup.replacements)
    result = _compose_docs(question, lookup, details, documents, related, cites, notes, sure)
    return with_outcome(with_team(result, lead, team, cites), confidence, min_confidence)


def with_outcome(result: AnswerResult, confidence: float, min_confidence: float
                 ) -> AnswerResult:
    """``result`` with its confidence and outcome: ``none`` for an abstention, ``answer`` when
    it presents a primary endpoint at ``min_confidence`` or above, else ``unsure``."""
    primary = any(e.role == "primary" for e in result.endpoints)
    if result.abstained:
        outcome = "none"
    elif primary and confidence >= min_confidence:
        outcome = "answer"
    else:
        outcome = "unsure"
    return result.model_copy(update={"confidence": round(min(max(confidence, 0.0), 1.0), 4),
                                     "outcome": outcome})


class _Sureness(NamedTuple):
    confidence: float
    sure: bool


def _compose_docs(
    question: str,
    lookup: GraphLookup,
    details: Mapping[str, EndpointDetail],
    documents: Sequence[Document],
    related: Sequence[EndpointRef],
    cites: CitationRegistry,
    notes: Mapping[str, list[str]],
    sure: _Sureness,
) -> AnswerResult:
    passages = relevant_passages(lookup, documents)
    if lookup.primary:
        return _endpoint_answer(question, lookup, details, passages, cites, notes, sure)
    intent = lookup.intent
    asks_missing_thing = bool(lookup.unmatched_terms) and any(k != "action" for k in intent.kinds)
    if passages and not asks_missing_thing:
        return _guide_answer(question, lookup, passages, related, cites, sure)
    return _abstain(question, lookup)


def relevant_passages(lookup: GraphLookup, documents: Sequence[Document]) -> list[Document]:
    """Guide passages that mention a resource term of the question (else a keyword).

    One passage per section, in retrieval order: chunks of the same section are joined in their
    order, so steps split across chunks read as one passage under one citation.
    """
    intent = lookup.intent
    terms = [_words(t) for t in intent.resource_terms] or [
        _words(w) for w in intent.keywords if w not in intent.verbs
    ]
    sections: dict[tuple[str, str], list[Document]] = {}
    for doc in documents:
        if doc.metadata.get("kind") != "doc":
            continue
        words = _words(f"{doc.page_content} {_section_title(doc)}")
        if _doc_id(doc) in sections or any(t and t <= words for t in terms):
            sections.setdefault(_doc_id(doc), []).append(doc)
    return [_join_chunks(chunks) for chunks in sections.values()]


def _join_chunks(chunks: list[Document]) -> Document:
    ordered = sorted(chunks, key=lambda d: int(d.metadata.get("chunk", 0) or 0))
    title = _section_title(ordered[0])
    text = ""
    for doc in ordered:
        part = doc.page_content.strip()
        if part.startswith(title):
            part = part[len(title) :].lstrip()  # chunks repeat their heading trail for the embedder
        text = _append_overlapping(text, part)
    return Document(page_content=text, metadata=dict(ordered[0].metadata), id=ordered[0].id)


def _append_overlapping(text: str, part: str) -> str:
    """``text + part`` without the overlap the splitter repeats at the start of ``part``."""
    for size in range(min(len(text), len(part)), 0, -1):
        if text.endswith(part[:size]):
            return text + part[size:]
    return f"{text}\n\n{part}" if text else part


def _endpoint_answer(
    question: str,
    lookup: GraphLookup,
    details: Mapping[str, EndpointDetail],
    passages: list[Document],
    cites: CitationRegistry,
    notes: Mapping[str, list[str]],
    sure: _Sureness,
) -> AnswerResult:
    endpoints: list[AnswerEndpoint] = []
    apis = ", ".join(sorted({p.api for p in lookup.primary}))
    if sure.sure:
        lines = [f"**Endpoints** ({apis}; confidence {sure.confidence:.2f})", ""]
    else:
        lines = [unsure_lead(sure.confidence), "", f"**Candidates** ({apis})", ""]
    # The same endpoints in the same order either way: the outcome changes the wording and the
    # roles, never the ranking.
    tell_apart = {} if sure.sure else distinctions([*lookup.primary, *lookup.related])
    for i, ref in enumerate(lookup.primary, 1):
        n = cites.spec(ref.source, ref.pointer, ref.signature)
        endpoints.append(_answer_endpoint(ref, "primary" if sure.sure else "candidate", n))
        what = ref.summary or ref.operation_id
        lines.append(f"{i}. `{ref.signature}` — {what}{tell_apart.get(ref.key, '')}{_ref(n)}")
        for find in (d for d in lookup.lookups if d.provider.key == ref.key):
            lines.append(
                f"   - Call it first to find the `{find.parameter}` that "
                f"`{find.endpoint.signature}` needs from the name or value you have."
            )
        if ref.key in notes:
            lines += notes[ref.key]  # the team's memory, cited, in place of the docs' note
        elif ref.deprecated:
            lines.append(f"   - {_deprecation(ref, lookup)}")
        detail = details.get(ref.key)
        if detail is not None:
            lines += _inputs(detail)
    lines += _prerequisites(lookup.prerequisites, endpoints, cites)
    lines += _related(lookup, endpoints, cites)
    examples = _examples(lookup, details, cites)
    for ex in examples:
        origin = (
            f"from the spec{_ref(ex.citation)}"
            if ex.origin == "spec"
            else "synthesised from the required fields"
        )
        lines += ["", f"**Example request** — `{ex.endpoint}`, {origin}", ""]
        lines += ["```bash", ex.content, "```"]
    lines += _guide_lines(_passages_for(lookup, details, passages)[:ENDPOINT_PASSAGES], cites)
    lines += _see_also(lookup, details, cites)
    return _result(question, lines, cites, endpoints=endpoints, examples=examples)


def unsure_lead(confidence: float) -> str:
    """The line an ``unsure`` answer starts with."""
    return (f"**Not sure.** No endpoint here is clearly the one for this question (confidence "
            f"{confidence:.2f}): compare what each does before calling one.")


def distinctions(refs: Sequence[EndpointRef]) -> dict[str, str]:
    """Endpoint key -> what tells it apart from the other candidates: its kind of operation
    and its resource, each only where the candidates differ in it (``" (create, location)"``)."""
    kinds = {r.kind for r in refs}
    resources = {r.resource for r in refs}
    out: dict[str, str] = {}
    for ref in refs:
        parts = [ref.kind] if len(kinds) > 1 and ref.kind else []
        if len(resources) > 1 and ref.resource:
            parts.append(ref.resource.rsplit("/", 1)[-1].replace("_", " "))
        if parts:
            out[ref.key] = f" ({', '.join(parts)})"
    return out


def _guide_answer(
    question: str,
    lookup: GraphLookup,
    passages: list[Document],
    related: Sequence[EndpointRef],
    cites: CitationRegistry,
    sure: _Sureness,
) -> AnswerResult:
    lines = ["The guides cover this:"]
    lines += _guide_lines(passages[:GUIDE_PASSAGES], cites, limit=GUIDE_PASSAGE_CHARS)
    endpoints: list[AnswerEndpoint] = []
    if related:
        lines += ["", "**Endpoints these sections describe**", ""]
        for i, ref in enumerate(related, 1):
            n = cites.spec(ref.source, ref.pointer, ref.signature)
            endpoints.append(_answer_endpoint(ref, "primary" if sure.sure else "candidate", n))
            dep = " (deprecated)" if ref.deprecated else ""
            lines.append(f"{i}. `{ref.signature}` — {ref.summary}{dep}{_ref(n)}")
    return _result(question, lines, cites, endpoints=endpoints)


def _abstain(question: str, lookup: GraphLookup) -> AnswerResult:
    intent = lookup.intent
    thing = (lookup.unmatched_terms or intent.resource_terms or [question.strip().rstrip("?")])[0]
    # "action" names no verb: "an endpoint to action X" would not be English.
    verb = intent.kinds[0] if intent.kinds and intent.kinds[0] != "action" else ""
    what = f"to {verb} “{thing}”" if verb else f"for “{thing}”"
    where = ", ".join(lookup.apis) or "this project"
    alternatives = [f"{a.signature} — {a.summary}".rstrip(" —") for a in lookup.alternatives]
    lines = [f"I could not find an endpoint {what} in {where}."]
    if alternatives:
        lines += ["", "The closest existing things are:", ""]
        lines += [f"- `{a.signature}` — {a.summary}".rstrip(" —") for a in lookup.alternatives]
    else:
        lines.append("Nothing in the knowledge graph or the guides comes close.")
    return AnswerResult(
        question=question, answer="\n".join(lines), abstained=True, alternatives=alternatives
    )


def _result(
    question: str,
    lines: list[str],
    cites: CitationRegistry,
    *,
    endpoints: list[AnswerEndpoint],
    examples: list[AnswerExample] | None = None,
) -> AnswerResult:
    if cites.citations():
        lines += ["", "**Sources**", "", cites.sources_markdown()]
    return AnswerResult(
        question=question,
        answer="\n".join(lines).strip(),
        endpoints=endpoints,
        examples=examples or [],
        citations=cites.citations(),
    )


def _answer_endpoint(ref: EndpointRef, role: str, n: int | None) -> AnswerEndpoint:
    return AnswerEndpoint(
        method=ref.method,
        path=ref.path,
        summary=ref.summary,
        api=ref.api,
        operation_id=ref.operation_id,
        deprecated=ref.deprecated,
        role=role,  # type: ignore[arg-type]
        citation=n,
    )


def _inputs(detail: EndpointDetail) -> list[str]:
    lines = []
    params = [
        f"`{p.name}` ({p.location}{', ' + p.type if p.type else ''})"
        for p in detail.parameters
        if p.required
    ]
    if params:
        lines.append("   - Required parameters: " + ", ".join(params))
    fields = [
        f"`{f.name}` ({f.type})" if f.type else f"`{f.name}`"
        for f in detail.request_fields
        if f.required
    ]
    if fields:
        lines.append("   - Required body fields: " + _listed(fields))
    within: dict[str, list[str]] = {}
    for f in detail.request_fields:
        if f.required_if and not f.required and f.name.startswith(f.required_if):
            inner = f.name[len(f.required_if):].removeprefix("[]").removeprefix(".")
            within.setdefault(f.required_if, []).append(f"`{inner}`")
    for parent, names in list(within.items())[:MAX_FIELDS]:
        lines.append(f"   - If you send `{parent}`: " + _listed(names))
    return lines


def _listed(names: list[str]) -> str:
    more = f" and {len(names) - MAX_FIELDS} more" if len(names) > MAX_FIELDS else ""
    return ", ".join(names[:MAX_FIELDS]) + more


def _prerequisites(
    deps: list[Dependency], endpoints: list[AnswerEndpoint], cites: CitationRegistry
) -> list[str]:
    """One line per needed parameter: the first provider, with up to one alternative."""
    if not deps:
        return []
    by_param: dict[tuple[str, str], list[Dependency]] = {}
    for dep in deps:
        by_param.setdefault((dep.endpoint.key, dep.parameter), []).append(dep)
    lines = ["", "**Call these first**", ""]
    presented = {(e.method, e.path) for e in endpoints}
    for (_, param), group in by_param.items():
        shown = []
        for dep in group[:PROVIDERS_SHOWN]:
            p = dep.provider
            n = cites.spec(p.source, p.pointer, p.signature)
            label = f"`{p.signature}` ({p.summary})" if p.summary else f"`{p.signature}`"
            shown.append(label + _ref(n))
            if (p.method, p.path) not in presented:
                presented.add((p.method, p.path))
                endpoints.append(_answer_endpoint(p, "prerequisite", n))
        lines.append(
            f"- Call {' or '.join(shown)} first to get `{param}`, "
            f"which `{group[0].endpoint.signature}` needs."
        )
    return lines


def _related(
    lookup: GraphLookup, endpoints: list[AnswerEndpoint], cites: CitationRegistry
) -> list[str]:
    """Endpoints ranked near the answer that the ranker is not confident in, not yet shown; a
    deprecated one names its replacement, as a primary one does."""
    presented = {(e.method, e.path) for e in endpoints}
    fresh = [r for r in lookup.related if (r.method, r.path) not in presented]
    if not fresh:
        return []
    lines = ["", "**Related**", ""]
    for ref in fresh:
        n = cites.spec(ref.source, ref.pointer, ref.signature)
        endpoints.append(_answer_endpoint(ref, "related", n))
        note = f" {_deprecation(ref, lookup)}" if ref.deprecated else ""
        lines.append(f"- `{ref.signature}` — {ref.summary or ref.operation_id}{_ref(n)}{note}")
    return lines


def _deprecation(ref: EndpointRef, lookup: GraphLookup) -> str:
    """The note on a deprecated endpoint: its live replacement, when the API has one."""
    new = lookup.replacements.get(ref.key)
    return f"**Deprecated**: use `{new.signature}` instead." if new else "**Deprecated.**"


def _examples(
    lookup: GraphLookup, details: Mapping[str, EndpointDetail], cites: CitationRegistry
) -> list[AnswerExample]:
    live = [p for p in lookup.primary if not p.deprecated] or lookup.primary
    return [example_for(details[p.key], cites) for p in live if p.key in details][:MAX_EXAMPLES]


def _passages_for(
    lookup: GraphLookup, details: Mapping[str, EndpointDetail], passages: list[Document]
) -> list[Document]:
    """Passages from sections that describe the first endpoint come first."""
    first = details.get(lookup.primary[0].key) if lookup.primary else None
    linked = {(d.source, d.anchor) for d in first.docs} if first else set()
    return sorted(passages, key=lambda d: (_doc_id(d) not in linked))


def _guide_lines(
    passages: Sequence[Document], cites: CitationRegistry, *, limit: int = PASSAGE_CHARS
) -> list[str]:
    lines: list[str] = []
    for doc in passages:
        source, anchor = _doc_id(doc)
        title = _section_title(doc)
        n = cites.doc(source, anchor, title)
        lines += ["", f"**From the guides** — {title}{_ref(n)}", ""]
        lines += _quote(doc.page_content, limit)
    return lines


def _see_also(
    lookup: GraphLookup, details: Mapping[str, EndpointDetail], cites: CitationRegistry
) -> list[str]:
    first = details.get(lookup.primary[0].key) if lookup.primary else None
    if first is None or not first.docs:
        return []
    lines = ["", "**Guides**", ""]
    # Sections about the endpoint's own resource first, then the generic ones that mention it.
    own = _words(first.endpoint.resource.rsplit("/", 1)[-1])
    sections = sorted(first.docs, key=lambda d: not (own & _words(" ".join(d.section_path))))
    for section in sections[:GUIDE_LINKS]:
        title = " > ".join(section.section_path) or section.title
        lines.append(f"- {title}{_ref(cites.doc(section.source, section.anchor, title))}")
    return lines


def _doc_id(doc: Document) -> tuple[str, str]:
    return str(doc.metadata.get("source", "")), str(doc.metadata.get("anchor", "") or "")


def _section_title(doc: Document) -> str:
    section = doc.metadata.get("section") or ""
    if isinstance(section, list):
        section = " > ".join(str(s) for s in section)
    title = str(doc.metadata.get("title") or "")
    if section and title and not str(section).startswith(title):
        return f"{title} > {section}"
    return str(section or title or doc.metadata.get("source", ""))


def _quote(text: str, limit: int) -> list[str]:
    """The passage as a Markdown block quote, keeping its lines, lists and code blocks.

    Cut at a line boundary near ``limit``; a code block that the cut leaves open is closed.
    """
    kept: list[str] = []
    size = 0
    in_code = False
    source_lines = [line.rstrip() for line in text.strip().splitlines()]
    for line in source_lines:
        if size + len(line) > limit and kept and not in_code:
            kept.append("…")
            break
        if size + len(line) > CODE_OVERRUN * limit:  # a very long code block: stop in it
            kept.append("…")
            break
        kept.append(line)
        size += len(line) + 1
        if line.lstrip().startswith("```"):
            in_code = not in_code
    if in_code:
        kept.append("```")
    return ["> " + line if line else ">" for line in kept]


def _ref(n: int | None) -> str:
    return f" [{n}]" if n is not None else ""


def _words(text: str) -> set[str]:
    return {singular(w) for w in split_words(text)}
