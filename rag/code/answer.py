"""Answers from the team's code: where it calls the endpoints an answer presents, and the answers
to questions about the code itself (deprecated endpoints it calls, calls the spec lacks, what one
file or folder calls). Each site is cited by file and line."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

from apiatlas.rag.answer.citations import sources_markdown
from apiatlas.rag.answer.result import AnswerEndpoint, AnswerResult, Citation
from apiatlas.rag.code.sites import CodeSite
from apiatlas.rag.question.code import CodeAsk

SITES_SHOWN = 8
"""Sites listed per endpoint (the code report lists every one)."""
_SOURCES = "\n\n**Sources**\n\n"
_PRESENTED = ("primary", "candidate")


def cite(citations: list[Citation], site: CodeSite) -> int:
    """The number of ``site``'s citation (kind ``code``: file and line), added when new."""
    uri = f"{site.source}#L{site.line}"
    for c in citations:
        if c.uri == uri:
            return c.n
    title = f"{site.where} in {site.function}" if site.function else site.where
    citations.append(Citation(n=len(citations) + 1, kind="code", source=site.source, uri=uri,
                              pointer=f"L{site.line}", title=title))  # fmt: skip
    return citations[-1].n


def _place(site: CodeSite, citations: list[Citation]) -> str:
    where = f"`{site.where}`" + (f" in `{site.function}`" if site.function else "")
    return f"{where} [{cite(citations, site)}]"


def _places(sites: list[CodeSite], citations: list[Citation]) -> str:
    shown = ", ".join(_place(s, citations) for s in sites[:SITES_SHOWN])
    more = len(sites) - SITES_SHOWN
    return shown + (f" and {more} more (`apiatlas code report`)" if more > 0 else "")


def with_sites(result: AnswerResult, sites: list[CodeSite], ask: CodeAsk | None) -> AnswerResult:
    """``result`` with where the team's code calls the endpoints it presents (first when the
    question asked where); unchanged when the code calls none of them and nobody asked."""
    presented = [e for e in result.endpoints if e.role in _PRESENTED]
    by_endpoint: dict[tuple[str, str], list[CodeSite]] = defaultdict(list)
    for site in sites:
        if site.endpoint is not None:
            by_endpoint[(site.api, site.endpoint)].append(site)
    asked = ask is not None and ask.kind == "where"
    citations = list(result.citations)
    lines = []
    for endpoint in presented:
        called = by_endpoint.get((endpoint.api, f"{endpoint.method} {endpoint.path}"), [])
        name = f"`{endpoint.method} {endpoint.path}`"
        if called:
            lines.append(f"- {name}: {_places(called, citations)}")
        elif asked:
            lines.append(f"- {name}: your code does not call it.")
    if not lines:
        return result
    section = "**In your code**\n\n" + "\n".join(lines)
    body, _, _ = result.answer.partition(_SOURCES)
    text = f"{section}\n\n{body}" if asked else f"{body}\n\n{section}"
    answer = text + _SOURCES + sources_markdown(citations) if citations else text
    return result.model_copy(update={"answer": answer, "citations": citations})


def code_answer(question: str, ask: CodeAsk, sites: list[CodeSite]) -> AnswerResult:
    """The answer to a question about the code itself: the ``deprecated`` endpoints it calls
    (and what replaces them), its calls the spec lacks (``unknown``), or what a ``file`` or
    folder calls. ``outcome`` is ``none`` when the code has no such call."""
    citations: list[Citation] = []
    endpoints: list[AnswerEndpoint] = []
    if ask.kind == "deprecated":
        chosen = [s for s in sites if s.deprecated]
        lines = _deprecated(chosen, citations, endpoints)
        empty = (f"Your code calls no endpoint its specs mark deprecated ({len(sites)} code "
                 "sites checked).")  # fmt: skip
        lead = "Your code calls these deprecated endpoints:"
    elif ask.kind == "unknown":
        chosen = [s for s in sites if s.endpoint is None]
        lines = [f"- `{s.sent}` ({s.api}): {_place(s, citations)}" for s in chosen]
        empty = (f"Every call your code makes to an ingested API is in its spec ({len(sites)} "
                 "code sites checked).")  # fmt: skip
        lead = "These calls reach an ingested API but no endpoint in its spec:"
    else:
        target = ask.target or ""
        chosen = [s for s in sites if s.file == target or s.file.startswith(target + "/")]
        lines = _by_endpoint(chosen, citations, endpoints)
        empty = f"`{target}` calls no endpoint of an ingested API."
        lead = f"`{target}` calls:"
    if not chosen:
        return AnswerResult(question=question, answer=empty, outcome="none", abstained=False)
    text = "\n".join([lead, "", *lines])
    return AnswerResult(
        question=question, answer=text + _SOURCES + sources_markdown(citations), outcome="answer",
        confidence=round(min(fmean(s.confidence for s in chosen), 1.0), 3),
        endpoints=endpoints, citations=citations,
    )  # fmt: skip


def _deprecated(chosen: list[CodeSite], citations: list[Citation],
                endpoints: list[AnswerEndpoint]) -> list[str]:  # fmt: skip
    lines = []
    for (api, endpoint), group in _grouped(chosen).items():
        method, path = endpoint.split(" ", 1)
        endpoints.append(AnswerEndpoint(method=method, path=path, api=api, deprecated=True,
                                        role="related"))  # fmt: skip
        instead = group[0].replacement
        for replacement in instead:
            new_method, new_path = replacement.split(" ", 1)
            endpoints.append(AnswerEndpoint(method=new_method, path=new_path, api=api))
        use = f"; use {', '.join(f'`{r}`' for r in instead)} instead" if instead else ""
        lines.append(f"- `{endpoint}` ({api}{use}): {_places(group, citations)}")
    return lines


def _by_endpoint(chosen: list[CodeSite], citations: list[Citation],
                 endpoints: list[AnswerEndpoint]) -> list[str]:  # fmt: skip
    lines = []
    for (api, endpoint), group in _grouped([s for s in chosen if s.endpoint]).items():
        method, path = endpoint.split(" ", 1)
        endpoints.append(AnswerEndpoint(method=method, path=path, api=api,
                                        deprecated=group[0].deprecated))  # fmt: skip
        note = " (deprecated)" if group[0].deprecated else ""
        lines.append(f"- `{endpoint}`{note} ({api}): {_places(group, citations)}")
    unknown = [s for s in chosen if s.endpoint is None]
    lines += [f"- `{s.sent}` ({s.api}, not in its spec): {_place(s, citations)}" for s in unknown]
    return lines


def _grouped(sites: list[CodeSite]) -> dict[tuple[str, str], list[CodeSite]]:
    found: dict[tuple[str, str], list[CodeSite]] = defaultdict(list)
    for site in sites:
        found[(site.api, site.endpoint or "")].append(site)
    return dict(sorted(found.items()))

