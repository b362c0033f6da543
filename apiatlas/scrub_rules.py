"""The scrubbing rules: what each kind of secret looks like, in the order the rules run.

Each :class:`_Rule` is a compiled pattern, the cheap substrings without which it cannot match,
and a check (or a decision) that spares placeholders and ordinary text, judged by
:mod:`apiatlas.scrub_values`. :func:`_rules` assembles them once, with detect-secrets' AWS key
patterns and credential words taken from it at first use; :func:`apiatlas.scrub.scrub_text`
runs them.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from apiatlas.errors import ConfigError
from apiatlas.scrub_values import (
    _MARKERS,
    _MASKED,
    MAX_SECRET_CHARS,
    _detect_secrets,
    _plausible_literal,
    credential_label,
    high_entropy,
    is_placeholder,
    looks_random,
    secret_label,
)


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


def _vendor_is_real(match: re.Match[str]) -> bool:
    # Vendor prefixes are strong evidence, so only marked examples and filler are spared
    # (Twilio's spec shows key ids as `SKaaaaaaaa...`).
    secret = match.group("secret")
    return _MARKERS.search(secret) is None and len(set(secret)) > _FILLER_CHARS


_FILLER_CHARS = 4
"""A token of this many distinct characters or fewer is filler, not a key."""


def _vendor(kind: str, pattern: str, *triggers: str) -> _Rule:
    return _Rule(
        kind, re.compile(rf"(?<![\w-])(?P<secret>{pattern})(?![\w-])"), triggers,
        check=_vendor_is_real,
    )


_TOKEN_CHARS = r"[A-Za-z0-9._~+/-]"
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
    # Hugging Face and Anthropic, which detect-secrets does not cover: gitleaks' rules
    # (huggingface-access-token, anthropic-api-key / anthropic-admin-api-key).
    _vendor("huggingface-token", r"hf_[A-Za-z]{34}", "hf_"),
    _vendor("anthropic-key", r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}", "sk-ant-"),
    # npm's own token form (detect-secrets finds it only in an .npmrc `_authToken=` line).
    _vendor("npm-token", r"npm_[A-Za-z0-9]{36}", "npm_"),
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
    # An AWS secret access key after the word secret in prose ("... with secret wJalr..."):
    # 40 characters of its alphabet in mixed case with a digit (the documented example too).
    _Rule(
        "aws-secret-key",
        re.compile(r"(?<![\w-])secret(?:[ _-]?access)?(?:[ _-]?key)?[ \t]+"
                   r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", re.I),
        ("secret",),
        check=lambda m: _mixed_case(m.group("secret")),
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


def _labelled_prose(match: re.Match[str]) -> tuple[str, str | int] | None:
    """``(kind, group)`` for a secret stated in a sentence ("the admin password is ..."), or
    ``None``: only a value in mixed case with a digit, or a random-looking one, is taken for a
    secret ("the secret is base64-encoded" is a sentence)."""
    label = _phrase_label(match.string, match.start("key"), match.end("key"))
    value = match.group("secret")
    if label is None or not _plausible_literal(value):
        return None
    return (label, "secret") if _mixed_case(value) or looks_random(value) else None


_VALUE_CHAR = r"[^\s\"'`,;(){}\[\]<>]"
_PROSE = _Rule(
    "labelled",
    re.compile(
        rf"(?<![\w-])(?P<key>[\w-]*?(?:{_SECRET_KEY_WORDS}))[ \t]+(?:is|was)[ \t]+`?"
        rf"(?P<secret>{_VALUE_CHAR}{{5,{MAX_SECRET_CHARS}}}(?<![.!?:]))",
        re.I,
    ),
    ("pass", "secret", "key", "token"),
    decide=_labelled_prose,
)
"""A secret stated in a sentence: "The admin password is ...". Last: the high-entropy rule
has taken the values it recognises."""


def _mixed_case(value: str) -> bool:
    return (any(c.isdigit() for c in value) and any(c.isupper() for c in value)
            and any(c.islower() for c in value))


# Words that end a label phrase from the left: in "note the key is ..." the label is "key".
_DETERMINERS = frozenset(("a", "an", "the", "this", "that", "its", "my", "our", "your", "their"))
# What stands before a label's last word: the rest of its identifier (`aws_secret_access_`,
# `api`), then up to two words on its line ("API key", "secret access key").
_IDENTIFIER_BEFORE = re.compile(r"[\w-]*\Z")
_WORDS_BEFORE = re.compile(r"(?:([A-Za-z]+)[ \t]+)?(?:([A-Za-z]+)[ \t]+)?\Z")


def _high_entropy_labelled(match: re.Match[str]) -> tuple[str, str | int] | None:
    """``(kind, group)`` to redact for a high-entropy value after a label, or ``None``.

    The rule matches only a label's last word (``key`` of ``aws_secret_access_key``), which is
    cheaper to scan for; the label is the whole identifier that word ends, with up to two words
    before it on its line (``API key``, ``secret access key``) less those up to a determiner, so
    that "note the key" is ``key``.
    """
    if not high_entropy(match.group("secret")):
        return None
    label = _phrase_label(match.string, match.start(), match.end("word"))
    return (label, "secret") if label is not None else None


def _phrase_label(text: str, start: int, end: int) -> str | None:
    """The credential a label ending at ``end`` names: the identifier around ``start`` with up
    to two words before it on its line, less those up to a determiner ("next page token" names
    none; "the admin password", a password)."""
    identifier = _IDENTIFIER_BEFORE.search(text, max(0, start - 60), start)
    start = identifier.start() if identifier is not None else start
    before = _WORDS_BEFORE.search(text, max(0, start - 60), start)
    words = [w for w in before.groups() if w] if before is not None else []
    cut = max((i + 1 for i, w in enumerate(words) if w.lower() in _DETERMINERS), default=0)
    return credential_label(" ".join([*words[cut:], text[start:end]]))


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
    vendors = tuple(_vendor(kind, p.pattern, *triggers) for kind, p, triggers in ds.vendors)
    return (*_BLOCK_RULES, *aws, *vendors, *_TOKEN_RULES, labelled, _PROSE)
