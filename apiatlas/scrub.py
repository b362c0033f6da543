"""Secret scrubbing: credentials are removed from text before anything is stored.

API specs and guides carry real-looking credentials in examples, code samples and prose. Every
loader output (and, later, every project-memory note) passes through :func:`scrub_text` or
:func:`scrub_value`, which replace each secret with a label saying what was removed, such as
``[REDACTED:bearer-token]``. Only the secret itself is replaced: ``Authorization: Bearer`` and the
host of a connection string stay, so the text still explains how to authenticate.

Detection is a fixed list of compiled rules (see :func:`_rules`), run in order, so the output is
deterministic. False positives are kept low on purpose: identifiers such as ``loc_8f2k1m9q``,
UUIDs and hashes are never matched on their own, and a value that is obviously a placeholder
(``<token>``, ``YOUR_API_KEY``, ``$API_TOKEN``, ``{{token}}``, ``xxx``, ``sk_test_...``) stays.

Where a well-kept detector has the rule, it is taken from detect-secrets at first use rather than
written again here: the AWS key patterns, the credential words of its keyword detector, and its
Shannon-entropy measure and limits. AWS keys are removed even when they are documented examples
(``AKIAIOSFODNN7EXAMPLE``): a stored example key teaches people to paste keys. A high-entropy
value after a credential label (``secret: 9f8e...``, ``"key": "..."``, ``the token is ...``) is
removed whatever words it contains.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

from apiatlas.errors import ConfigError

if TYPE_CHECKING:
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin


REDACTED = "[REDACTED:{}]"


@dataclass(frozen=True)
class ScrubResult:
    """Scrubbed text and what was removed from it.

    Attributes:
        text: The text with every detected secret replaced by ``[REDACTED:<kind>]``.
        findings: One kind per removed secret, in order of detection (e.g. ``("jwt", "password")``).
    """

    text: str
    findings: tuple[str, ...] = ()


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


def _pem_body_is_key(match: re.Match[str]) -> bool:
    body = match.group("body") or match.group("tail") or ""
    return re.search(r"[A-Za-z0-9+/]{32,}", body) is not None


def _basic_is_credentials(match: re.Match[str]) -> bool:
    token = match.group("secret")
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def _userinfo_is_secret(match: re.Match[str]) -> bool:
    userinfo = match.group("secret")
    if is_placeholder(userinfo):  # also what an earlier scrub left: [REDACTED:credentials]
        return False
    user, _, password = userinfo.partition(":")
    if password:
        return len(password) >= 3 and not is_placeholder(password)
    # `https://<api key>:@host` and `curl -u <api key>:` carry the key as the user name.
    return looks_random(user)


_SECRET_KEY_WORDS = (
    # A space too: notes and guides write "the partner API key: 3f9a...".
    r"pass(?:word|wd|phrase)|secret|api[_ -]?key|private[_-]?key|(?:secret|access)[_ -]?key|token"
    r"|authorization"
)
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


@dataclass(frozen=True)
class _Rule:
    """One kind of secret: a pattern, the group replaced, and an optional check of the match."""

    kind: str
    pattern: re.Pattern[str]
    # Substrings of the lower-cased text without which the rule cannot match: most strings in a
    # spec hold none, and a substring test is far cheaper than a regex scan.
    triggers: tuple[str, ...]
    label: str = ""
    check: Callable[[re.Match[str]], bool] | None = None
    group: str | int = "secret"  # the group replaced
    # Instead of check and group: decides from the match what it is and which group goes
    # (a labelled value: its kind comes from the label, the group from its quoting).
    decide: Callable[[re.Match[str]], tuple[str, str | int] | None] | None = None


def _vendor(kind: str, pattern: str, *triggers: str) -> _Rule:
    # Vendor prefixes are strong evidence, so only masked or marked examples are spared.
    return _Rule(
        kind,
        re.compile(rf"(?<![\w-])(?P<secret>{pattern})(?![\w-])"),
        triggers,
        check=lambda m: _MARKERS.search(m.group("secret")) is None,
    )


_TOKEN_CHARS = r"[A-Za-z0-9._~+/-]"
MAX_SECRET_CHARS = 256
"""Longest value after a label that is read as a secret (an unquoted one, or a high-entropy
run). Bounded so that a rejected match (the search resumes one character after its start) costs
at most this much: unbounded, a text of repeated ``password=`` took quadratic time (18 kB:
7.9 s; 36 kB: 29 s)."""
# Our own rules, in two parts: _rules() puts detect-secrets' AWS rules between them and its
# credential words, with its entropy measure, last.
_BLOCK_RULES: tuple[_Rule, ...] = (
    # PEM blocks, multi-line; without an END line, the base64 run that follows BEGIN. The body
    # runs to the next "-----" and never backtracks, so a page of BEGIN lines stays linear.
    _Rule(
        "private-key",
        re.compile(
            r"(?P<secret>-----BEGIN (?P<k>(?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?"
            r"PRIVATE KEY(?: BLOCK)?)-----(?:(?P<body>(?:[^-]++|-(?!----))*+)-----END (?P=k)-----"
            r"|(?P<tail>[A-Za-z0-9+/=\s\\]*)))"
        ),
        ("-----begin",),
        check=_pem_body_is_key,
    ),
    # scheme://user:password@host: only the user-info goes; scheme, host and path stay. The user
    # may be empty (redis://:password@cache:6379).
    _Rule(
        "connection-string-credentials",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<secret>[^\s:/?#@\"'<>]*:[^\s/?#@\"'<>]*)@"),
        ("://",),
        label="credentials",
        check=_userinfo_is_secret,
    ),
)
_TOKEN_RULES: tuple[_Rule, ...] = (
    _vendor(
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}",
        *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    # Real Slack tokens are long; `xoxp-1234-5678` is a cursor in Square's examples.
    _vendor("slack-token", r"xox[abprs]-[A-Za-z0-9-]{20,}", "xox"),
    _vendor("stripe-key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "k_live_", "k_test_"),
    _vendor("google-api-key", r"AIza[0-9A-Za-z_-]{35}", "aiza"),
    _vendor(
        "openai-key", r"sk-(?:proj-|svcacct-|admin-)[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{32,}", "sk-"
    ),
    # Square application secrets and access tokens (sq0idp-/sq0ids- application ids are public).
    _vendor(
        "square-secret", r"sq0csp-[A-Za-z0-9_-]{22,}|EAAA[A-Za-z0-9_-]{56,}", "sq0csp-", "eaaa"
    ),
    _Rule(
        "bearer-token",
        re.compile(
            rf"\b[Bb]earer\s+(?P<secret>{_TOKEN_CHARS}{{15,}}[\w~+/-]=*)(?![\w=~+/-]|\.\w)"
        ),
        ("bearer",),
        check=lambda m: looks_random(m.group("secret")),
    ),
    _Rule(
        "basic-credentials",
        re.compile(r"\bBasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![\w=+/])"),
        ("basic",),
        check=_basic_is_credentials,
    ),
    _Rule(
        "jwt",
        re.compile(r"(?<![\w-])(?P<secret>eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,})(?![\w-])"),
        ("eyj",),
    ),
    # curl -u <user>:<password> (or -u <api key>:) sends HTTP Basic credentials.
    _Rule(
        "basic-credentials",
        re.compile(r"(?<![\w-])(?:-u|--user)[\s=]+[\"']?(?P<secret>[^\s\"':]+:[^\s\"']*)"),
        ("-u", "--user"),
        check=_userinfo_is_secret,
    ),
    # Labelled secrets in prose, config and code: `password = hunter2`, `"api_key": "abc123"`.
    _Rule(
        "labelled",
        re.compile(
            rf"(?<![\w-])(?P<key>[\w-]*?(?:{_SECRET_KEY_WORDS}))[\"']?\s*(?::=|=>|[:=])\s*"
            r"(?:\"(?P<dq>[^\"\s]+)\"|'(?P<sq>[^'\s]+)'|"
            rf"(?P<bare>[^\s\"'`,;&(){{}}\[\]<>]{{1,{MAX_SECRET_CHARS}}}+)(?!\())",
            re.I,
        ),
        ("pass", "secret", "key", "token", "authorization"),
        decide=lambda match: _labelled(match),  # defined below
    ),
)


def _labelled(match: re.Match[str]) -> tuple[str, str | int] | None:
    """``(kind, group)`` to redact for a labelled-secret match, or ``None`` to keep it."""
    label = secret_label(match.group("key"))
    group = next(g for g in ("dq", "sq", "bare") if match.group(g) is not None)
    value = match.group(group)
    if label is None or not _plausible_literal(value):
        return None
    if group == "bare" and not any(c.isdigit() for c in value) and not looks_random(value):
        return None  # unquoted prose (`token: string`) needs stronger evidence than a quote
    return label, group


@dataclass(frozen=True)
class _DetectSecrets:
    """The parts of detect-secrets this module uses, taken from its plugins on first use.

    Attributes:
        aws_key_id: The AWS detector's access key id pattern (``AKIA...``, ``ASIA...`` ...).
        aws_secret: The AWS detector's pattern for a quoted 40-character secret access key after an
            ``aws ... key`` label; the key is group 1.
        credential_words: The keyword detector's credential words (``api_?key``, ``secret``,
            ``password`` ...) and the AWS detector's (``key``, ``token``, ``pass`` ...), as regexes.
        base64: The base64 entropy plugin: its alphabet, Shannon entropy and limit (4.5).
        hex: The hex entropy plugin: its Shannon entropy (all-digit strings marked down), limit 3.0.
        value: One run of the base64 plugin's alphabet, 20 to 256 long (a candidate value).
    """

    aws_key_id: re.Pattern[str]
    aws_secret: re.Pattern[str]
    credential_words: tuple[str, ...]
    base64: HighEntropyStringsPlugin
    hex: HighEntropyStringsPlugin
    value: re.Pattern[str]

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

    key_id, secret = AWSKeyDetector.denylist  # two patterns; a change in them fails loudly here
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
    )


_MIN_SECRET_LENGTH = 20
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
# Words that end a label phrase from the left: in "note the key is ..." the label is "key".
_DETERMINERS = frozenset(("a", "an", "the", "this", "that", "its", "my", "our", "your", "their"))
# What stands before a label's last word: the rest of its identifier (`aws_secret_access_`,
# `api`), then up to two words on its line ("API key", "secret access key").
_IDENTIFIER_BEFORE = re.compile(r"[\w-]*\Z")
_WORDS_BEFORE = re.compile(r"(?:([A-Za-z]+)[ \t]+)?(?:([A-Za-z]+)[ \t]+)?\Z")


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


def _high_entropy_labelled(match: re.Match[str]) -> tuple[str, str | int] | None:
    """``(kind, group)`` to redact for a high-entropy value after a label, or ``None``.

    The rule matches only a label's last word (``key`` of ``aws_secret_access_key``), which is
    cheaper to scan for; the label is the whole identifier that word ends, with up to two words
    before it on its line (``API key``, ``secret access key``) less those up to a determiner, so
    that "note the key" is ``key``.
    """
    if not high_entropy(match.group("secret")):
        return None
    text, start = match.string, match.start()
    identifier = _IDENTIFIER_BEFORE.search(text, max(0, start - 60), start)
    start = identifier.start() if identifier is not None else start
    before = _WORDS_BEFORE.search(text, max(0, start - 60), start)
    words = [w for w in before.groups() if w] if before is not None else []
    cut = max((i + 1 for i, w in enumerate(words) if w.lower() in _DETERMINERS), default=0)
    label = credential_label(" ".join([*words[cut:], text[start : match.end("word")]]))
    return (label, "secret") if label is not None else None


def _aws_key_id_is_real(match: re.Match[str]) -> bool:
    # Documented examples (AKIAIOSFODNN7EXAMPLE) go too; only a masked id (AKIAXXXX...) stays.
    return _MASKED.fullmatch(match.group("secret")[4:]) is None


def _literal_starts(pattern: str) -> tuple[str, ...]:
    """The literal starts of a pattern that opens with an alternation, lower-cased:
    ``(?:A3T[A-Z0-9]|ABIA|AKIA...)[0-9A-Z]{16}`` gives ``a3t``, ``abia``, ``akia`` ..."""
    group = re.match(r"\(\?:([^()]*)\)", pattern)
    starts = [re.sub(r"\W.*", "", alt).lower() for alt in group[1].split("|")] if group else []
    if not starts or not all(starts):
        raise ConfigError(
            f"detect-secrets' AWS key pattern has an unexpected shape ({pattern}): install the"
            " version pinned in constraints.txt"
        )
    return tuple(starts)


def _last_words(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """Each pattern's last literal word, lower-cased, longest first: ``api_?key`` gives ``key``."""
    words = {re.findall(r"[^\W_]+", pattern)[-1].lower() for pattern in patterns}
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


