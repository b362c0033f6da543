"""The bundled sample API is well formed, complete, and consistent with its guides.

Checked with yaml and the standard library only (the project's loader is tested separately), so a
broken sample shows up here rather than as a confusing loader or retrieval failure.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from apiatlas.errors import LoaderError
from apiatlas.sample import sample_api_dir, sample_guides_dir, sample_spec_path, write_sample_api

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
BASE_URL = "https://api.parcelroute.example"
GUIDES = {
    "getting-started.md",
    "locations.md",
    "carriers.md",
    "shipments.md",
    "quotes.md",
    "tracking.md",
    "webhooks.md",
    "versioning.md",
    "errors-and-limits.md",
}
# What the brief requires: (method, path) -> operationId, or None where any id will do.
REQUIRED_OPERATIONS: dict[tuple[str, str], str | None] = {
    ("POST", "/v2/locations"): "createLocation",
    ("GET", "/v2/locations"): "listLocations",
    ("GET", "/v2/locations/{location_id}"): None,
    ("PATCH", "/v2/locations/{location_id}"): None,
    ("DELETE", "/v2/locations/{location_id}"): None,
    ("POST", "/v2/locations/search"): "searchLocations",
    ("POST", "/v1/locations"): None,
    ("GET", "/v1/locations/{location_id}"): None,
    ("GET", "/v2/carriers"): None,
    ("POST", "/v2/carriers"): None,
    ("GET", "/v2/carriers/{carrier_id}"): None,
    ("PATCH", "/v2/carriers/{carrier_id}"): None,
    ("POST", "/v2/carriers/{carrier_id}/verify"): None,
    ("POST", "/v2/shipments"): "createShipment",
    ("GET", "/v2/shipments"): None,
    ("GET", "/v2/shipments/{shipment_id}"): None,
    ("PATCH", "/v2/shipments/{shipment_id}"): None,
    ("POST", "/v2/shipments/{shipment_id}/cancel"): None,
    ("DELETE", "/v2/shipments/{shipment_id}"): None,
    ("POST", "/v2/quotes"): None,
    ("GET", "/v2/quotes/{quote_id}"): None,
    ("POST", "/v2/quotes/{quote_id}/accept"): None,
    ("GET", "/v2/shipments/{shipment_id}/tracking-events"): None,
    ("POST", "/v2/shipments/{shipment_id}/tracking-events"): None,
    ("POST", "/v2/webhooks"): None,
    ("GET", "/v2/webhooks"): None,
    ("GET", "/v2/webhooks/{webhook_id}"): None,
    ("PATCH", "/v2/webhooks/{webhook_id}"): None,
    ("DELETE", "/v2/webhooks/{webhook_id}"): None,
    ("POST", "/v2/webhooks/{webhook_id}/test"): None,
}
MENTION = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE)\s+(https?://[\w.-]+)?(/[\w\-/{}.]*)")
CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$")


class RefResolver:
    """Resolves ``file#/json/pointer`` references relative to the file that contains them."""

    def __init__(self) -> None:
        self.docs: dict[Path, Any] = {}

    def load(self, path: Path) -> Any:
        path = path.resolve()
        if path not in self.docs:
            self.docs[path] = yaml.safe_load(path.read_text(encoding="utf-8"))
        return self.docs[path]

    def resolve(self, ref: str, base: Path) -> tuple[Path, Any]:
        file_part, _, pointer = ref.partition("#")
        target = (base.parent / file_part).resolve() if file_part else base.resolve()
        node = self.load(target)
        for token in [t for t in pointer.split("/") if t]:
            token = token.replace("~1", "/").replace("~0", "~")
            node = node[int(token)] if isinstance(node, list) else node[token]
        return target, node

    def deref(self, node: Any, base: Path) -> tuple[Path, Any]:
        """Follow ``$ref`` chains until a real object; returns it and the file it lives in."""
        seen = 0
        while isinstance(node, dict) and "$ref" in node:
            base, node = self.resolve(node["$ref"], base)
            seen += 1
            assert seen < 20, f"$ref chain too long at {node!r}"
        return base, node


