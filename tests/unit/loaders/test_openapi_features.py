"""Loader behaviour on small hand-written specs: Swagger 2, OpenAPI 3.0/3.1, refs and schemas."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

from apiatlas.loaders.openapi import load_openapi, slugify

SWAGGER = {
    "swagger": "2.0",
    "info": {"title": "Pet Store", "version": "1.0"},
    "host": "api.example.com",
    "basePath": "/v1",
    "schemes": ["https"],
    "consumes": ["application/json"],
    "produces": ["application/json"],
    "security": [{"api_key": []}],
    "securityDefinitions": {"api_key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
    "paths": {
        "/pets/{petId}": {
            "parameters": [
                {"name": "petId", "in": "path", "required": True, "type": "string"},
                {"name": "verbose", "in": "query", "type": "boolean"},
            ],
            "put": {
                "operationId": "updatePet",
                "parameters": [
                    {"name": "verbose", "in": "query", "type": "integer", "x-example": 2},
                    {"name": "body", "in": "body", "required": True,
                     "schema": {"$ref": "#/definitions/Pet"}},
                ],
                "responses": {
                    "200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"},
                            "examples": {"application/json": {"name": "Rex"}}},
                },
            },
            "post": {
                "operationId": "uploadPhoto",
                "security": [],
                "consumes": ["multipart/form-data"],
                "parameters": [
                    {"name": "photo", "in": "formData", "type": "file", "required": True},
                    {"name": "caption", "in": "formData", "type": "string"},
                ],
                "responses": {"204": {"description": "stored"}},
            },
        }
    },
    "definitions": {
        "Pet": {
            "type": "object",
            "required": ["name"],
            "example": {"name": "Fido"},
            "properties": {
                "name": {"type": "string", "description": "The pet's name."},
                "tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
            },
        },
        "Tag": {"type": "object", "properties": {"label": {"type": "string"}}},
    },
}


def test_swagger2_body_formdata_servers_and_security(tmp_path: Path) -> None:
    source = tmp_path / "petstore.json"
    source.write_text(json.dumps(SWAGGER), encoding="utf-8")
    [spec] = load_openapi(source)
    assert (spec.name, spec.spec_format, spec.base_path) == ("pet-store", "swagger 2.0", "/v1")
    assert spec.servers == ["https://api.example.com/v1"]
    assert spec.security_schemes == {"api_key": "apiKey header X-Key"}
    update = next(e for e in spec.endpoints if e.operation_id == "updatePet")
    # Operation-level `verbose` wins over the path-level one; `body` is not a parameter.
    assert [(p.name, p.location, p.type) for p in update.parameters] == [
        ("petId", "path", "string"),
        ("verbose", "query", "integer"),
    ]
    assert update.parameters[1].example == 2
    body = update.request_body
    assert body is not None and body.required and body.schema_name == "Pet"
    assert [(f.path, f.type, f.required) for f in body.fields] == [
        ("name", "string", True),
        ("tags", "array[Tag]", False),
        ("tags[].label", "string", False),
    ]
    assert body.fields[0].provenance.pointer == "/definitions/Pet/properties/name"
    assert update.security == ["api_key"] and update.servers == spec.servers
    kinds = {(x.kind, x.media_type, x.status) for x in update.examples}
    assert ("request", "application/json", None) in kinds  # the schema's example
    assert ("response", "application/json", "200") in kinds
    upload = next(e for e in spec.endpoints if e.operation_id == "uploadPhoto")
    assert upload.security == []  # `security: []` switches the global requirement off
    assert upload.request_body is not None
    assert upload.request_body.content_types == ["multipart/form-data"]
    assert [(f.name, f.type, f.required) for f in upload.request_body.fields] == [
        ("photo", "file", True),
        ("caption", "string", False),
    ]


OPENAPI_31 = dedent(
    """\
    openapi: 3.1.0
    info: {title: Garden API, version: '2024-01-01'}
    servers: [{url: 'https://{region}.garden.test/api', variables: {region: {default: eu}}}]
    paths:
      /plants:
        servers: [{url: 'https://plants.garden.test'}]
        post:
          operationId: createPlant
          tags: [Plants]
          deprecated: true
          x-codeSamples:
            - {lang: Shell, label: curl, source: 'curl -X POST https://plants.garden.test/plants'}
          parameters:
            - {name: dry_run, in: query, schema: {type: [boolean, 'null']}, example: true}
          requestBody:
            required: true
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Plant'}
                examples:
                  basil: {summary: Basil, value: {name: basil, planted: 2024-03-01}}
          responses:
            '201': {description: Created}
    webhooks:
      plantWatered:
        post:
          operationId: plantWatered
          requestBody:
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Plant'}
          responses:
            200: {description: ok}
    components:
      schemas:
        Named: {type: object, properties: {id: {type: string}}}
        Plant:
          allOf:
            - $ref: '#/components/schemas/Named'
            - type: object
              required: [name]
              properties:
                name: {type: [string, 'null']}
                parent: {$ref: '#/components/schemas/Plant'}
                soil: {oneOf: [{$ref: '#/components/schemas/Named'}, {type: object}]}
                a: {type: object, properties: {b: {type: object, properties: {c: {type: object,
                    properties: {d: {type: object, properties: {e: {type: string}}}}}}}}}
          required: [id]
    """
)


def test_openapi31_webhooks_types_allof_recursion_and_depth(tmp_path: Path) -> None:
    source = tmp_path / "garden.yaml"
    source.write_text(OPENAPI_31, encoding="utf-8")
    [spec] = load_openapi(source, api="garden")
    assert spec.name == "garden" and spec.version == "2024-01-01"  # a YAML date stays text
    assert spec.servers == ["https://eu.garden.test/api"] and spec.base_path == "/api"
    create, watered = spec.endpoints
    assert create.servers == ["https://plants.garden.test"]  # path-level servers win
    assert create.deprecated and create.tags == ["Plants"]
    assert create.parameters[0].type == "boolean|null" and create.parameters[0].example is True
    assert create.code_samples[0].lang == "Shell"
    assert create.code_samples[0].provenance.pointer == "/paths/~1plants/post/x-codeSamples/0"
    basil = next(x for x in create.examples if x.name == "basil")
    assert basil.value == {"name": "basil", "planted": "2024-03-01"}
    fields = {f.path: f for f in create.request_body.fields}  # type: ignore[union-attr]
    assert fields["id"].required and fields["name"].required  # allOf merges required
    assert fields["name"].type == "string|null"
    assert fields["parent"].type == "Plant (recursive)"
    assert not any(path.startswith("parent.") for path in fields)
    assert fields["soil"].type == "Named|option 2"
    assert "a.b.c.d" in fields and "a.b.c.d.e" not in fields  # depth limit 4
    assert (watered.webhook, watered.method, watered.path) == (True, "POST", "plantWatered")
    assert [r.status for r in watered.responses] == ["200"]
    assert spec.schemas["Plant"].fields and spec.schemas["Named"].fields[0].path == "id"


def test_external_refs_markdown_and_remote_refs(tmp_path: Path) -> None:
    (tmp_path / "intro.md").write_text("# Welcome\nRead this first.\n", encoding="utf-8")
    (tmp_path / "paths").mkdir()
    (tmp_path / "paths" / "things.yaml").write_text(
        dedent(
            """\
            get:
              operationId: listThings
              parameters: [{$ref: '../shared.yaml#/limit'}]
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          count: {$ref: 'https://schemas.example.com/common.json#/Count'}
            """
        ),
        encoding="utf-8",
    )
    (tmp_path / "shared.yaml").write_text(
        "limit: {name: limit, in: query, schema: {type: integer}, description: Page size.}\n",
        encoding="utf-8",
    )
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: Things, version: '1', description: {$ref: intro.md}}\n"
        "paths:\n  /things: {$ref: 'paths/things.yaml'}\n",
        encoding="utf-8",
    )
    [spec] = load_openapi(tmp_path)  # the fragments in the directory are skipped
    assert spec.description.startswith("# Welcome")
    [endpoint] = spec.endpoints
    assert endpoint.provenance.source == str((tmp_path / "paths" / "things.yaml").resolve())
    assert endpoint.provenance.pointer == "/get"
    [limit] = endpoint.parameters
    assert (limit.name, limit.type, limit.description) == ("limit", "integer", "Page size.")
    assert limit.provenance.pointer == "/limit"
    assert limit.provenance.source.endswith("shared.yaml")
    [warning] = endpoint.warnings
    assert "schemas.example.com" in warning.message and "not fetched offline" in warning.message
    assert warning.pointer.endswith("/properties/count")
    assert spec.warnings == [warning]


def test_dangling_property_ref_is_a_warning(tmp_path: Path) -> None:
    # Square ships five of these: the field keeps its own description and the spec loads.
    source = tmp_path / "api.yaml"
    source.write_text(
        "openapi: 3.0.0\ninfo: {title: T, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n"
        "    Item:\n      properties:\n"
        "        mode: {$ref: '#/components/schemas/Gone', description: How it runs.}\n",
        encoding="utf-8",
    )
    [spec] = load_openapi(source)
    [field] = spec.schemas["Item"].fields
    assert (field.type, field.description) == ("Gone", "How it runs.")
    [warning] = spec.warnings
    assert "dangling" in warning.message
    assert warning.pointer == "/components/schemas/Item/properties/mode"


def test_colliding_titles_in_a_directory_get_file_stems(tmp_path: Path) -> None:
    for stem in ("public", "internal"):
        (tmp_path / f"{stem}.yaml").write_text(
            "openapi: 3.0.0\ninfo: {title: Shop API, version: '1'}\npaths: {}\n", encoding="utf-8"
        )
    names = sorted(spec.name for spec in load_openapi(tmp_path))
    assert names == ["shop-api-internal", "shop-api-public"]
    assert slugify("Commerce Admin REST endpoints - All inclusive") == (
        "commerce-admin-rest-endpoints-all-inclusive"
    )


def test_url_spec_and_its_relative_refs_are_fetched(tmp_path: Path) -> None:
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from apiatlas.loaders.fetch import FetchPolicy

    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "items.json").write_text(
        json.dumps({"list": {"get": {"operationId": "listItems", "responses": {}}}}),
        encoding="utf-8",
    )
    (tmp_path / "api.json").write_text(
        json.dumps(
            {
                "openapi": "3.0.0",
                "info": {"title": "Remote Items", "version": "1"},
                "paths": {"/items": {"$ref": "parts/items.json#/list"}},
            }
        ),
        encoding="utf-8",
    )

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        policy = FetchPolicy(allow_private=True, respect_robots=False, timeout=5)
        [spec] = load_openapi(f"{base}/api.json", fetch_policy=policy)
    finally:
        server.shutdown()
        server.server_close()
    assert (spec.name, spec.source) == ("remote-items", f"{base}/api.json")
    [endpoint] = spec.endpoints
    assert endpoint.operation_id == "listItems"
    assert endpoint.provenance.source == f"{base}/parts/items.json"
    assert endpoint.provenance.pointer == "/list/get"


def test_an_unreachable_remote_document_is_tried_once_for_all_its_refs(tmp_path: Path) -> None:
    # Square points at one unreachable host 90 times; each try cost a DNS lookup.
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from apiatlas.loaders.fetch import FetchPolicy

    requests: list[str] = []

    class Failing(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            requests.append(self.path)
            self.send_error(503)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    names = [f"field{i}" for i in range(12)]
    properties = {name: {"$ref": f"{base}/common.json#/String"} for name in names}
    (tmp_path / "api.json").write_text(
        json.dumps(
            {
                "openapi": "3.0.0",
                "info": {"title": "Refs", "version": "1"},
                "paths": {},
                "components": {"schemas": {"Thing": {"properties": properties}}},
            }
        ),
        encoding="utf-8",
    )
    try:
        policy = FetchPolicy(allow_private=True, respect_robots=False, timeout=5)
        [spec] = load_openapi(tmp_path / "api.json", fetch_policy=policy)
    finally:
        server.shutdown()
        server.server_close()
    assert requests == ["/common.json"]
    warned = {w.pointer for w in spec.warnings if "common.json" in w.message}
    assert warned == {f"/components/schemas/Thing/properties/{name}" for name in names}
    assert all("503" in w.message for w in spec.warnings)
