"""Word-level text helpers shared by the builders and the stores: splitting and singularising."""

from __future__ import annotations

import re

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")

# Irregular or ambiguous plurals the suffix rules below (`_by_suffix`) get wrong; only those
# (a test checks that each entry changes what the rules give).
_IRREGULAR = {
    "statuses": "status",
    "aliases": "alias",
    "analyses": "analysis",
    "indices": "index",
    "people": "person",
    "children": "child",
}
# Words ending in "s" that are already singular and that the suffix rules would shorten.
_SINGULAR_S = {
    "alias",
    "canvas",
    "news",
    "series",
    "species",
    "settings",
    "details",
    "credentials",
    "analytics",
    "terms",
    "totals",
}


def split_words(text: str) -> list[str]:
    """Split identifiers and phrases into lowercase words.

    ``customAttributes``, ``custom-attributes`` and ``custom_attributes`` all give
    ``["custom", "attributes"]``; ``V1ListOrders`` gives ``["v1", "list", "orders"]`` because
    digits stay attached to the word before them.
    """
    out: list[str] = []
    for chunk in _SEPARATORS.split(text):
        if not chunk:
            continue
        parts = _CAMEL.findall(chunk)
        merged: list[str] = []
        for part in parts:
            # Keep version-like tokens ("V1", "oauth2") whole so they can be recognised later.
            if part.isdigit() and merged and not merged[-1].isdigit():
                merged[-1] += part
            else:
                merged.append(part)
        out.extend(p.lower() for p in merged)
    return out


SHORTEST_PLURAL = 4
"""Shorter words are left as they are ("bus", "gas", "its")."""
SHORTEST_IES = 5
"""Shortest "-ies" plural read as "-y" ("entries" -> "entry"; "ties", "lies" stay)."""


def singular(word: str) -> str:
    """The singular of one lowercase English word (rule-based, conservative)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    return word if word in _SINGULAR_S else _by_suffix(word)


def _by_suffix(word: str) -> str:
    """The suffix rules of :func:`singular`, without its word lists."""
    if len(word) < SHORTEST_PLURAL or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) >= SHORTEST_IES:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def is_plural(word: str) -> bool:
    """True when ``word`` looks like a plural noun."""
    return singular(word) != word


def noun_phrase(text: str) -> str:
    """A name as a readable singular phrase: ``customAttributes`` -> ``custom attribute``."""
    words = split_words(text)
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return " ".join(words)


def slug(phrase: str) -> str:
    """``custom attribute`` -> ``custom-attribute`` (for node keys)."""
    return "-".join(split_words(phrase))


_VERSION = re.compile(r"^(v\d+(\.\d+)*(beta|alpha)?\d*|\d+(\.\d+)+)$", re.IGNORECASE)


def is_version(segment: str) -> bool:
    """``v1``, ``V2``, ``v1beta1``, ``2.0`` are version segments."""
    return bool(_VERSION.match(segment))


def is_param(segment: str) -> bool:
    """A templated path segment such as ``{location_id}`` (or ``:id`` / ``<id>`` in prose)."""
    return (segment.startswith("{") and segment.endswith("}")) or (
        segment.startswith((":", "<")) and len(segment) > 1
    )


def param_name(segment: str) -> str:
    """``{location_id}`` -> ``location_id``."""
    return segment.strip("{}<>:")


def path_segments(path: str) -> list[str]:
    """Non-empty segments of a path, without query string."""
    return [s for s in path.split("?", 1)[0].split("/") if s]
