"""Example requests: spec examples, code samples, and synthesis from required fields."""

from __future__ import annotations

from apiatlas.graph.model import EndpointDetail, EndpointRef, FieldRef, ParameterRef
from apiatlas.rag.answer.citations import CitationRegistry
from apiatlas.rag.answer.examples import example_for, synthesise_body

REF = EndpointRef(key="a:GET /v2/quotes", api="a", method="GET", path="/v2/quotes/{quote_id}",
                  source="/s.yaml", pointer="/paths/~1v2~1quotes~1{quote_id}/get")


def test_synthesised_body_nests_dotted_and_array_fields() -> None:
    body = synthesise_body(
        [
            FieldRef(name="name", type="string", required=True),
            FieldRef(name="address.city", type="string", required=True),
            FieldRef(name="items[].qty", type="integer", required=True),
            FieldRef(name="items[].tags", type="array[string]", required=True),
            FieldRef(name="active", type="boolean", required=True),
            FieldRef(name="note", type="string"),
        ]
    )
    assert body == {
        "name": "<name>",
        "address": {"city": "<city>"},
        "items": [{"qty": 0, "tags": []}],
        "active": False,
    }


def test_first_fields_are_used_when_none_is_required() -> None:
    fields = [FieldRef(name=f"f{i}", type="string") for i in range(5)]
    assert list(synthesise_body(fields)) == ["f0", "f1", "f2"]


def test_get_without_body_keeps_path_parameters_and_adds_required_query() -> None:
    detail = EndpointDetail(
        endpoint=REF,
        parameters=[
            ParameterRef(name="quote_id", location="path", required=True),
            ParameterRef(name="currency", location="query", required=True),
            ParameterRef(name="expand", location="query"),
        ],
    )
    example = example_for(detail, CitationRegistry())
    assert example.origin == "synthesised"
    assert example.content == 'curl -X GET "{base_url}/v2/quotes/{quote_id}?currency=<currency>"'


def test_curl_code_sample_is_used_verbatim_and_cited() -> None:
    detail = EndpointDetail(
        endpoint=REF,
        code_samples=[
            {"lang": "Python", "source": "client.quotes.get()"},
            {"lang": "cURL", "source": "curl https://x.example/v2/quotes/q1\n",
             "provenance": {"source": "/s.yaml",
                            "pointer": "/paths/~1v2~1quotes~1{quote_id}/get/x-codeSamples/1"}},
        ],
    )
    cites = CitationRegistry()
    example = example_for(detail, cites)
    assert (example.origin, example.content) == ("spec", "curl https://x.example/v2/quotes/q1")
    assert cites.citations()[0].uri.endswith("/get/x-codeSamples/1")


def test_single_quotes_in_bodies_are_shell_escaped() -> None:
    detail = EndpointDetail(
        endpoint=REF.model_copy(update={"method": "POST"}),
        examples=[{"kind": "request", "value": {"note": "it's"}, "source": "/s.yaml"}],
    )
    example = example_for(detail, CitationRegistry())
    assert """"note": "it'\\''s\"""" in example.content
