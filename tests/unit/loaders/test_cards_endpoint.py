"""Endpoint cards: stable ids, Chroma-safe metadata, and text that leads with what is searched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiatlas.loaders.cards import endpoint_documents, truncate
from apiatlas.loaders.openapi import load_openapi

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "paths": {
        "/v1/locations": {
            "post": {
                "operationId": "createLocation",
                "summary": "Create a location",
                "tags": ["Locations", "Setup"],
                "description": "Creates a store location. " * 80,
                "parameters": [
                    {"name": "Idempotency-Key", "in": "header", "required": True,
                     "schema": {"type": "string"}, "description": "Makes retries safe."}
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "required": ["location"],
                        "properties": {
                            "note": {"type": "string"},
                            "location": {
                                "type": "object",
                                "required": ["name", "address"],
                                "properties": {
                                    "timezone": {"type": "string"},
                                    "name": {"type": "string", "description": "Shown to buyers."},
                                    "address": {"type": "object", "required": ["city"],
                                                "properties": {"city": {"type": "string"},
                                                               "floor": {"type": "integer"}}},
                                    "capacity": {"type": "integer"},
                                },
                            },
                        },
                    }}},
                },
                "responses": {"201": {"description": "Created"}},
            }
        },
        "/v1/locations/{id}": {
            "delete": {"operationId": "deleteLocation", "deprecated": True,
                       "parameters": [{"name": "id", "in": "path", "required": True,
                                       "schema": {"type": "string"}}],
                       "responses": {"204": {"description": "Gone"}}}
        },
    },
}


@pytest.fixture()
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    return path


def test_ids_are_stable_across_loads(spec_file: Path) -> None:
    first = endpoint_documents(load_openapi(spec_file)[0], project="acme")
    second = endpoint_documents(load_openapi(spec_file)[0], project="acme")
    assert [d.id for d in first] == ["acme:shop:POST /v1/locations", "acme:shop:DELETE /v1/locations/{id}"]
    assert [d.id for d in first] == [d.id for d in second]
    assert [d.page_content for d in first] == [d.page_content for d in second]


def test_metadata_is_chroma_safe(spec_file: Path) -> None:
    create, delete = endpoint_documents(load_openapi(spec_file)[0], project="acme")
    for doc in (create, delete):
        assert all(isinstance(v, (str, int, float, bool)) for v in doc.metadata.values())
    assert create.metadata == {
        "project": "acme",
        "api": "shop",
        "kind": "endpoint",
        "method": "POST",
        "path": "/v1/locations",
        "operation_id": "createLocation",
        "summary": "Create a location",
        "tags": "Locations,Setup",
        "source": str(spec_file.resolve()),
        "pointer": "/paths/~1v1~1locations/post",
        "deprecated": False,
        "webhook": False,
        "title": "POST /v1/locations",
    }
    assert delete.metadata["deprecated"] is True and delete.metadata["tags"] == ""


def test_card_text_leads_with_the_signature_and_lists_required_fields_first(
    spec_file: Path,
) -> None:
    create = endpoint_documents(load_openapi(spec_file)[0], project="acme")[0]
    text = create.page_content
    assert text.startswith("POST /v1/locations\nOperation: createLocation\nSummary: Create a location")
    assert "Tags: Locations, Setup" in text
    assert "- Idempotency-Key (header, required, string): Makes retries safe." in text
    body = text[text.index("Request body") :]
    lines = [line for line in body.splitlines() if line.startswith("- ")]
    required = [line for line in lines if ", required" in line]
    assert [line.split()[1] for line in required] == [
        "location",
        "location.name",
        "location.address",
        "location.address.city",
    ]
    assert lines[: len(required)] == required
    # The description is cut at a sentence boundary, well before the field list.
    description = text.split("\n\n")[1]
    assert len(description) <= 1200 and description.endswith(".")
    # No example in the spec: a minimal one is synthesised from the required fields.
    example = json.loads(text[text.index("{", text.index("Example request:")) :])
    assert example == {"location": {"name": "string", "address": {"city": "string"}}}


def test_truncate_prefers_sentences() -> None:
    assert truncate("short", 100) == "short"
    assert truncate("One two. Three four five six.", 14) == "One two."
    assert truncate("One two. Three four five six.", 20) == "One two. Three four…"
    assert truncate("word " * 50, 30).endswith("…")


@pytest.mark.shared_data
def test_real_cards_mention_path_and_required_fields(shared_data: Path) -> None:
    [spec] = load_openapi(shared_data / "lob/spec/lob-api-public.yml")
    docs = endpoint_documents(spec, project="p")
    assert len(docs) == len({d.id for d in docs}) == 105
    card = next(d for d in docs if d.id == "p:lob:POST /addresses")
    assert card.page_content.startswith("POST /addresses")
    assert "- address_line1 (string, required)" in card.page_content
    assert "Example request:" in card.page_content and "210 King St" in card.page_content
    assert card.metadata["source"].endswith("resources/addresses/addresses.yml")
