"""Which questions are about the team's code, and what the code answers them with."""

from __future__ import annotations

import pytest

from apiatlas.rag.answer.result import AnswerEndpoint, AnswerResult, Citation
from apiatlas.rag.code.answer import code_answer, with_sites
from apiatlas.rag.code.sites import CodeSite
from apiatlas.rag.question.code import CodeAsk, read_code_question

FILES = ["shipping/client.py", "web/quotes.ts", "worker/webhooks.go"]


@pytest.mark.parametrize(("question", "kind", "target"), [
    ("Which deprecated endpoints do we still call?", "deprecated", None),
    ("Is our app using any legacy APIs?", "deprecated", None),
    ("Which of our calls are not in the spec?", "unknown", None),
    ("Does our code use undocumented endpoints?", "unknown", None),
    ("What endpoints does shipping/client.py call?", "file", "shipping/client.py"),
    ("what does quotes.ts use", "file", "web/quotes.ts"),
    ("Which endpoints does the worker/ folder hit?", "file", "worker"),
    ("Where do we call the endpoint to create a location?", "where", None),
    ("Which files call POST /v2/quotes?", "where", None),
    ("Where in our code do we cancel shipments?", "where", None),
])  # fmt: skip
def test_code_questions_are_read_by_kind(question: str, kind: str, target: str | None) -> None:
    assert read_code_question(question, FILES) == CodeAsk(kind=kind, target=target)  # type: ignore[arg-type]


@pytest.mark.parametrize("question", [
    "How do I create a shipment?",
    "How do we create a location with the legacy endpoint?",  # asks how, not what we call
    "Where can I find the endpoint to create a location?",
    "Is the v1 location endpoint deprecated?",
    "What does client.go call?",  # no such file
])  # fmt: skip
def test_other_questions_are_left_to_the_endpoint_search(question: str) -> None:
    assert read_code_question(question, FILES) is None


def test_without_code_no_question_is_a_code_question() -> None:
    assert read_code_question("Which deprecated endpoints do we still call?", []) is None


def site(file: str, line: int, endpoint: str | None, **extra: object) -> CodeSite:
    return CodeSite(file=file, line=line, endpoint=endpoint, api="ship", confidence=0.9,
                    matched_by="http" if endpoint else "host", code_set="app", root="/src/app",
                    function="f", method="GET", path="/v2/invoices", **extra)  # type: ignore[arg-type]


SITES = [
    site("shipping/client.py", 15, "POST /v2/locations"),
    site("shipping/client.py", 19, "GET /v1/locations/{id}", deprecated=True,
         replacement=["GET /v2/locations/{id}"]),
    site("shipping/client.py", 28, None),
    site("web/quotes.ts", 5, "POST /v2/quotes"),
]


def test_deprecated_calls_are_listed_with_their_replacement_and_cited_by_line() -> None:
    result = code_answer("q", CodeAsk(kind="deprecated"), SITES)
    assert result.outcome == "answer" and result.confidence == 0.9
    assert "`GET /v1/locations/{id}` (ship; use `GET /v2/locations/{id}` instead)" in result.answer
    assert [(c.kind, c.uri) for c in result.citations] == [
        ("code", "/src/app/shipping/client.py#L19")]
    assert [(e.path, e.role, e.deprecated) for e in result.endpoints] == [
        ("/v1/locations/{id}", "related", True), ("/v2/locations/{id}", "primary", False)]


def test_a_file_question_lists_its_endpoints_and_its_calls_the_spec_lacks() -> None:
    result = code_answer("q", CodeAsk(kind="file", target="shipping/client.py"), SITES)
    assert [f"{e.method} {e.path}" for e in result.endpoints] == [
        "GET /v1/locations/{id}", "POST /v2/locations"]
    assert "`GET /v2/invoices` (ship, not in its spec)" in result.answer
    assert "web/quotes.ts" not in result.answer


def test_nothing_to_list_is_said_plainly_with_outcome_none() -> None:
    result = code_answer("q", CodeAsk(kind="deprecated"), [SITES[0]])
    assert result.outcome == "none" and "calls no endpoint its specs mark deprecated" in result.answer
    assert code_answer("q", CodeAsk(kind="file", target="web"), SITES).outcome == "answer"


def composed(*endpoints: str) -> AnswerResult:
    cited = Citation(n=1, kind="spec", source="/specs/ship.yaml", uri="/specs/ship.yaml#/paths",
                     pointer="/paths", title="spec")  # fmt: skip
    return AnswerResult(
        question="q", answer="The answer.\n\n**Sources**\n\n- [1] spec", citations=[cited],
        endpoints=[AnswerEndpoint(method=e.split()[0], path=e.split()[1], api="ship") for e in endpoints],
    )  # fmt: skip


def test_an_answer_says_where_the_code_calls_its_endpoints_before_its_sources() -> None:
    result = with_sites(composed("POST /v2/locations"), SITES, None)
    body, sources = result.answer.split("**Sources**")
    assert body.startswith("The answer.") and "**In your code**" in body
    assert "`shipping/client.py:15` in `f` [2]" in body
    assert "[2] shipping/client.py:15 in f" in sources
    assert [c.kind for c in result.citations] == ["spec", "code"]


def test_asked_where_the_code_leads_and_says_when_it_calls_nothing() -> None:
    result = with_sites(composed("POST /v2/quotes", "DELETE /v2/quotes/{id}"), SITES,
                        CodeAsk(kind="where"))  # fmt: skip
    assert result.answer.startswith("**In your code**")
    assert "- `DELETE /v2/quotes/{id}`: your code does not call it." in result.answer


def test_an_answer_whose_endpoints_the_code_does_not_call_is_unchanged() -> None:
    plain = composed("DELETE /v2/quotes/{id}")
    assert with_sites(plain, SITES, None) == plain
