"""The agent on the sample API with its team's code: where the code calls an answer's endpoints,
and the questions about the code itself, each site cited by file and line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.sample import write_sample_api


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiAtlas]:
    sample = write_sample_api(tmp_path_factory.mktemp("sample"))
    home = tmp_path_factory.mktemp("home")
    with ApiAtlas(Settings(home=home, project="shop")) as atlas:
        atlas.ingest(openapi=[sample / "openapi.yaml"], code=[sample / "code"])
        yield atlas


def code_citations(result: AnswerResult) -> list[tuple[str, int]]:
    """Each code citation's file (relative to the sample) and line, checked to exist."""
    found = []
    for c in result.citations:
        if c.kind == "code":
            path, line = Path(c.source), int(c.pointer.removeprefix("L"))
            assert path.is_file() and line <= len(path.read_text().splitlines())
            assert c.uri == f"{c.source}#L{line}"
            found.append(("/".join(path.parts[-2:]), line))
    return found


def test_an_answer_says_where_the_code_calls_its_endpoint(atlas: ApiAtlas) -> None:
    result = atlas.ask("How do I cancel a shipment?")
    assert result.route[-2:] == ["compose", "code"]
    assert result.endpoints[0].path == "/v2/shipments/{shipment_id}/cancel"
    assert "**In your code**" in result.answer
    assert code_citations(result) == [("shipping/client.py", 25)]


def test_asked_where_the_code_leads_the_answer(atlas: ApiAtlas) -> None:
    result = atlas.ask("Where do we call the endpoint to create a location?")
    assert result.answer.startswith("**In your code**")
    assert ("shipping/client.py", 15) in code_citations(result)


def test_deprecated_endpoints_in_use_come_with_their_replacement(atlas: ApiAtlas) -> None:
    result = atlas.ask("Which deprecated endpoints do we still call?")
    assert result.route == ["memory", "analyse", "code"]
    assert result.outcome == "answer"
    assert "use `GET /v2/locations/{location_id}` instead" in result.answer
    assert code_citations(result) == [("shipping/client.py", 19)]
    assert [(e.path, e.role) for e in result.endpoints] == [
        ("/v1/locations/{location_id}", "related"), ("/v2/locations/{location_id}", "primary")]


def test_the_endpoints_a_file_calls(atlas: ApiAtlas) -> None:
    result = atlas.ask("What endpoints does web/quotes.ts call?")
    assert [f"{e.method} {e.path}" for e in result.endpoints] == [
        "GET /v2/shipments/{shipment_id}/tracking-events", "POST /v2/quotes"]
    assert code_citations(result) == [("web/quotes.ts", 13), ("web/quotes.ts", 5)]


def test_calls_not_in_the_spec(atlas: ApiAtlas) -> None:
    result = atlas.ask("Which of our calls are not in the spec?")
    assert "/v2/invoices" in result.answer and result.endpoints == []
    assert code_citations(result) == [("shipping/client.py", 28)]
