"""The deterministic composer on hand-built graph read models."""

from __future__ import annotations

import re

from langchain_core.documents import Document

from apiatlas.graph.model import (
    Dependency,
    DocSectionRef,
    EndpointDetail,
    EndpointRef,
    FieldRef,
    ParameterRef,
)
from apiatlas.rag.answer.composer import compose_answer
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup

SPEC = "/specs/logistics.yaml"
GUIDE = "/guides/shipments.md"


def ref(method: str, path: str, summary: str, **kw: object) -> EndpointRef:
    pointer = "/paths/" + path.replace("/", "~1") + "/" + method.lower()
    return EndpointRef(
        key=f"logistics:{method} {path}",
        api="logistics",
        method=method,
        path=path,
        summary=summary,
        source=SPEC,
        pointer=pointer,
        **kw,
    )


CREATE_SHIPMENT = ref("POST", "/v2/shipments", "Create a shipment", kind="create")
CREATE_LOCATION = ref("POST", "/v2/locations", "Create a location", kind="create")
OLD_LOCATION = ref(
    "POST", "/v1/locations", "Create a location (v1)", kind="create", deprecated=True
)
REGISTER_CARRIER = ref("POST", "/v2/carriers", "Register a carrier", kind="action")


def shipment_detail(examples: list[dict[str, object]] | None = None) -> EndpointDetail:
    return EndpointDetail(
        endpoint=CREATE_SHIPMENT,
        parameters=[
            ParameterRef(name="Idempotency-Key", location="header", required=True, type="string")
        ],
        request_schema="CreateShipmentRequest",
        request_fields=[
            FieldRef(name="origin_location_id", type="string", required=True),
            FieldRef(name="carrier_id", type="string", required=True),
            FieldRef(name="packages[].weight.value", type="number", required=True),
            FieldRef(name="reference", type="string"),
        ],
        examples=examples or [],
        security=["bearerAuth"],
        servers=["https://api.logistics.example/"],
        docs=[
            DocSectionRef(
                key="doc:1", source=GUIDE, anchor="creating-a-shipment",
                section_path=["Shipments", "Creating a shipment"],
            )
        ],
    )


def shipment_lookup() -> GraphLookup:
    question = "How do I create a shipment?"
    return GraphLookup(
        intent=analyse_question(question),
        primary=[CREATE_SHIPMENT],
        prerequisites=[
            Dependency(endpoint=CREATE_SHIPMENT, parameter="origin_location_id",
                       provider=CREATE_LOCATION),
            Dependency(endpoint=CREATE_SHIPMENT, parameter="carrier_id", provider=REGISTER_CARRIER),
        ],
        apis=["logistics"],
    )


def guide_chunk(text: str, anchor: str = "creating-a-shipment") -> Document:
    return Document(
        page_content=text,
        metadata={"kind": "doc", "source": GUIDE, "anchor": anchor, "title": "Shipments",
                  "section": "Creating a shipment"},
    )


def test_endpoint_answer_has_prerequisites_example_and_unique_numbered_citations() -> None:
    lookup = shipment_lookup()
    details = {CREATE_SHIPMENT.key: shipment_detail()}
    docs = [guide_chunk("A shipment needs two locations and a carrier."),
            guide_chunk("A shipment needs two locations and a carrier, again.")]
    result = compose_answer("How do I create a shipment?", lookup=lookup, details=details,
                            documents=docs)

    assert not result.abstained
    assert [(e.method, e.path, e.role) for e in result.endpoints] == [
        ("POST", "/v2/shipments", "primary"),
        ("POST", "/v2/locations", "prerequisite"),
        ("POST", "/v2/carriers", "prerequisite"),
    ]
    numbers = [c.n for c in result.citations]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len({c.uri for c in result.citations}) == len(numbers)
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", result.answer)}
    assert cited == set(numbers)
    spec = next(c for c in result.citations if c.title == "POST /v2/shipments")
    assert (spec.kind, spec.uri) == ("spec", f"{SPEC}#/paths/~1v2~1shipments/post")
    doc = next(c for c in result.citations if c.kind == "doc")
    assert doc.uri == f"{GUIDE}#creating-a-shipment"
    # Two chunks of one section are one passage with one citation.
    assert result.answer.count("**From the guides**") == 1
    assert "first to get `origin_location_id`" in result.answer
    assert "`carrier_id` (string)" in result.answer
    assert "`Idempotency-Key` (header, string)" in result.answer


