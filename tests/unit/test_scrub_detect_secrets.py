"""The rules taken from detect-secrets: AWS keys (documented examples too) and high-entropy values
after a credential label; ordinary spec text and ids survive.

Fake secrets are assembled by concatenation so that this file does not itself hold strings that
secret scanners flag.
"""

from __future__ import annotations

import re

import pytest

from apiatlas import scrub
from apiatlas.scrub import (
    ScrubResult,
    credential_label,
    high_entropy,
    scrub_text,
    scrub_value,
)
from apiatlas.scrub_rules import _rules
from apiatlas.scrub_values import VENDOR_DETECTORS

# AWS's documented example key pair: an example, but still the shape people paste.
AWS_EXAMPLE_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
# Real-looking ids with the prefixes detect-secrets knows and the old rule did not.
AWS_IDS = ["ABIA" + "Q4NZ7XW2M5KD3PLR", "ACCA" + "R7T2LQ9ZK4WN6XJB", "A3TX" + "J5M2Q8R4Z7K3NW6B"]
AWS_SECRET = "Zq8Rk2Lm4Np6Tv9Xb1Cd3" + "Fg5Hj7Kl0Mn2Pq4Rs6Tu8"
HEX40 = "9f8e7d6c5b4a3928" + "1706f5e4d3c2b1a0ffeeddcc"
B64_40 = "Xq3vL9pT2mK8wR4zN7bC" + "1dF6hJ0sY5gA2eU8iO3t"


@pytest.mark.parametrize(
    "text",
    [
        f"{AWS_EXAMPLE_ID} is the key id used in AWS documentation.",
        f"aws_access_key_id = {AWS_EXAMPLE_ID}",
        f'{{"AccessKeyId": "{AWS_EXAMPLE_ID}"}}',
    ],
)
def test_the_documented_aws_example_key_id_is_scrubbed(text: str) -> None:
    result = scrub_text(text)
    assert AWS_EXAMPLE_ID not in result.text
    assert result.findings == ("aws-access-key",)
    assert "[REDACTED:aws-access-key]" in result.text


@pytest.mark.parametrize(
    ("text", "label"),
    [
        (f"aws_secret_access_key = {AWS_EXAMPLE_SECRET}", "aws-secret-key"),
        (f'"aws_secret_access_key": "{AWS_EXAMPLE_SECRET}"', "aws-secret-key"),
        (f"AWS_SECRET_ACCESS_KEY={AWS_EXAMPLE_SECRET}", "aws-secret-key"),
        (f"aws_key = '{AWS_EXAMPLE_SECRET}'", "aws-secret-key"),  # detect-secrets' quoted form
        (f"The secret access key is {AWS_EXAMPLE_SECRET}.", "aws-secret-key"),
        (f"secret: {AWS_EXAMPLE_SECRET}", "secret"),
    ],
)
def test_the_documented_aws_example_secret_is_scrubbed(text: str, label: str) -> None:
    result = scrub_text(text)
    assert AWS_EXAMPLE_SECRET not in result.text
    assert f"[REDACTED:{label}]" in result.text


@pytest.mark.parametrize("key_id", AWS_IDS)
def test_real_looking_aws_key_ids_are_scrubbed(key_id: str) -> None:
    text = f"export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}"
    result = scrub_text(text)
    assert key_id not in result.text and AWS_SECRET not in result.text
    assert result.text == (
        "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\n"
        "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]"
    )


@pytest.mark.parametrize("label", ["secret", "token", "password", "key", "Secret", "API key"])
@pytest.mark.parametrize("value", [HEX40, B64_40])
@pytest.mark.parametrize(
    "form",
    [
        "{label}: {value}",  # YAML
        '"{label}": "{value}"',  # JSON
        "{label}={value}",  # a query string or .env
        "The {label} is {value}.",  # prose
        "Your {label} is `{value}`, keep it safe.",
        "Note the {label} is: {value}",
    ],
)
def test_a_high_entropy_value_after_a_credential_label_is_scrubbed(
    label: str, value: str, form: str
) -> None:
    text = form.format(label=label, value=value)
    result = scrub_text(text)
    before, _, after = text.partition(value)  # only the value goes: label and prose stay
    assert re.fullmatch(rf"{re.escape(before)}\[REDACTED:[\w-]+\]{re.escape(after)}", result.text)
    assert len(result.findings) == 1


def test_the_label_names_the_kind_removed() -> None:
    assert scrub_text(f"key: {HEX40}").text == "key: [REDACTED:secret]"
    assert scrub_text(f"The access token is {B64_40}").text == (
        "The access token is [REDACTED:token]"
    )
    assert scrub_text(f"Your API key is {HEX40}").text == "Your API key is [REDACTED:api-key]"
    assert scrub_text(f"db_pass = {B64_40}").text == "db_pass = [REDACTED:secret]"