def walk(node: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Yield ``(json_pointer, value)`` for every value in a parsed YAML tree."""
    yield pointer, node
    if isinstance(node, dict):
        for key, value in node.items():
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            yield from walk(value, f"{pointer}/{escaped}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{pointer}/{i}")


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """Yield ``(METHOD, path, operation, path_item)`` for every operation."""
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                yield method.upper(), path, item[method], item


def loose(path: str) -> str:
    """A path with parameter names erased, so ``{id}`` matches ``{location_id}``."""
    return re.sub(r"\{[^}]*\}", "{}", path.rstrip("/."))


def prose(markdown: str) -> str:
    """Markdown with fenced code blocks removed."""
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced code block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", markdown, flags=re.S | re.M)


@pytest.fixture(scope="module")
def resolver() -> RefResolver:
    return RefResolver()


@pytest.fixture(scope="module")
def spec(resolver: RefResolver) -> dict[str, Any]:
    return resolver.load(sample_spec_path())


@pytest.fixture(scope="module")
def guides() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(sample_guides_dir().glob("*.md"))}


def test_locations_of_the_sample_are_inside_the_package() -> None:
    assert sample_api_dir().name == "sample_api"
    assert sample_spec_path() == sample_api_dir() / "openapi.yaml"
    assert sample_spec_path().is_file()
    assert (sample_api_dir() / "schemas.yaml").is_file()
    assert sample_guides_dir().is_dir()


def test_spec_header_servers_and_security(spec: dict[str, Any]) -> None:
    assert spec["openapi"] == "3.0.3"
    assert spec["info"]["title"] and spec["info"]["version"]
    assert spec["servers"][0]["url"] == BASE_URL + "/"
    schemes = spec["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    assert {name for req in spec["security"] for name in req} == set(schemes)
    assert all(t.get("description") for t in spec["tags"])


def test_every_ref_in_both_files_resolves(resolver: RefResolver) -> None:
    files = [sample_spec_path(), sample_api_dir() / "schemas.yaml"]
    refs = [
        (path, pointer, value["$ref"])
        for path in files
        for pointer, value in walk(resolver.load(path))
        if isinstance(value, dict) and "$ref" in value
    ]
    external = [r for r in refs if not r[2].startswith("#")]
    assert len(refs) > 100 and len(external) > 40, "the sample must exercise external $refs"
    for path, pointer, ref in refs:
        try:
            _, target = resolver.resolve(ref, path)
        except (KeyError, IndexError, FileNotFoundError) as e:
            pytest.fail(f"{path.name}#{pointer}: $ref {ref!r} does not resolve ({e!r})")
        assert isinstance(target, dict), f"{path.name}#{pointer}: {ref!r} is not an object"


def test_every_operation_is_documented_and_ids_are_unique(spec: dict[str, Any]) -> None:
    declared_tags = {t["name"] for t in spec["tags"]}
    ids = [op.get("operationId", "") for _, _, op, _ in operations(spec)]
    assert 30 <= len(ids) <= 40
    assert len(ids) == len(set(ids)), "operationIds must be unique"
    for method, path, op, _ in operations(spec):
        where = f"{method} {path}"
        assert CAMEL.match(op.get("operationId", "")), f"{where}: operationId must be camelCase"
        assert op.get("summary"), f"{where}: summary missing"
        assert len(op.get("description", "")) > 40, f"{where}: description missing or too short"
        assert op.get("tags") and set(op["tags"]) <= declared_tags, f"{where}: undeclared tag"


def test_required_resources_and_methods_exist(spec: dict[str, Any]) -> None:
    present = {(m, p): op["operationId"] for m, p, op, _ in operations(spec)}
    for key, operation_id in REQUIRED_OPERATIONS.items():
        assert key in present, f"missing {key[0]} {key[1]}"
        if operation_id is not None:
            assert present[key] == operation_id


def test_path_parameters_are_declared_and_described(
    spec: dict[str, Any], resolver: RefResolver
) -> None:
    for method, path, op, item in operations(spec):
        declared = {}
        for raw in item.get("parameters", []) + op.get("parameters", []):
            _, param = resolver.deref(raw, sample_spec_path())
            declared[(param["name"], param["in"])] = param
        for name in re.findall(r"\{([^}]+)\}", path):
            param = declared.get((name, "path"))
            assert param is not None, f"{method} {path}: path parameter {name} not declared"
            assert param.get("required") is True and param.get("description")


def test_responses_and_parameters_are_well_formed(
    spec: dict[str, Any], resolver: RefResolver
) -> None:
    for method, path, op, item in operations(spec):
        where = f"{method} {path}"
        assert any(code.startswith("2") for code in op["responses"]), f"{where}: no 2xx response"
        for code, raw in op["responses"].items():
            _, response = resolver.deref(raw, sample_spec_path())
            assert response.get("description"), f"{where} {code}: response needs a description"
        for raw in item.get("parameters", []) + op.get("parameters", []):
            _, param = resolver.deref(raw, sample_spec_path())
            assert param["in"] in {"path", "query", "header"} and "schema" in param, where
            assert param.get("description"), f"{where}: parameter {param['name']} undescribed"


def test_only_v1_endpoints_are_deprecated_and_point_to_v2(spec: dict[str, Any]) -> None:
    for method, path, op, _ in operations(spec):
        if path.startswith("/v1/"):
            assert op.get("deprecated") is True, f"{method} {path} must be deprecated"
            assert f"{method} /v2/" in op["description"]
            assert "timezone" in op["description"]
        else:
            assert not op.get("deprecated"), f"{method} {path} must not be deprecated"


def _json_schema(op: dict[str, Any], status: str | None, resolver: RefResolver) -> dict[str, Any]:
    holder = op["requestBody"] if status is None else op["responses"][status]
    base, holder = resolver.deref(holder, sample_spec_path())
    return resolver.deref(holder["content"]["application/json"]["schema"], base)[1]


def test_creates_have_examples_and_return_the_new_id(
    spec: dict[str, Any], resolver: RefResolver
) -> None:
    creates = [(m, p, op) for m, p, op, _ in operations(spec) if "201" in op["responses"]]
    assert len(creates) >= 8
    for method, path, op in creates:
        media = op["requestBody"]["content"]["application/json"]
        assert "example" in media, f"{method} {path}: create without a request example"
        returned = _json_schema(op, "201", resolver)
        assert "id" in returned["properties"] and "id" in returned["required"], path


@pytest.mark.parametrize(
    ("operation_id", "fields"),
    [
        (
            "createShipment",
            {"origin_location_id", "destination_location_id", "carrier_id", "packages"},
        ),
        ("createQuote", {"origin_location_id", "destination_location_id", "packages"}),
        ("createLocation", {"name", "address", "timezone"}),
    ],
)
def test_request_bodies_require_what_the_guides_promise(
    spec: dict[str, Any], resolver: RefResolver, operation_id: str, fields: set[str]
) -> None:
    op = next(op for _, _, op, _ in operations(spec) if op["operationId"] == operation_id)
    assert fields <= set(_json_schema(op, None, resolver)["required"])


def test_required_fields_exist_in_every_schema(resolver: RefResolver) -> None:
    schemas = resolver.load(sample_api_dir() / "schemas.yaml")
    checked = 0
    for pointer, node in walk(schemas):
        if isinstance(node, dict) and "required" in node and "properties" in node:
            missing = set(node["required"]) - set(node["properties"])
            assert not missing, f"schemas.yaml#{pointer}: required but undefined: {missing}"
            checked += 1
    assert checked > 30


def test_code_samples_cover_curl_and_python(spec: dict[str, Any]) -> None:
    with_samples = [op for _, _, op, _ in operations(spec) if op.get("x-codeSamples")]
    assert len(with_samples) >= 2
    for op in with_samples:
        langs = {s["lang"] for s in op["x-codeSamples"]}
        assert {"curl", "python"} <= langs
        python = next(s["source"] for s in op["x-codeSamples"] if s["lang"] == "python")
        ast.parse(python)


def test_guides_have_a_title_and_sections(guides: dict[str, str]) -> None:
    assert set(guides) == GUIDES
    for name, text in guides.items():
        lines = prose(text).splitlines()
        assert lines[0].startswith("# "), f"{name}: must start with a # title"
        assert sum(line.startswith("# ") for line in lines) == 1, f"{name}: one # title only"
        assert sum(line.startswith("## ") for line in lines) >= 3, f"{name}: needs 3+ sections"


def test_endpoints_mentioned_in_guides_exist(spec: dict[str, Any], guides: dict[str, str]) -> None:
    known = {f"{m} {loose(p)}" for m, p, _, _ in operations(spec)}
    mentioned: set[str] = set()
    prefixed = bare = 0
    for name, text in guides.items():
        for method, prefix, path in MENTION.findall(text):
            if prefix:
                assert prefix == BASE_URL, f"{name}: {method} {prefix}{path} uses another host"
                prefixed += 1
            else:
                bare += 1
            key = f"{method} {loose(path)}"
            assert key in known, f"{name}: mentions {method} {path}, which is not in the spec"
            mentioned.add(key)
    assert prefixed >= 2 and bare >= 30
    # Every current endpoint is explained somewhere, so each can be linked to a guide section.
    current = {f"{m} {loose(p)}" for m, p, op, _ in operations(spec) if not op.get("deprecated")}
    assert current <= mentioned, f"not mentioned in any guide: {sorted(current - mentioned)}"


def test_operation_ids_mentioned_anywhere_exist(
    spec: dict[str, Any], guides: dict[str, str]
) -> None:
    ids = {op["operationId"] for _, _, op, _ in operations(spec)}
    in_guides = {
        token
        for text in guides.values()
        for token in re.findall(r"`([^`\n]+)`", prose(text))
        if CAMEL.match(token)
    }
    assert len(in_guides) >= 25
    assert in_guides <= ids, f"guides name unknown operations: {sorted(in_guides - ids)}"
    descriptions = " ".join(
        str(value)
        for path in (sample_spec_path(), sample_api_dir() / "schemas.yaml")
        for pointer, value in walk(yaml.safe_load(path.read_text(encoding="utf-8")))
        if pointer.endswith("/description")
    )
    in_spec = set(re.findall(r"\b[a-z]+[A-Z][A-Za-z]*\b", descriptions))
    assert in_spec and in_spec <= ids, f"spec names unknown operations: {sorted(in_spec - ids)}"


def test_guide_code_blocks_are_valid(guides: dict[str, str]) -> None:
    counts = {"python": 0, "json": 0}
    for name, text in guides.items():
        for lang, body in code_blocks(text):
            if lang == "python":
                ast.parse(body)
            elif lang == "json":
                json.loads(body)
            counts[lang] = counts.get(lang, 0) + 1
    assert counts["python"] >= 2 and counts["json"] >= 5


def test_signature_how_to_is_answered_only_by_the_guides(guides: dict[str, str]) -> None:
    spec_text = "".join(
        (sample_api_dir() / name).read_text(encoding="utf-8")
        for name in ("openapi.yaml", "schemas.yaml")
    )
    assert "HMAC" in guides["webhooks.md"] and "compare_digest" in guides["webhooks.md"]
    assert "hmac" not in spec_text.lower()
    assert "Retry-After" in guides["errors-and-limits.md"]


def test_only_reserved_example_domains_are_used(guides: dict[str, str]) -> None:
    texts = list(guides.values()) + [
        (sample_api_dir() / n).read_text(encoding="utf-8") for n in ("openapi.yaml", "schemas.yaml")
    ]
    hosts = {h for text in texts for h in re.findall(r"https?://([\w.-]+)", text)}
    assert hosts
    for host in hosts:
        assert host.endswith(".example") or host.endswith("example.com"), host


def test_write_sample_api_makes_an_independent_parseable_copy(tmp_path: Path) -> None:
    target = write_sample_api(tmp_path / "copy")
    assert target == tmp_path / "copy"
    copied = RefResolver()
    spec = copied.load(target / "openapi.yaml")
    _, location = copied.resolve("schemas.yaml#/Location", target / "openapi.yaml")
    assert "timezone" in location["required"]
    packaged = yaml.safe_load(sample_spec_path().read_text(encoding="utf-8"))
    assert len(list(operations(spec))) == len(list(operations(packaged)))
    assert {p.name for p in (target / "guides").glob("*.md")} == GUIDES

    # Editing the copy leaves the packaged sample alone; copying again restores the file.
    (target / "guides" / "webhooks.md").write_text("# Edited\n", encoding="utf-8")
    assert "HMAC" in (sample_guides_dir() / "webhooks.md").read_text(encoding="utf-8")
    write_sample_api(target)
    assert "HMAC" in (target / "guides" / "webhooks.md").read_text(encoding="utf-8")


def test_write_sample_api_refuses_a_file_as_target(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(LoaderError, match="not a directory") as info:
        write_sample_api(blocker)
    assert info.value.source == str(blocker)
