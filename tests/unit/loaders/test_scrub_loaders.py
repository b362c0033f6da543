"""Secrets are scrubbed at the loaders' output: specs (with warnings) and guide sections.

Fake secrets are assembled by concatenation so that this file does not itself hold strings that
secret scanners flag.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.models import ApiSpec
from apiatlas.loaders.openapi import load_openapi
from apiatlas.sample import sample_guides_dir, sample_spec_path
from apiatlas.loaders.scrubbing import scrub_spec

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
TOKEN = "EQAAl0OcByu3IYJYScGGg" + "-8E5YNf0r0b6jCTCMy5nOc"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" * 3
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----"
OP = "/paths/~1v1~1charges/post"

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Payments", "version": "1"},
    "paths": {
        "/v1/charges": {
            "post": {
                "operationId": "createCharge",
                "description": f"Authenticate with `Authorization: Bearer {TOKEN}`.",
                "parameters": [
                    {"name": "X-Api-Key", "in": "header", "schema": {"type": "string"},
                     "example": "a1b2c3d4e5f6g7h8"},
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}, "example": 10},
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/Charge"},
                            "example": {"amount": 100, "api_key": STRIPE, "currency": "usd"},
                        }
                    }
                },
                "responses": {"200": {"description": "The charge."}},
                "x-codeSamples": [
                    {"lang": "curl", "source": f"curl https://pay.example/v1/charges -u {STRIPE}:"}
                ],
            }
        }
    },
    "components": {
        "schemas": {
            "Charge": {
                "type": "object",
                "properties": {
                    "amount": {"type": "integer"},
                    "password": {"type": "string", "example": "hunter22"},
                    "api_key": {"type": "string", "example": "YOUR_API_KEY"},
                },
            }
        }
    },
}  # fmt: skip


@pytest.fixture
def payments(tmp_path: Path) -> ApiSpec:
    path = tmp_path / "payments.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    [spec] = load_openapi(path)
    return spec


def test_spec_examples_code_samples_and_descriptions_are_scrubbed(payments: ApiSpec) -> None:
    [endpoint] = payments.endpoints
    dumped = payments.model_dump_json()
    assert STRIPE not in dumped and TOKEN not in dumped and "hunter22" not in dumped
    assert endpoint.description.endswith("`Authorization: Bearer [REDACTED:bearer-token]`.")
    [request] = [x for x in endpoint.examples if x.kind == "request"]
    assert request.value == {"amount": 100, "api_key": "[REDACTED:stripe-key]", "currency": "usd"}
    assert endpoint.code_samples[0].source.endswith("-u [REDACTED:stripe-key]:")
    params = {p.name: p.example for p in endpoint.parameters}
    assert params == {"X-Api-Key": "[REDACTED:api-key]", "limit": 10}
    fields = {f.path: f.example for f in payments.schemas["Charge"].fields}
    assert fields["password"] == "[REDACTED:password]"
    assert fields["api_key"] == "YOUR_API_KEY"  # a placeholder stays


def test_findings_are_warnings_naming_the_pointer(payments: ApiSpec) -> None:
    [endpoint] = payments.endpoints
    source = endpoint.provenance.source
    found = {(w.message, w.pointer) for w in endpoint.warnings if w.source == source}
    assert found >= {
        ("secret scrubbed: bearer-token", OP),
        ("secret scrubbed: stripe-key", f"{OP}/requestBody/content/application~1json/example"),
        ("secret scrubbed: stripe-key", f"{OP}/x-codeSamples/0"),
        ("secret scrubbed: api-key", f"{OP}/parameters/0"),
        ("secret scrubbed: password", "/components/schemas/Charge/properties/password"),
    }
    # The spec carries every finding too, each once.
    on_spec = [(w.message, w.source, w.pointer) for w in payments.warnings]
    assert len(on_spec) == len(set(on_spec))
    assert {(m, p) for m, s, p in on_spec if s == source} >= found
    assert scrub_spec(payments) == payments  # loading scrubbed it once; again changes nothing


def test_markdown_guide_is_scrubbed(tmp_path: Path) -> None:
    guide = tmp_path / "auth.md"
    guide.write_text(
        "# Authentication\n\nSend your token:\n\n```http\nGET /v1/me\n"
        f"Authorization: Bearer {TOKEN}\n```\n\n## Signing keys\n\nOur test key:\n\n"
        f"```\n{PEM}\n```\n\nIDs such as `loc_8f2k1m9q` are not secrets.\n",
        encoding="utf-8",
    )
    [page] = load_docs(guide)
    texts = {section.anchor: section.text for section in page.sections}
    assert "Authorization: Bearer [REDACTED:bearer-token]" in texts["authentication"]
    assert texts["signing-keys"].count("[REDACTED:private-key]") == 1
    assert "MIIEow" not in texts["signing-keys"] and "END RSA" not in texts["signing-keys"]
    assert "`loc_8f2k1m9q`" in texts["signing-keys"]


def test_sample_api_loads_whole_and_without_its_live_key() -> None:
    raw = yaml.safe_load(sample_spec_path().read_text(encoding="utf-8"))
    methods = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}
    expected = sum(1 for item in raw["paths"].values() for method in item if method in methods)
    [spec] = load_openapi(sample_spec_path())
    assert len(spec.endpoints) == expected
    pages = load_docs(sample_guides_dir())
    texts = "\n".join(section.text for page in pages for section in page.sections)
    assert "prt_live_" not in texts and "[REDACTED:bearer-token]" in texts


def _operation_count(shared_data: Path, dataset: str, spec_file: str) -> int:
    with (shared_data / dataset / "operations.tsv").open(encoding="utf-8") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return sum(1 for row in rows if row["spec_file"] == spec_file)


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("dataset", "spec_file", "kinds"),
    [
        ("square", "spec/api.json", {"square-secret", "token"}),
        ("lob", "spec/lob-api-public.yml", {"basic-credentials"}),
        ("adobe-commerce", "spec/src/openapi/guest-schema-2.4.8.yaml", set()),
        ("adyen", "spec/json/CheckoutService-v71.json", set()),
    ],
)
def test_real_specs_keep_every_operation_and_scrub_only_credentials(
    shared_data: Path, dataset: str, spec_file: str, kinds: set[str]
) -> None:
    [spec] = load_openapi(shared_data / dataset / spec_file)
    assert len(spec.endpoints) == _operation_count(shared_data, dataset, spec_file)
    scrubbed = [w for w in spec.warnings if w.message.startswith("secret scrubbed")]
    assert {w.message.removeprefix("secret scrubbed: ") for w in scrubbed} == kinds
    dumped = spec.model_dump_json()
    assert "sq0csp-" not in dumped  # Square's application secret in the ObtainToken example
    assert "test_" + "0dc8d51e" not in dumped  # Lob's test API key in the curl samples
    # Every curl credential left is a placeholder (`-u <YOUR API KEY>:`, `-u YOUR_API_KEY`);
    # Lob's masked key in a tag description (`test_0dc8dXXXX...`) stays, as a placeholder.
    for endpoint in spec.endpoints:
        for sample in endpoint.code_samples:
            for credential in re.findall(r"-u (\S+)", sample.source):
                assert credential.startswith(("<YOUR", "YOUR_", "[REDACTED:basic-"))