@pytest.mark.parametrize(
    "text",
    [
        # A long operationId or schema name after a label: letters with a digit, low entropy.
        "key: ListCatalogItemsByLocationAndCategoryIdV2",
        '"key": "RetrieveInventoryPhysicalCountsV2Response"',
        # Hex-looking but not random.
        "key: " + "deadbeef" * 5,
        "The secret is " + "abcdef" * 7,
        # A path.
        "The key is /v2/catalog/object/2024-01-15/items/list-by-location/page3",
        # Ordinary sentences.
        "Use the token to call the API; the key is rotated every 90 days.",
        "The token is valid for 30 days and the key is unique per merchant.",
        "Pass the key is-required flag; password policies apply to every account.",
        # A UUID is the usual shape of an example id: kept after `key` (see high_entropy).
        "key: 123e4567-e89b-12d3-a456-426614174000",
        '"key": "3f2504e0-4f89-41d3-9a0c-0305e82c3301"',
        # Tokens and keys that are not credentials, with random-looking values.
        '"page_token": "vHdvHCg0w1F-TmWJcPNpTEnFY2aPEmRBHONwOgZ6Tg"',
        "next page token is yYzyCxj-iIVgP54t6NjKkunDCKYLLpngo-5vAsf",
        f"idempotency_key: {HEX40}",
        f"file_key: {B64_40}",
        f"The sort key is {HEX40}",
        # Masked AWS ids stay, as other masked keys do.
        "AKIA" + "X" * 16 + " is your access key id.",
        # A label with a value too short to measure.
        "key: a1b2c3d4e5",
    ],
)
def test_ordinary_spec_text_survives(text: str) -> None:
    assert scrub_text(text) == ScrubResult(text=text, findings=())


def test_scrub_value_redacts_high_entropy_values_under_credential_words() -> None:
    value = {
        "key": HEX40,
        "aws_secret_access_key": AWS_EXAMPLE_SECRET,
        "AccessKeyId": AWS_EXAMPLE_ID,
        "idempotency_key": HEX40,
        "page_token": B64_40,
        "name": B64_40,
        "password": "YOUR_PASSWORD",
    }
    scrubbed, findings = scrub_value(value)
    assert scrubbed == {
        "key": "[REDACTED:secret]",
        "aws_secret_access_key": "[REDACTED:aws-secret-key]",
        "AccessKeyId": "[REDACTED:aws-access-key]",
        "idempotency_key": HEX40,
        "page_token": B64_40,
        "name": B64_40,
        "password": "YOUR_PASSWORD",
    }
    assert sorted(findings) == ["aws-access-key", "aws-secret-key", "secret"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (HEX40, True),
        (B64_40, True),
        (AWS_EXAMPLE_SECRET, True),
        ("deadbeef" * 5, False),
        ("123e4567-e89b-12d3-a456-426614174000", False),
        ("ListCatalogItemsByLocationAndCategoryIdV2", False),
        ("0123456789" * 4, False),  # digits only
        (HEX40[:19], False),  # too short
        (HEX40 + " words", False),  # not one run
    ],
)
def test_high_entropy(value: str, expected: bool) -> None:
    assert high_entropy(value) is expected


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("key", "secret"),
        ("pwd", "secret"),
        ("auth_key", "secret"),
        ("client secret", "secret"),
        ("API key", "api-key"),
        ("secret access key", "aws-secret-key"),
        ("access token", "token"),
        ("page_token", None),
        ("idempotency key", None),
        ("file_key", None),
        ("monkey", None),
    ],
)
def test_credential_label(label: str, kind: str | None) -> None:
    assert credential_label(label) == kind


@pytest.mark.parametrize("label", ["key=", "password=", "token: "])
def test_a_long_run_of_labels_is_examined_in_bounded_pieces(
    label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each label starts a candidate value that runs to the end of the text, and a rejected match
    # resumes one character after its start: unbounded, the work grew with the square of the
    # text (36 kB of "password=": 29 s). Each match examined must stay short.
    examined: list[int] = []
    decide = scrub._decide

    def counting(rule: object, match: re.Match[str]) -> object:
        examined.append(len(match.group(0)))
        return decide(rule, match)  # type: ignore[arg-type]

    monkeypatch.setattr(scrub, "_decide", counting)
    text = label * 20_000
    assert scrub_text.__wrapped__(text) == ScrubResult(text=text, findings=())
    assert examined and max(examined) <= scrub.MAX_SECRET_CHARS + 2 * len(label) + 8


@pytest.mark.parametrize(
    "text",
    [
        '"sid": "SKaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"',  # Twilio's spec: filler, not a key
        "GET /2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Calls.json",  # an account SID
        "The secret is base64-encoded and the token is valid for 3600 seconds.",
        "The password is required and must be at least 8 characters.",
        "next page token is yYzyCxj-iIVgP54t6NjKkunDCKYLLpngo-5vAsf",
    ],
)
def test_filler_ids_and_sentences_about_secrets_are_kept(text: str) -> None:
    assert scrub_text(text).text == text


def test_every_vendor_detector_taken_from_detect_secrets_is_a_rule() -> None:
    kinds = {rule.kind for rule in _rules()}
    assert {kind for kind, _, _ in VENDOR_DETECTORS.values()} <= kinds