def _shortest(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` less those that hold another (``password`` goes, ``pass`` stays): triggers."""
    return tuple(w for w in words if not any(v != w and v in w for v in words))


@lru_cache(maxsize=1)
def _rules() -> tuple[_Rule, ...]:
    """Every rule, in the order they run: ours, with detect-secrets' AWS rules after the PEM
    blocks and connection strings, and labels followed by a high-entropy value last."""
    ds = _detect_secrets()
    aws = (
        _Rule(
            "aws-access-key",
            re.compile(rf"(?<![\w-])(?P<secret>{ds.aws_key_id.pattern})(?![\w-])"),
            _shortest(_literal_starts(ds.aws_key_id.pattern)),
            check=_aws_key_id_is_real,
        ),
        _Rule("aws-secret-key", ds.aws_secret, ("aws",), group=1),
    )
    separator = r"(?:[\"'\]]{0,2}\s*(?::=|=>|[:=])\s*|[ \t]+(?:is|was)[ \t]*:?[ \t]*)[\"'`]?"
    words = _last_words(ds.credential_words)
    labelled = _Rule(
        "high-entropy",
        re.compile(rf"(?P<word>{'|'.join(words)}){separator}(?P<secret>{ds.value.pattern})", re.I),
        _shortest(words),
        decide=_high_entropy_labelled,
    )
    return (*_BLOCK_RULES, *aws, *_TOKEN_RULES, labelled)


