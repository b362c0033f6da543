"""The loader against real third-party specs (../shared/data): every operation, refs, provenance."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiatlas.loaders.models import ApiSpec
from apiatlas.loaders.openapi import load_openapi

pytestmark = pytest.mark.shared_data

SPECS = {
    "square": ["spec/api.json"],
    "lob": ["spec/lob-api-public.yml"],
    "adobe-commerce": [
        "spec/src/openapi/admin-schema-2.4.8.yaml",
        "spec/src/openapi/customer-schema-2.4.8.yaml",
        "spec/src/openapi/guest-schema-2.4.8.yaml",
    ],
    "adyen": ["spec/json/ManagementService-v3.json", "spec/json/CheckoutService-v71.json"],
}
CASES = [(dataset, spec) for dataset, files in SPECS.items() for spec in files]


@pytest.fixture(scope="module")
def loaded(shared_data: Path) -> dict[str, ApiSpec]:
    """Every real spec, loaded once for the module, keyed by ``dataset/spec_file``."""
    specs = {}
    for dataset, spec_file in CASES + [("adyen", "spec/json/ManagementNotificationService-v3.json")]:
        [spec] = load_openapi(shared_data / dataset / spec_file)
        specs[f"{dataset}/{spec_file}"] = spec
    return specs


def _operations(shared_data: Path, dataset: str) -> dict[str, set[tuple[str, str, str]]]:
    by_file: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    with (shared_data / dataset / "operations.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            by_file[row["spec_file"]].add((row["method"], row["path"], row["operationId"]))
    return by_file


@pytest.mark.parametrize(("dataset", "spec_file"), CASES)
def test_every_operation_is_loaded(
    loaded: dict[str, ApiSpec], shared_data: Path, dataset: str, spec_file: str
) -> None:
    spec = loaded[f"{dataset}/{spec_file}"]
    expected = _operations(shared_data, dataset)[spec_file]
    got = {(e.method, e.path, e.operation_id) for e in spec.endpoints if not e.webhook}
    assert len(expected) > 0
    assert got == expected


def test_adyen_webhooks_load_as_webhook_endpoints(loaded: dict[str, ApiSpec]) -> None:
    spec = loaded["adyen/spec/json/ManagementNotificationService-v3.json"]
    assert spec.spec_format.startswith("openapi 3.1")
    assert len(spec.endpoints) == 8
    assert all(e.webhook and e.method == "POST" for e in spec.endpoints)
    created = next(e for e in spec.endpoints if e.path == "merchant.created")
    assert created.provenance.pointer == "/webhooks/merchant.created/post"
    assert created.request_body is not None and created.request_body.fields


def test_lob_split_spec_matches_lob_bundle(loaded: dict[str, ApiSpec], shared_data: Path) -> None:
    split = loaded["lob/spec/lob-api-public.yml"]
    [bundled] = load_openapi(shared_data / "lob/spec/dist/lob-api-bundled.yml")

    def shape(spec: ApiSpec) -> dict[str, Any]:
        return {
            e.key: (
                sorted((p.name, p.location, p.required) for p in e.parameters),
                sorted(f.path for f in e.request_body.fields) if e.request_body else None,
                sorted(r.status for r in e.responses),
            )
            for e in spec.endpoints
        }

    split_shape, bundled_shape = shape(split), shape(bundled)
    assert len(split_shape) == 105
    assert split_shape == bundled_shape
    # Provenance follows the refs into the split files, not the root document.
    assert any(e.provenance.source.endswith("resources/addresses/addresses.yml") for e in split.endpoints)


def test_square_remote_refs_become_warnings(loaded: dict[str, ApiSpec]) -> None:
    spec = loaded["square/spec/api.json"]
    remote = [w for w in spec.warnings if w.message.startswith("remote $ref")]
    assert len(remote) == 60
    assert all("squarecdn.com" in w.message for w in remote)
    assert len({(w.source, w.pointer) for w in remote}) == 60
    # The endpoints whose examples carry those refs say so too.
    assert any(w.message.startswith("remote $ref") for e in spec.endpoints for w in e.warnings)


def test_square_create_location(loaded: dict[str, ApiSpec]) -> None:
    spec = loaded["square/spec/api.json"]
    endpoint = next(e for e in spec.endpoints if e.key == "POST /v2/locations")
    assert endpoint.operation_id == "CreateLocation"
    assert endpoint.provenance.pointer == "/paths/~1v2~1locations/post"
    assert endpoint.request_body is not None
    assert endpoint.request_body.schema_name == "CreateLocationRequest"
    paths = {f.path for f in endpoint.request_body.fields}
    assert {"location", "location.name", "location.address.locality"} <= paths
    assert any(x.kind == "request" for x in endpoint.examples)
    assert endpoint.security == ["oauth2"]


def test_adobe_swagger_details(loaded: dict[str, ApiSpec]) -> None:
    spec = loaded["adobe-commerce/spec/src/openapi/admin-schema-2.4.8.yaml"]
    assert spec.spec_format == "swagger 2.0"
    assert spec.base_path == "/rest/default"
    assert spec.servers == ["http://example.com/rest/default"]
    # info.description is a $ref to a Markdown file, read as text.
    assert "autogenerated" in spec.description
    source = next(e for e in spec.endpoints if e.key == "POST /V1/inventory/sources")
    assert source.request_body is not None
    assert "source.source_code" in {f.path for f in source.request_body.fields}


def _resolve(doc: Any, pointer: str) -> Any:
    value = doc
    for raw in pointer.lstrip("/").split("/") if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list):
            value = value[int(token)]
        elif token in value:
            value = value[token]
        else:  # an independent YAML parse turns `200:` into an int key
            value = value[int(token)]
    return value


@pytest.mark.parametrize(
    "key",
    [
        "square/spec/api.json",
        "lob/spec/lob-api-public.yml",
        "adobe-commerce/spec/src/openapi/admin-schema-2.4.8.yaml",
        "adyen/spec/json/CheckoutService-v71.json",
    ],
)
def test_provenance_points_at_the_object(loaded: dict[str, ApiSpec], key: str) -> None:
    spec = loaded[key]
    docs: dict[str, Any] = {}

    def land(source: str, pointer: str) -> Any:
        if source not in docs:
            text = Path(source).read_text(encoding="utf-8")
            docs[source] = json.loads(text) if source.endswith(".json") else yaml.load(
                text, Loader=yaml.CSafeLoader
            )
        return _resolve(docs[source], pointer)

    strict = not key.startswith(("square", "adyen"))  # those use $ref siblings for descriptions
    checked = 0
    for endpoint in spec.endpoints[::7]:
        op = land(endpoint.provenance.source, endpoint.provenance.pointer)
        assert op.get("operationId", "") == endpoint.operation_id
        for param in endpoint.parameters:
            landed = land(param.provenance.source, param.provenance.pointer)
            assert (landed["name"], landed["in"]) == (param.name, param.location)
        body = endpoint.request_body
        for field in body.fields[:15] if body else []:
            landed = land(field.provenance.source, field.provenance.pointer)
            assert isinstance(landed, dict)
            if strict:
                text = landed.get("description") or landed.get("title") or ""
                assert text.strip() == field.description
            checked += 1
    assert checked > 5
