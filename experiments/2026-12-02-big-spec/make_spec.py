"""A 50,000-operation OpenAPI 3.0 spec for issue 53's oversized-ingest case.

25,000 resources, each with a list (GET) and a create (POST) operation, a summary, a tag and a
three-field schema: about 13 MB of JSON. Then:

    .venv/bin/python experiments/2026-12-02-big-spec/make_spec.py /tmp/big.json
    /usr/bin/time -v .venv/bin/apiatlas ingest --home /tmp/big-home --project big --openapi /tmp/big.json
    .venv/bin/apiatlas ask --home /tmp/big-home --project big "How do I create a widget 12345 item?"
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESOURCES = 25_000


def spec(resources: int = RESOURCES) -> dict:
    paths: dict[str, dict] = {}
    schemas: dict[str, dict] = {}
    for i in range(resources):
        name = f"Widget{i}"
        schemas[name] = {
            "type": "object",
            "required": ["name"],
            "properties": {
                "id": {"type": "string", "description": f"The id of widget {i}."},
                "name": {"type": "string", "description": f"The name of widget {i}."},
                "size": {"type": "integer", "description": f"The size of widget {i}."},
            },
        }
        ref = {"$ref": f"#/components/schemas/{name}"}
        paths[f"/widgets{i}"] = {
            "get": {
                "operationId": f"listWidgets{i}",
                "summary": f"List widget {i} items",
                "tags": [f"group{i // 100}"],
                "responses": {"200": {"description": "The items.", "content": {
                    "application/json": {"schema": {"type": "array", "items": ref}}}}},
            },
            "post": {
                "operationId": f"createWidget{i}",
                "summary": f"Create a widget {i} item",
                "tags": [f"group{i // 100}"],
                "requestBody": {"content": {"application/json": {"schema": ref}}},
                "responses": {"201": {"description": "The created item.", "content": {
                    "application/json": {"schema": ref}}}},
            },
        }
    return {"openapi": "3.0.3", "info": {"title": "Big", "version": "1.0"}, "paths": paths,
            "components": {"schemas": schemas}}


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.write_text(json.dumps(spec()), encoding="utf-8")
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB, {2 * RESOURCES} operations")
