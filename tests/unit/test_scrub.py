"""The secret scrubber: every kind is caught with its label, placeholders and ids survive.

Fake secrets are assembled by concatenation so that this file does not itself hold strings that
secret scanners flag.
"""

from __future__ import annotations

import base64
import copy
import json

import pytest

from apiatlas.scrub import ScrubResult, is_placeholder, scrub_text, scrub_value, secret_label

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvZSJ9"
JWT += ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" * 3
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
AWS_ID = "AKIA" + "Z3MSJV5MJ4QKX7YB"
GITHUB = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
SLACK = "xoxb-" + "263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
GOOGLE = "AIza" + "SyD9tSrke72PouQMnMX-a7eZSW0jkFMBWY0"
OPENAI = "sk-proj-" + "T3BlbkFJ9xZ2c4Vb7Nq1LmR8sKd5"
SQUARE_TOKEN = "EAAA" + "l3ikZIe18J2cHlV2bL4EaZHGoJUhtEBT7QA67AgwIHw8Xe1IoUvGsNxAe0Q"
OPAQUE = "EQAAl0OcByu3IYJYScGGg" + "-8E5YNf0r0b6jCTCMy5nOc"


def _pem(kind: str, headers: str = "") -> str:
    return f"-----BEGIN {kind}-----\n{headers}{PEM_BODY}-----END {kind}-----"


BASIC = base64.b64encode(b"merchant42:" + b"Zx9-p4ssw0rd").decode()

