"""Judging candidate secrets: placeholders, random-looking and high-entropy values, and labels.

What the rules of :mod:`apiatlas.scrub_rules` and :func:`apiatlas.scrub.scrub_value` ask of a
value they found: whether it is obviously a placeholder (:func:`is_placeholder`), looks like
generated key material (:func:`looks_random`; :func:`high_entropy`, by detect-secrets'
Shannon-entropy measure, taken from it at first use), and what kind of secret a key or label
names (:func:`secret_label`, :func:`credential_label`).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from apiatlas.errors import ConfigError

if TYPE_CHECKING:
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin


# A value is a placeholder when it is templated (<x>, {x}, {{x}}, ${X}, $X, %X%, [x]), masked
# (xxx, ***, •••, 000000), truncated (...), or an all-letter identifier such as YOUR_API_KEY.
_TEMPLATED = re.compile(
    r"<[^<>]*>|\{\{.*\}\}|\{[^{}]*\}|\$\{[^{}]*\}|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|\[[^\[\]]*\]"
)
_MASKED = re.compile(r"[xX*•#.\-_]{3,}|0{6,}")
_IDENTIFIER = re.compile(r"[A-Za-z]+(?:[_-][A-Za-z]+)+")
_MARKERS = re.compile(
    r"\.\.\.|…|xxxx|\*\*\*|your|example|placeholder|redacted|dummy|insert|replace", re.I
)
# Attribute access or a call in code (`self.client_secret`, `os.getenv(`): code, not a value.
_CODE_EXPR = re.compile(r"[A-Za-z_$][\w$]*(?:\.[\w$]+)+")


def is_placeholder(value: str) -> bool:
    """Whether ``value`` is obviously a stand-in for a secret rather than a real one."""
    value = value.strip().strip("\"'`")
    if not value or _TEMPLATED.fullmatch(value) or _MASKED.fullmatch(value):
        return True
    if value[0] in "<{$%[":
        return True
    return bool(_IDENTIFIER.fullmatch(value) or _MARKERS.search(value))


def looks_random(token: str, *, min_length: int = 16) -> bool:
    """Whether ``token`` looks like generated key material rather than a word or a name.

    Letters mixed with digits count (hex strings, base64); letters alone only when long and in
    mixed case without separators, because long CamelCase words are rare in random strings.
    """
    if len(token) < min_length or is_placeholder(token):
        return False
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    if has_digit and has_alpha:
        return True
    mixed = any(c.isupper() for c in token) and any(c.islower() for c in token)
    return mixed and len(token) >= 24 and not any(c in "_-" for c in token)


def _plausible_literal(value: str) -> bool:
    # The value of a labelled secret (`"password": "hunter2"`): short passwords are real, but
    # a type name, a description or a code expression is not.
    if len(value) < 6 or is_placeholder(value) or any(c.isspace() for c in value):
        return False
    if _CODE_EXPR.fullmatch(value) or value.lower() in ("true", "false", "null", "none"):
        return False
    has_digit_or_symbol = any(c.isdigit() or not (c.isalnum() or c in "_-.") for c in value)
    return has_digit_or_symbol or looks_random(value)


_TOKEN_KEYS = (
    "token", "access_token", "refresh_token", "auth_token", "id_token", "session_token",
    "oauth_token", "bearer_token", "api_token", "personal_access_token", "security_token",
    "secret_token", "client_token",
)  # fmt: skip


def _normalise_key(key: str) -> str:
    """``key`` in snake case: ``X-API-Key``, ``apiKey`` and ``API key`` all become ``api_key``."""
    norm = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key.strip("\"'` "))
    return re.sub(r"[^a-z0-9]+", "_", norm.lower()).strip("_")


@lru_cache(maxsize=4096)
def secret_label(key: str) -> str | None:
    """The kind of secret a key or header names (``client_secret`` -> ``secret``), or ``None``.

    Keys are matched after normalising case and separators, so ``apiKey``, ``X-API-Key`` and
    ``api_key`` are one key. Tokens that are not credentials (``page_token``, ``version_token``)
    are not secret keys.
    """
    norm = _normalise_key(key)
    if re.search(r"(?:^|_)(?:password|passwd|passphrase)$", norm):
        return "password"
    if norm.endswith("secret_access_key"):
        return "aws-secret-key"
    if norm.endswith("private_key"):
        return "private-key"
    if norm.endswith(("secret", "secret_key")):
        return "secret"
    if norm.endswith(("api_key", "apikey")):
        return "api-key"
    # `x_auth_token` and `github_access_token` name credentials; `page_token` does not.
    if norm in _TOKEN_KEYS or norm.endswith(tuple(f"_{k}" for k in _TOKEN_KEYS[1:])):
        return "token"
    if norm in ("authorization", "proxy_authorization"):
        return "authorization"
    return None


MAX_SECRET_CHARS = 256
"""Longest value after a label that is read as a secret (an unquoted one, or a high-entropy
run). Bounded so that a rejected match (the search resumes one character after its start) costs
at most this much: unbounded, a text of repeated ``password=`` took quadratic time (18 kB:
7.9 s; 36 kB: 29 s)."""
_MIN_SECRET_LENGTH = 20


VENDOR_DETECTORS: dict[str, tuple[str, tuple[str, ...], re.Pattern[str] | None]] = {
    # detect-secrets plugin -> (the kind redacted, lower-case substrings without which its
    # patterns cannot match, which of its patterns are used: all if None). Left to our own
    # rules: AWS, Basic auth, JWT, private keys, GitHub, Slack, Stripe, Square, OpenAI, and the
    # keyword and entropy plugins. Left out: Artifactory's `AP[0-9A-F]...` (ordinary words such
    # as APACHE match it), the public-IP plugin, and the IBM, Cloudant and SoftLayer label
    # patterns (the labelled rules catch those values).
    "GitLabTokenDetector": ("gitlab-token", ("gl", "gr1348941"), None),
    "SendGridDetector": ("sendgrid-key", ("sg.",), None),
    "NpmDetector": ("npm-token", ("_authtoken",), None),
    "PypiTokenDetector": ("pypi-token", ("pypi-",), None),
    "DiscordBotTokenDetector": ("discord-token", (".",), None),
    "MailchimpDetector": ("mailchimp-key", ("-us",), None),
    "TelegramBotTokenDetector": ("telegram-token", (":",), None),
    "AzureStorageKeyDetector": ("azure-storage-key", ("accountkey=",), None),
    # Its API key pattern only: `AC` + 32 hex is an account SID, in every Twilio path and example.
    "TwilioKeyDetector": ("twilio-key", ("sk",), re.compile(r"^SK")),
}
"""The detect-secrets vendor detectors whose patterns the scrubber runs."""


@dataclass(frozen=True)
class _DetectSecrets:
    """The parts of detect-secrets the scrubber uses, taken from its plugins on first use.

    Attributes:
        aws_key_id: The AWS detector's access key id pattern (``AKIA...``, ``ASIA...`` ...).
        aws_secret: The AWS detector's pattern for a quoted 40-character secret access key after an
            ``aws ... key`` label; the key is group 1.
        credential_words: The keyword detector's credential words (``api_?key``, ``secret``,
            ``password`` ...) and the AWS detector's (``key``, ``token``, ``pass`` ...), as regexes.
        base64: The base64 entropy plugin: its alphabet, Shannon entropy and limit (4.5).
        hex: The hex entropy plugin: its Shannon entropy (all-digit strings marked down), limit 3.0.
        value: One run of the base64 plugin's alphabet, 20 to 256 long (a candidate value).
        vendors: The vendor detectors' patterns (GitLab, SendGrid, npm ...), each with the kind
            it is redacted as and its triggers (see :data:`VENDOR_DETECTORS`).
    """

    aws_key_id: re.Pattern[str]
    aws_secret: re.Pattern[str]
    credential_words: tuple[str, ...]
    base64: HighEntropyStringsPlugin
    hex: HighEntropyStringsPlugin
    value: re.Pattern[str]
    vendors: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]

    def is_credential_word(self, norm: str) -> bool:
        """Whether the snake-case ``norm`` is one of the credential words, whole."""
        return any(re.fullmatch(word, norm) for word in self.credential_words)


@lru_cache(maxsize=1)
def _detect_secrets() -> _DetectSecrets:
    # Imported on first use, not with this module: detect-secrets imports requests (about 0.2 s),
    # which a process that never scrubs need not pay.
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )
    from detect_secrets.plugins.keyword import DENYLIST

    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    key_id, secret = AWSKeyDetector.denylist  # two patterns; a change in them fails loudly here
    by_name = {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}
    missing = sorted(set(VENDOR_DETECTORS) - set(by_name))
    if missing:
        raise ConfigError(
            f"detect-secrets has no {', '.join(missing)}: install the version pinned in "
            "constraints.txt"
        )
    vendors = tuple(
        (kind, pattern, triggers)
        for name, (kind, triggers, keep) in VENDOR_DETECTORS.items()
        for pattern in by_name[name].denylist
        if keep is None or keep.search(pattern.pattern)
    )
    base64 = Base64HighEntropyString()
    # The plugin's alphabet holds a backslash (it escapes "-" as for a regex class): in text a
    # backslash ends a value (`\n`, a shell line continuation), so it is left out.
    alphabet = re.escape(base64.charset.replace("\\", ""))
    return _DetectSecrets(
        aws_key_id=key_id,
        aws_secret=secret,
        credential_words=(*DENYLIST, *re.findall(r"\w+", AWSKeyDetector.secret_keyword)),
        base64=base64,
        hex=HexHighEntropyString(),
        # Possessive and bounded, then not followed by more of the alphabet: a run too long to be
        # a key fails after MAX_SECRET_CHARS characters, so "key=key=key=..." stays linear.
        value=re.compile(
            f"[{alphabet}]{{{_MIN_SECRET_LENGTH},{MAX_SECRET_CHARS}}}+(?![{alphabet}])"
        ),
        vendors=vendors,
    )


_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def high_entropy(value: str) -> bool:
    """Whether ``value`` looks like key material by detect-secrets' measure.

    The value must be one run of base64 characters (hex included), 20 to 256 long, with a letter
    and a digit, and not a UUID (the usual shape of an example id); its Shannon entropy must exceed
    detect-secrets' limit for its alphabet (hex 3.0, base64 4.5). Words such as ``EXAMPLE`` in it
    do not spare it.
    """
    ds = _detect_secrets()
    if not ds.value.fullmatch(value) or _UUID.fullmatch(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    plugin = ds.hex if all(c in string.hexdigits for c in value) else ds.base64
    return plugin.calculate_shannon_entropy(value) > plugin.entropy_limit


@lru_cache(maxsize=4096)
def credential_label(phrase: str) -> str | None:
    """The kind of secret a label names, with detect-secrets' credential words too, or ``None``.

    :func:`secret_label`'s kinds first (``client secret`` -> ``secret``, ``access token`` ->
    ``token``); otherwise ``secret`` when the whole label is one of detect-secrets' credential
    words (``key``, ``pwd``, ``auth_key``, ``db_pass`` ...). ``page_token`` and ``file_key`` name
    no credential.
    """
    label = secret_label(phrase)
    if label is None and _detect_secrets().is_credential_word(_normalise_key(phrase)):
        return "secret"
    return label