def _decide(rule: _Rule, match: re.Match[str]) -> tuple[str, str | int] | None:
    """``(kind, group)`` to redact for a match of ``rule``, or ``None`` to keep it."""
    if rule.decide is not None:
        return rule.decide(match)
    if rule.check is not None and not rule.check(match):
        return None
    return rule.kind, rule.group


def _apply(rule: _Rule, text: str, findings: list[str]) -> str:
    """Redact every accepted match of ``rule``.

    A rejected match resumes the search one character after its start, not after its end: in
    ``secret: aws_secret_access_key = wJal...`` the rejected ``secret: aws_secret_access_key``
    would otherwise swallow the real label, and the key after it would never be examined.
    """
    out: list[str] = []
    done = pos = 0
    while (match := rule.pattern.search(text, pos)) is not None:
        decided = _decide(rule, match)
        if decided is None:
            pos = match.start() + 1
            continue
        kind, group = decided
        findings.append(kind)
        start, end = match.span(group)
        out += [text[done:start], REDACTED.format(rule.label or kind)]
        done, pos = end, max(match.end(), match.start() + 1)
    return "".join(out) + text[done:]


@lru_cache(maxsize=8192)
def scrub_text(text: str) -> ScrubResult:
    """Replace every detected secret in ``text`` with ``[REDACTED:<kind>]``.

    Deterministic and idempotent: scrubbing scrubbed text changes nothing. Results are cached
    because specs repeat the same descriptions across many endpoints.

    Args:
        text: Any text: prose, Markdown, code, JSON or YAML.

    Returns:
        The scrubbed text and the kinds removed (one per secret).
    """
    findings: list[str] = []
    lowered = text.lower()
    scrubbed = text
    for rule in _rules():
        if any(trigger in lowered for trigger in rule.triggers):
            scrubbed = _apply(rule, scrubbed, findings)
    return ScrubResult(text=scrubbed, findings=tuple(findings))


