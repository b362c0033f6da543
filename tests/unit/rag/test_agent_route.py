"""When the agent answers from the graph alone: only when the question names an endpoint that
the graph found."""

from __future__ import annotations

from apiatlas.graph.model import EndpointRef
from apiatlas.rag.agent.graph import route_after_graph
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.endpoint_fit import named_in
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


def test_an_endpoint_named_as_what_was_used_before_asking_for_another_goes_through_the_ranking(
) -> None:
    # The how-to clause after the named endpoint asks for something it does not do.
    assert route("We list quotes with GET /v2/quotes. How do I delete an old one?", LIST) == "rank"
    assert route("I made a quote with createQuote, but how do I change its total?",
                 CREATE) == "rank"  # fmt: skip
    # ... and when it asks what the named endpoint does, or nothing of a kind, the graph answers.
    assert route("We call GET /v2/quotes daily; how do I list only this week's?", LIST) == "review"
    assert route("I call GET /v2/quotes: how do I page through the results?", LIST) == "review"


READ = EndpointRef(key="a/endpoint/GET /v2/quotes/{quote_id}", api="a", method="GET",
                   path="/v2/quotes/{quote_id}", operation_id="getQuote", kind="read")  # fmt: skip
SEARCH = EndpointRef(key="a/endpoint/GET /v2/quotes/search", api="a", method="GET",
                     path="/v2/quotes/search", operation_id="searchQuotes", kind="search")  # fmt: skip
LINES = EndpointRef(key="a/endpoint/GET /v2/quotes/{quote_id}/lines", api="a", method="GET",
                    path="/v2/quotes/{quote_id}/lines", kind="list")  # fmt: skip


def test_a_path_written_with_values_names_the_template_it_fills() -> None:
    every = [CREATE, LIST, READ, SEARCH, LINES]

    def named(question: str) -> list[str]:
        return [r.path for r in named_in(every, analyse_question(question))]

    assert named("GET /v2/quotes/q_81723/lines returns 404: why?") == ["/v2/quotes/{quote_id}/lines"]
    assert named("what does GET /v2/quotes/q_81723 return?") == ["/v2/quotes/{quote_id}"]
    # A path the spec has as written is that path, not a template it would also fill.
    assert named("what does GET /v2/quotes/search take?") == ["/v2/quotes/search"]
    assert named("POST /v2/quotes/q_81723 fails") == []  # no such method there
    assert route("Our job calls GET /v2/quotes/q_81723 nightly. What does it return?",
                 READ, LIST) == "review"  # fmt: skip
