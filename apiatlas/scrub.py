"""Secret scrubbing: credentials are removed from text before anything is stored.

API specs and guides carry real-looking credentials in examples, code samples and prose. Every
loader output (and, later, every project-memory note) passes through :func:`scrub_text` or
:func:`scrub_value`, which replace each secret with a label saying what was removed, such as
``[REDACTED:bearer-token]``. Only the secret itself is replaced: ``Authorization: Bearer`` and the
host of a connection string stay, so the text still explains how to authenticate.

Detection is a fixed list of compiled rules (see :func:`~apiatlas.scrub_rules._rules`), run in
order, so the output is deterministic. False positives are kept low on purpose: identifiers such
as ``loc_8f2k1m9q``, UUIDs and hashes are never matched on their own, and a value that is
obviously a placeholder (``<token>``, ``YOUR_API_KEY``, ``$API_TOKEN``, ``{{token}}``, ``xxx``,
``sk_test_...``) stays. What a secret looks like is in :mod:`apiatlas.scrub_rules`, how a value
and its label are judged in :mod:`apiatlas.scrub_values`; their public names are importable
from here too.

Where a well-kept detector has the rule, it is taken from detect-secrets at first use rather than
written again here: the AWS key patterns, the credential words of its keyword detector, and its
Shannon-entropy measure and limits. AWS keys are removed even when they are documented examples
(``AKIAIOSFODNN7EXAMPLE``): a stored example key teaches people to paste keys. A high-entropy
value after a credential label (``secret: 9f8e...``, ``"key": "..."``, ``the token is ...``) is
removed whatever words it contains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from apiatlas.scrub_rules import _rules, _Rule
from apiatlas.scrub_values import _plausible_literal, credential_label, high_entropy, secret_label

# Importable from here as before (_normalise_key by the experiments), though judged in scrub_values.
from apiatlas.scrub_values import MAX_SECRET_CHARS, _normalise_key, is_placeholder, looks_random

__all__ = [
    "MAX_SECRET_CHARS",
    "REDACTED",
    "ScrubResult",
    "credential_label",
    "high_entropy",
    "is_placeholder",
    "looks_random",
    "scrub_text",
    "scrub_value",
    "secret_label",
]

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