def test_example_is_synthesised_when_the_spec_has_none() -> None:
    result = compose_answer(
        "How do I create a shipment?",
        lookup=shipment_lookup(),
        details={CREATE_SHIPMENT.key: shipment_detail()},
    )
    [example] = result.examples
    assert example.origin == "synthesised"
    assert example.citation is None
    assert 'curl -X POST "https://api.logistics.example/v2/shipments"' in example.content
    assert '"origin_location_id": "<origin_location_id>"' in example.content
    assert '"value": 0.0' in example.content
    assert "reference" not in example.content
    assert '-H "Idempotency-Key: <Idempotency-Key>"' in example.content


def test_spec_request_example_wins_and_is_cited() -> None:
    pointer = "/paths/~1v2~1shipments/post/requestBody/content/application~1json/example"
    detail = shipment_detail(
        [
            {"kind": "response", "value": {"id": "shp_1"}, "source": SPEC, "pointer": "/r"},
            {"kind": "request", "media_type": "application/json",
             "value": {"carrier_id": "car_1"}, "source": SPEC, "pointer": pointer},
        ]
    )
    result = compose_answer("create a shipment", lookup=shipment_lookup(),
                            details={CREATE_SHIPMENT.key: detail})
    [example] = result.examples
    assert example.origin == "spec"
    assert '"carrier_id": "car_1"' in example.content
    cited = result.citations[example.citation - 1]
    assert cited.uri == f"{SPEC}#{pointer}"


def test_deprecated_endpoint_is_marked_with_its_replacement() -> None:
    question = "create a location"
    lookup = GraphLookup(
        intent=analyse_question(question),
        primary=[CREATE_LOCATION, OLD_LOCATION],
        replacements={OLD_LOCATION.key: CREATE_LOCATION},
        apis=["logistics"],
    )
    result = compose_answer(question, lookup=lookup, details={})
    assert [e.deprecated for e in result.endpoints] == [False, True]
    assert "**Deprecated**: use `POST /v2/locations` instead." in result.answer


def test_a_deprecated_related_endpoint_also_names_its_replacement() -> None:
    question = "create a location"
    lookup = GraphLookup(
        intent=analyse_question(question),
        primary=[CREATE_LOCATION],
        related=[OLD_LOCATION],
        replacements={OLD_LOCATION.key: CREATE_LOCATION},
        apis=["logistics"],
    )
    result = compose_answer(question, lookup=lookup, details={})
    assert [(e.path, e.role, e.deprecated) for e in result.endpoints] == [
        ("/v2/locations", "primary", False), ("/v1/locations", "related", True)
    ]
    related = result.answer.split("**Related**")[1]
    assert "`POST /v1/locations`" in related
    assert "**Deprecated**: use `POST /v2/locations` instead." in related


def test_a_lookup_comes_first_and_says_which_id_it_finds() -> None:
    question = "Create a shipment from the location named 'Leeds DC'"
    list_locations = ref("GET", "/v2/locations", "List locations", kind="list")
    find = Dependency(
        endpoint=CREATE_SHIPMENT, parameter="origin_location_id", provider=list_locations
    )
    lookup = GraphLookup(
        intent=analyse_question(question),
        primary=[list_locations, CREATE_SHIPMENT],
        lookups=[find],
        apis=["logistics"],
    )
    result = compose_answer(question, lookup=lookup, details={})
    assert [(e.path, e.role) for e in result.endpoints] == [
        ("/v2/locations", "primary"), ("/v2/shipments", "primary")
    ]
    first = result.answer.split("2. `POST /v2/shipments`")[0]
    assert "1. `GET /v2/locations`" in first
    assert "find the `origin_location_id` that `POST /v2/shipments` needs" in first


