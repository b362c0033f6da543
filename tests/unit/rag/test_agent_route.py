"""When the agent answers from the graph alone: only when the question names an endpoint that
the graph found."""

from __future__ import annotations

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.agent.graph import route_after_graph
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup

CREATE = EndpointRef(key="a/endpoint/POST /v2/quotes", api="a", method="POST", path="/v2/quotes",
                     operation_id="createQuote", kind="create")  # fmt: skip
LIST = EndpointRef(key="a/endpoint/GET /v2/quotes", api="a", method="GET", path="/v2/quotes",
                   operation_id="listQuotes", kind="list")  # fmt: skip


def route(question: str, *primary: EndpointRef) -> str:
    lookup = GraphLookup(intent=analyse_question(question), primary=list(primary))
    return route_after_graph({"question": question, "lookup": lookup})  # type: ignore[typeddict-item]


def test_a_named_endpoint_the_graph_found_is_answered_from_the_graph() -> None:
    assert route("What does POST /v2/quotes need?", CREATE) == "review"
    assert route("Explain createQuote", CREATE) == "review"


def test_a_word_that_only_looks_like_an_operation_id_goes_through_the_ranking() -> None:
    # "DocuSign" reads like an operation id, but no endpoint is called that.
    question = "Can DocuSign translate my contract into Spanish?"
    assert analyse_question(question).explicit
    assert route(question, LIST) == "rank"


def test_no_explicit_mention_or_nothing_found_goes_through_the_ranking() -> None:
    assert route("How do I create a quote?", CREATE) == "rank"
    assert route("What does POST /v2/quotes need?") == "rank"
