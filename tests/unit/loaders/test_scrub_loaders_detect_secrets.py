"""AWS example keys and labelled high-entropy secrets are gone from what the real loaders return.

Fake secrets are assembled by concatenation so that this file does not itself hold strings that
secret scanners flag.
"""

from __future__ import annotations

import json
from pathlib import Path

from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.openapi import load_openapi

AWS_EXAMPLE_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
HEX40 = "9f8e7d6c5b4a3928" + "1706f5e4d3c2b1a0ffeeddcc"
B64_40 = "Xq3vL9pT2mK8wR4zN7bC" + "1dF6hJ0sY5gA2eU8iO3t"
SECRETS = (AWS_EXAMPLE_ID, AWS_EXAMPLE_SECRET, HEX40, B64_40)
OP = "/paths/~1v1~1buckets/post"

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Storage", "version": "1"},
    "paths": {
        "/v1/buckets": {
            "post": {
                "operationId": "createBucketWithLifecycleRulesV2",
                "description": f"Sign requests with your key. The signing secret is {B64_40}.",
                "parameters": [
                    {"name": "key", "in": "query", "schema": {"type": "string"},
                     "example": HEX40},
                    {"name": "idempotency_key", "in": "header", "schema": {"type": "string"},
                     "example": "3f2504e0-4f89-41d3-9a0c-0305e82c3301"},
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object"},
                            "example": {
                                "name": "invoices-2024",
                                "credentials": {
                                    "aws_access_key_id": AWS_EXAMPLE_ID,
                                    "aws_secret_access_key": AWS_EXAMPLE_SECRET,
                                },
                            },
                        }
                    }
                },
                "responses": {"201": {"description": "The bucket."}},
            }
        }
    },
}  # fmt: skip


def test_a_spec_loads_without_its_aws_example_keys_or_labelled_secrets(tmp_path: Path) -> None:
    path = tmp_path / "storage.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    [spec] = load_openapi(path)
    dumped = spec.model_dump_json()
    assert not [secret for secret in SECRETS if secret in dumped]
    [endpoint] = spec.endpoints
    assert endpoint.operation_id == "createBucketWithLifecycleRulesV2"
    assert endpoint.description == (
        "Sign requests with your key. The signing secret is [REDACTED:secret]."
    )
    params = {p.name: p.example for p in endpoint.parameters}
    assert params == {
        "key": "[REDACTED:secret]",
        "idempotency_key": "3f2504e0-4f89-41d3-9a0c-0305e82c3301",  # an id, not a secret
    }
    [request] = [x for x in endpoint.examples if x.kind == "request"]
    assert request.value == {
        "name": "invoices-2024",
        "credentials": {
            "aws_access_key_id": "[REDACTED:aws-access-key]",
            "aws_secret_access_key": "[REDACTED:aws-secret-key]",
        },
    }
    assert {(w.message, w.pointer) for w in spec.warnings} >= {
        ("secret scrubbed: secret", OP),
        ("secret scrubbed: secret", f"{OP}/parameters/0"),
        ("secret scrubbed: aws-access-key", f"{OP}/requestBody/content/application~1json/example"),
        ("secret scrubbed: aws-secret-key", f"{OP}/requestBody/content/application~1json/example"),
    }


def test_a_guide_loads_without_its_aws_example_keys_or_labelled_secrets(tmp_path: Path) -> None:
    guide = tmp_path / "credentials.md"
    guide.write_text(
        "# Credentials\n\nAWS documents this key pair:\n\n```ini\n[default]\n"
        f"aws_access_key_id = {AWS_EXAMPLE_ID}\n"
        f"aws_secret_access_key = {AWS_EXAMPLE_SECRET}\n```\n\n"
        f"## Webhooks\n\nThe webhook secret is {HEX40}; the token is {B64_40}.\n",
        encoding="utf-8",
    )
    [page] = load_docs(guide)
    texts = "\n".join(section.text for section in page.sections)
    assert not [secret for secret in SECRETS if secret in texts]
    assert "aws_access_key_id = [REDACTED:aws-access-key]" in texts
    assert "aws_secret_access_key = [REDACTED:aws-secret-key]" in texts
    assert "The webhook secret is [REDACTED:secret]; the token is [REDACTED:token]." in texts