def test_abstention_has_no_endpoints_and_names_alternatives() -> None:
    question = "How do I create an invoice?"
    lookup = GraphLookup(
        intent=analyse_question(question),
        unmatched_terms=["invoice"],
        alternatives=[CREATE_SHIPMENT, CREATE_LOCATION],
        apis=["logistics"],
    )
    # A guide chunk that happens to come back from the vectors must not rescue the answer.
    docs = [guide_chunk("Invoices are emailed monthly.", anchor="billing")]
    result = compose_answer(question, lookup=lookup, details={}, documents=docs)
    assert result.abstained
    assert result.endpoints == [] and result.examples == [] and result.citations == []
    assert result.alternatives == ["POST /v2/shipments — Create a shipment",
                                   "POST /v2/locations — Create a location"]
    assert "I could not find an endpoint to create “invoice” in logistics." in result.answer
    assert "`POST /v2/shipments`" in result.answer


def test_howto_answered_from_guides_cites_sections_and_lists_described_endpoints() -> None:
    question = "How do I verify webhook signatures?"
    lookup = GraphLookup(intent=analyse_question(question), unmatched_terms=["signatures"],
                         apis=["logistics"])
    docs = [
        Document(page_content="Unrelated text about pagination.",
                 metadata={"kind": "doc", "source": "/g/start.md", "anchor": "pagination"}),
        Document(page_content="Every delivery carries a signature header; verify it.",
                 metadata={"kind": "doc", "source": "/g/webhooks.md",
                           "anchor": "verifying-the-signature", "title": "Webhooks",
                           "section": "Verifying the signature"}),
    ]
    hook = ref("POST", "/v2/webhooks", "Create a webhook", kind="create")
    result = compose_answer(question, lookup=lookup, details={}, documents=docs, related=[hook])
    assert not result.abstained
    assert [c.uri for c in result.citations] == [
        "/g/webhooks.md#verifying-the-signature",
        f"{SPEC}#/paths/~1v2~1webhooks/post",
    ]
    assert "Webhooks > Verifying the signature [1]" in result.answer
    assert [(e.method, e.path) for e in result.endpoints] == [("POST", "/v2/webhooks")]
    assert "pagination" not in result.answer.lower()


def test_below_the_threshold_the_answer_says_it_is_not_sure_and_marks_no_primary() -> None:
    shipment = CREATE_SHIPMENT.model_copy(update={"resource": "logistics/resource/shipment"})
    location = CREATE_LOCATION.model_copy(update={"resource": "logistics/resource/location"})
    lookup = shipment_lookup().model_copy(update={"primary": [shipment], "related": [location]})
    details = {CREATE_SHIPMENT.key: shipment_detail()}
    sure = compose_answer("How do I create a shipment?", lookup=lookup, details=details,
                          confidence=0.93, min_confidence=0.8)
    unsure = compose_answer("How do I create a shipment?", lookup=lookup, details=details,
                            confidence=0.41, min_confidence=0.8)
    assert (sure.outcome, sure.confidence) == ("answer", 0.93)
    assert "**Endpoints** (logistics; confidence 0.93)" in sure.answer
    assert (unsure.outcome, unsure.confidence) == ("unsure", 0.41)
    assert unsure.answer.startswith("**Not sure.**") and "(confidence 0.41)" in unsure.answer
    assert "**Candidates** (logistics)" in unsure.answer
    # The same endpoints in the same order; only the roles and the wording change.
    assert [(e.path, e.role) for e in unsure.endpoints] == [
        (e.path, "candidate" if e.role == "primary" else e.role) for e in sure.endpoints]
    assert not any(e.role == "primary" for e in unsure.endpoints)
    # What tells the candidates apart: here they differ in their resource only.
    assert "1. `POST /v2/shipments` — Create a shipment (shipment) [1]" in unsure.answer


def test_an_abstention_is_outcome_none() -> None:
    lookup = GraphLookup(intent=analyse_question("How do I book a flight?"), apis=["logistics"])
    result = compose_answer("How do I book a flight?", lookup=lookup, details={},
                            confidence=0.05, min_confidence=0.8)
    assert (result.outcome, result.abstained) == ("none", True)
