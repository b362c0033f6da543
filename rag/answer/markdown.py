"""What an answer's Markdown may carry from the docs: links that a reader can follow safely, and
code that reads as it runs.

Guides and specs are data. A link into ``javascript:`` (or ``data:``, ``file:`` ...) is shown as
its text; only ``http``, ``https``, ``mailto`` and relative links stay links. Bidirectional
controls (U+202E before ``gnp.exe`` makes a path read ``exe.png``) are shown escaped everywhere,
and in code (inline or fenced) every other invisible or control character is too, so that a
path or a field name reads as the bytes it is.
"""

from __future__ import annotations

import re
import unicodedata

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
"""Link schemes an answer keeps as links."""

_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_SCHEME = re.compile(r"^\s*<?\s*([A-Za-z][A-Za-z0-9+.-]*):")
_INLINE_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*:[^<>\s]*)>")
_DEFINITION = re.compile(r"(?m)^( {0,3}\[[^\]\n]+\]:[ \t]*)(\S+)(.*)$")
_CODE = re.compile(r"(?s)(```.*?(?:```|\Z)|`[^`\n]+`)")


def safe_markdown(text: str) -> str:
    """``text`` with unsafe links reduced to their text and hidden characters escaped."""
    parts = _CODE.split(text)
    out: list[str] = []
    for i, part in enumerate(parts):
        out.append(_escape_hidden(part) if i % 2 else _safe_links(_escape_bidi(part)))
    return "".join(out)


def _unsafe(target: str) -> bool:
    scheme = _SCHEME.match(target)
    return scheme is not None and scheme.group(1).lower() not in SAFE_SCHEMES


def _safe_links(text: str) -> str:
    def inline(match: re.Match[str]) -> str:
        return match.group(2) if _unsafe(match.group(3)) else match.group(0)

    def auto(match: re.Match[str]) -> str:
        return match.group(1) if _unsafe(match.group(1)) else match.group(0)

    def definition(match: re.Match[str]) -> str:
        return match.group(1) + "#" + match.group(3) if _unsafe(match.group(2)) else match.group(0)

    return _DEFINITION.sub(definition, _AUTOLINK.sub(auto, _INLINE_LINK.sub(inline, text)))


def _escape_bidi(text: str) -> str:
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _escape_hidden(code: str) -> str:
    """Code with every control (but newline and tab) and format character escaped."""
    return "".join(
        f"\\u{ord(c):04x}" if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf") else c
        for c in code
    )