def _value_label(key: str, value: str) -> str | None:
    """The kind of secret ``value`` is under ``key``, or ``None`` to keep it.

    A secret key's value goes when it is a plausible literal (not a placeholder); a credential
    word's (``key``, ``secret``, ``aws_secret_access_key`` ...) also when it is high-entropy, even
    if it says ``EXAMPLE``.
    """
    label = secret_label(key)
    if label is not None and _plausible_literal(value):
        return label
    label = label or credential_label(key)
    return label if label is not None and high_entropy(value) else None


def scrub_value(value: Any, *, key: str | None = None) -> tuple[Any, tuple[str, ...]]:
    """Scrub a JSON-like value (dicts, lists, strings) without modifying it.

    Strings are scrubbed with :func:`scrub_text`; a string under a secret key (``password``,
    ``client_secret``, ``apiKey``, ``access_token``, ``authorization`` ...) is replaced whole
    when it still looks like a real secret, and kept when it is a placeholder or a description;
    under any credential word (``key`` too) a high-entropy string is replaced whole.

    Args:
        value: The value; containers are copied only where something changed.
        key: The key the value sits under, when the caller knows it (a field or parameter name).

    Returns:
        The scrubbed value and the kinds removed.
    """
    if isinstance(value, str):
        result = scrub_text(value)
        label = _value_label(key, result.text) if key is not None else None
        if label is not None:
            return REDACTED.format(label), result.findings + (label,)
        return (result.text if result.findings else value), result.findings
    if isinstance(value, dict):
        found: list[str] = []
        out: dict[Any, Any] = {}
        for k, item in value.items():
            out[k], kinds = scrub_value(item, key=str(k))
            found.extend(kinds)
        return (out if found else value), tuple(found)
    if isinstance(value, (list, tuple)):
        pairs = [scrub_value(item, key=key) for item in value]
        kinds = tuple(kind for _, found_kinds in pairs for kind in found_kinds)
        return ([item for item, _ in pairs] if kinds else value), kinds
    return value, ()