# (text, secret that must disappear, expected label)
CASES = [
    ("Authorization: Bearer " + SQUARE_TOKEN[:40], SQUARE_TOKEN[:40], "bearer-token"),
    ('-H "Authorization: Bearer 36849300bca4fbff758d93a3379f1b8e"', "36849300", "bearer-token"),
    ("Authorization: Basic " + BASIC, BASIC, "basic-credentials"),
    (_pem("RSA PRIVATE KEY"), "MIIEow", "private-key"),
    (_pem("OPENSSH PRIVATE KEY"), "MIIEow", "private-key"),
    (_pem("PGP PRIVATE KEY BLOCK", "Version: 1\n\n"), "MIIEow", "private-key"),
    # A key inside a JSON string, where the line breaks are the two characters backslash-n.
    (json.dumps({"key": _pem("EC PRIVATE KEY")}), "MIIEow", "private-key"),
    (f"key = -----BEGIN PRIVATE KEY-----\n{PEM_BODY}", "MIIEow", "private-key"),  # no END line
    (f"aws_access_key_id = {AWS_ID}", AWS_ID, "aws-access-key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG" + "bPxRfiCY1234567", "wJa", "aws-secret-key"),
    (f"export GITHUB_TOKEN={GITHUB}", GITHUB, "github-token"),
    (f"token: {SLACK}", SLACK, "slack-token"),
    (f"stripe.api_key = '{STRIPE}'", STRIPE, "stripe-key"),
    (f"key={GOOGLE}&q=maps", GOOGLE, "google-api-key"),
    (f"OPENAI_API_KEY={OPENAI}", OPENAI, "openai-key"),
    (f"Authorization: Bearer {SQUARE_TOKEN}", SQUARE_TOKEN, "square-secret"),
    ('"client_secret": "sq0csp-' + '30a-4C_tVOnTh14Piza2BfTPBXyLafL"', "30a-4C", "square-secret"),
    (f"Authorization: Bearer {JWT}", JWT, "bearer-token"),
    (f"The id_token is {JWT}.", JWT, "jwt"),
    ("password = hunter2", "hunter2", "password"),
    ('db:\n  password: "Zx9-p4ss!"', "Zx9-p4ss!", "password"),
    ('{"client_secret": "cs_8Hq2LmX0pR4tV7zN"}', "cs_8Hq2LmX0pR4tV7zN", "secret"),
    ('api_key: "abc123def456ghi789"', "abc123def456ghi789", "api-key"),
    ("X-API-Key: a1b2c3d4e5f6g7h8", "a1b2c3d4e5f6g7h8", "api-key"),
    ("curl https://lob.example -u test_" + "0dc8d51e0acffcb1880e0f:", "0dc8", "basic-credentials"),
    ("oauth_token=4cqw0r7vo0s5goyyqnjb&oauth_token_secret=rig3x3j5a9z5j6d4", "4cqw0r7v", "token"),
    # Prose, as in a project-memory note: the label is two words.
    ("The partner API key: 3f9a1c7e2b8d4f60a1c9e7b3d5f28a4c", "3f9a1c7e", "api-key"),
    ("Secret key = Zq8-wX3-pL0-vB7", "Zq8-wX3", "secret"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret", "label"), CASES)
def test_each_kind_is_scrubbed_with_its_label(text: str, secret: str, label: str) -> None:
    result = scrub_text(text)
    assert secret not in result.text
    assert f"[REDACTED:{label}]" in result.text
    assert label in result.findings


def test_connection_string_keeps_scheme_host_and_database() -> None:
    text = "DATABASE_URL=postgres://app_user:" + "s3cr3t-Pa55" + "@db.example.com:5432/app"
    result = scrub_text(text)
    expected = "DATABASE_URL=postgres://[REDACTED:credentials]@db.example.com:5432/app"
    assert result.text == expected
    assert result.findings == ("connection-string-credentials",)
    mongo = scrub_text("mongodb+srv://u:pass@h/db")
    assert mongo.text == "mongodb+srv://[REDACTED:credentials]@h/db"
    # An empty user name before the password, as Redis URLs have.
    redis = scrub_text("REDIS_URL=redis://:" + "s3cr3tRedis9" + "@cache:6379/0")
    assert redis.text == "REDIS_URL=redis://[REDACTED:credentials]@cache:6379/0"


def test_only_the_secret_is_replaced() -> None:
    text = f'headers = {{"Authorization": "Bearer {OPAQUE}"}}  # then call the API'
    result = scrub_text(text)
    expected = 'headers = {"Authorization": "Bearer [REDACTED:bearer-token]"}  # then call the API'
    assert result.text == expected


@pytest.mark.parametrize(
    "text",
    [
        "Create a location with loc_8f2k1m9q and carrier car_3n7x2p.",
        "Request id 123e4567-e89b-12d3-a456-426614174000 failed.",
        "The digest is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 (sha256).",
        'curl -H "Authorization: Bearer <token>" https://api.example.com',
        'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com',
        "Authorization: Bearer {{token}}",
        "Authorization: Bearer YOUR_ACCESS_TOKEN",
        "Authorization: Bearer ${ACCESS_TOKEN}",
        "Use Basic authorization or a Bearer token.",
        '{"password": "string", "apiKey": "YOUR_API_KEY", "token": "xxx", "secret": "***"}',
        '"client_secret": "{{client_secret}}", "password": "<PASSWORD>"',
        "password: must be at least 8 characters",
        "client_secret = os.getenv('CLIENT_SECRET')",
        "token = response.data.access_token;",
        '"version_token": "56pRkL3slrzet2iQrTp9n0bdJVYTB9YEWdTNjQfZOPV6o"',
        '"page_token": "CAISJxIlY2g5ZXJsZ2Z", "cursor": "xoxp-1234-5678-90123"',
        "postgres://<user>:<password>@db.example.com/app",
        "https://api.example.com:8443/v1/items?id=a:b",
        "Include the lines BEGIN RSA PRIVATE KEY and END RSA PRIVATE KEY.",
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        "curl -u YOUR_API_KEY: https://api.example.com",
        "sk_test_" + "xxxxxxxxxxxxxxxxxxxxxxxx",
        "A sk-based key (sk-123) is short.",
        "Send the API key: it is in the dashboard under Developers.",
        "Pass the API key = YOUR_API_KEY as a header.",
        "redis://:@cache:6379/0 needs no password locally.",
    ],
)
def test_placeholders_ids_and_prose_survive(text: str) -> None:
    assert scrub_text(text) == ScrubResult(text=text, findings=())


def test_scrubbing_is_idempotent_and_deterministic() -> None:
    text = "\n".join(case[0] for case in CASES)
    once = scrub_text(text)
    assert len(once.findings) >= len(CASES)
    twice = scrub_text(once.text)
    assert twice.text == once.text and twice.findings == ()
    scrub_text.cache_clear()
    assert scrub_text(text) == once


def test_scrub_value_redacts_by_key_and_keeps_placeholders() -> None:
    value = {
        "merchant": {"id": "MLQW2MYBY81PZ", "location_ids": ["loc_8f2k1m9q"]},
        "credentials": [
            {"username": "ops", "password": "hunter22", "apiKey": "YOUR_API_KEY"},
            {"client_secret": "cs_8Hq2LmX0pR4tV7zN", "access_token": "EAAl3ikZIe18J-2-cHlV"},
        ],
        "authorization": f"Bearer {OPAQUE}",
        "private_key": "$PRIVATE_KEY",
        "token": "The token returned by the authorize call.",
        "note": f"Call with {STRIPE}",
        "count": 3,
        "enabled": True,
    }
    original = copy.deepcopy(value)
    scrubbed, findings = scrub_value(value)
    assert value == original  # never modified in place
    assert scrubbed["merchant"] is value["merchant"]  # untouched parts are not copied
    creds = scrubbed["credentials"]
    assert creds[0] == {
        "username": "ops",
        "password": "[REDACTED:password]",
        "apiKey": "YOUR_API_KEY",
    }
    assert creds[1] == {"client_secret": "[REDACTED:secret]", "access_token": "[REDACTED:token]"}
    assert scrubbed["authorization"] == "Bearer [REDACTED:bearer-token]"
    assert scrubbed["private_key"] == "$PRIVATE_KEY"
    assert scrubbed["token"] == value["token"]
    assert scrubbed["note"] == "Call with [REDACTED:stripe-key]"
    assert (scrubbed["count"], scrubbed["enabled"]) == (3, True)
    assert sorted(findings) == ["bearer-token", "password", "secret", "stripe-key", "token"]


def test_scrub_value_uses_the_given_key_for_bare_values() -> None:
    assert scrub_value("hunter22", key="db_password") == ("[REDACTED:password]", ("password",))
    assert scrub_value("hunter22", key="nickname") == ("hunter22", ())
    assert scrub_value(["a1b2c3d4e5f6"], key="X-Api-Key") == (["[REDACTED:api-key]"], ("api-key",))
    unchanged = {"a": [1, "b"]}
    assert scrub_value(unchanged)[0] is unchanged


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("password", "password"),
        ("db_password", "password"),
        ("clientSecret", "secret"),
        ("oauth_token_secret", "secret"),
        ("apiKey", "api-key"),
        ("X-API-Key", "api-key"),
        ("access_token", "token"),
        ("x-auth-token", "token"),
        ("token", "token"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-key"),
        ("private_key", "private-key"),
        ("Authorization", "authorization"),
        ("page_token", None),
        ("version_token", None),
        ("token_type", None),
        ("password_hint", None),
        ("idempotency_key", None),
    ],
)
def test_secret_label_normalises_keys(key: str, label: str | None) -> None:
    assert secret_label(key) == label


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("<token>", True),
        ("YOUR_API_KEY", True),
        ("$API_TOKEN", True),
        ("{{token}}", True),
        ("${DB_PASSWORD}", True),
        ("xxx", True),
        ("***", True),
        ("R5CZ2NWPJTGV9D82...", True),
        ("[REDACTED:jwt]", True),
        ("hunter22", False),
        ("9BFDXEYKB7H8Y", False),
    ],
)
def test_is_placeholder(value: str, expected: bool) -> None:
    assert is_placeholder(value) is expected


def test_a_rejected_label_does_not_hide_the_real_secret_after_it() -> None:
    # "secret: aws_secret_access_key" is not a secret; the key right after that label is.
    secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ9kL2mN4p"
    result = scrub_text(f"Its secret: aws_secret_access_key = {secret}")
    assert secret not in result.text
    assert result.text.startswith("Its secret: aws_secret_access_key = [REDACTED:")
    assert len(result.findings) == 1
