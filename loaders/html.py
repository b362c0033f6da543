"""HTML pages into Markdown-ish text that the heading splitter and the embedder can use.

The page is sanitised with nh3 first (an allowlist, so scripts, styles, event handlers, iframes
and ``javascript:`` links never reach the rest of the pipeline), then BeautifulSoup drops page
chrome and hidden content, and a small renderer writes headings as ``#`` lines, code blocks as
fences, lists as ``-`` items and tables as ``|`` rows.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import nh3
from bs4 import BeautifulSoup, NavigableString, Tag

_ALLOWED_TAGS = {
    "a", "abbr", "article", "aside", "b", "blockquote", "br", "caption", "code", "dd", "del",
    "details", "div", "dl", "dt", "em", "figcaption", "figure", "footer", "form", "h1", "h2",
    "h3", "h4", "h5", "h6", "header", "hr", "i", "kbd", "li", "main", "mark", "nav", "ol", "p",
    "pre", "s", "samp", "section", "small", "span", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
}
# Removed together with their content; everything else outside the allowlist keeps its text.
_DROP_WITH_CONTENT = {
    "script", "style", "iframe", "object", "embed", "noscript", "template", "svg", "math",
    "title", "head", "select", "button", "textarea", "canvas", "audio", "video",
}
_ATTRIBUTES = {
    "*": {"hidden", "aria-hidden", "style", "class"},
    "a": {"href"},
    "td": {"colspan"},
    "th": {"colspan"},
}
_CHROME = ("nav", "aside", "form", "footer")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {
    "article", "div", "section", "main", "header", "figure", "figcaption", "details",
    "summary", "p", "caption", "dl",
}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_FENCE_TOKEN = "\x00FENCE{}\x00"
_INDENT = "\x01"


def html_to_text(html: str, *, base_url: str | None = None) -> tuple[str, str]:
    """Convert an HTML page to its title and readable Markdown-ish text.

    Args:
        html: The page (a full document or a fragment).
        base_url: URL of the page, used to make relative links absolute.

    Returns:
        ``(title, text)``: the ``<title>`` (or first ``<h1>``, or ``""``) and the body text.
    """
    title = _title(html)
    clean = nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        clean_content_tags=_DROP_WITH_CONTENT,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        strip_comments=True,
        link_rel=None,
    )
    soup = BeautifulSoup(clean, "html.parser")
    _drop_chrome(soup)
    renderer = _Renderer(base_url)
    text = renderer.render(soup)
    if not title:
        h1 = soup.find("h1")
        title = _inline_space(h1.get_text(" ")) if h1 else ""
    return title, text


def _title(html: str) -> str:
    # Only the text of <title> is read here, never rendered, so the raw page is safe to parse.
    head = BeautifulSoup(html, "html.parser").find("title")
    return _inline_space(head.get_text(" ")) if head else ""


def _drop_chrome(soup: BeautifulSoup) -> None:
    for tag in soup.find_all(_CHROME):
        tag.decompose()
    for tag in soup.find_all("header"):
        # A page header inside the article usually holds the real <h1>; keep that one.
        if tag.find_parent(("article", "main")) is None:
            tag.decompose()
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        hidden = tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).lower() == "true"
        if hidden or _HIDDEN_STYLE.search(str(tag.get("style", ""))):
            tag.decompose()


def _inline_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _Renderer:
    """Walks the sanitised tree and writes Markdown-ish text."""

    def __init__(self, base_url: str | None) -> None:
        self._base_url = base_url
        self._fences: list[str] = []

    def render(self, soup: BeautifulSoup) -> str:
        raw = self._children(soup)
        lines = [line.strip() for line in raw.split("\n")]
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip().replace(_INDENT, "  ")
        for i, fence in enumerate(self._fences):
            text = text.replace(_FENCE_TOKEN.format(i), fence)
        return text

    def _children(self, node: Tag) -> str:
        return "".join(self._node(child) for child in node.children)

    def _node(self, node: object) -> str:
        if isinstance(node, NavigableString):
            return re.sub(r"\s+", " ", str(node))
        if not isinstance(node, Tag):
            return ""
        name = node.name
        if name in _HEADINGS:
            return f"\n\n{'#' * _HEADINGS[name]} {_inline_space(self._children(node))}\n\n"
        if name == "pre":
            return self._pre(node)
        if name == "code":
            return f"`{node.get_text()}`"
        if name in ("ul", "ol"):
            return "\n\n" + self._list(node, 0) + "\n\n"
        if name == "table":
            return "\n\n" + self._table(node) + "\n\n"
        if name == "br":
            return "\n"
        if name == "hr":
            return "\n\n---\n\n"
        if name == "a":
            return self._link(node)
        if name == "blockquote":
            inner = self._children(node).strip()
            quoted = "\n".join(f"> {line.strip()}" for line in inner.split("\n") if line.strip())
            return f"\n\n{quoted}\n\n"
        if name == "dt":
            return f"\n\n**{_inline_space(self._children(node))}**\n"
        if name == "dd":
            return f"{_inline_space(self._children(node))}\n"
        if name in _BLOCKS:
            return f"\n\n{self._children(node)}\n\n"
        return self._children(node)

    def _pre(self, node: Tag) -> str:
        code = node.find("code")
        classes = (code.get("class") if code else None) or node.get("class") or []
        lang = next(
            (c.split("-", 1)[1] for c in classes if c.startswith(("language-", "lang-"))), ""
        )
        body = node.get_text().strip("\n")
        self._fences.append(f"```{lang}\n{body}\n```")
        # A placeholder keeps the renderer's whitespace clean-up away from the code.
        return f"\n\n{_FENCE_TOKEN.format(len(self._fences) - 1)}\n\n"

    def _list(self, node: Tag, depth: int) -> str:
        lines: list[str] = []
        ordered = node.name == "ol"
        for n, item in enumerate(node.find_all("li", recursive=False), start=1):
            marker = f"{n}." if ordered else "-"
            nested = [child for child in item.children if isinstance(child, Tag)]
            sublists = [c for c in nested if c.name in ("ul", "ol")]
            for sub in sublists:
                sub.extract()
            text = _inline_space(self._children(item))
            # The indent marker survives the line strip in render(), which then turns it to spaces.
            lines.append(f"{_INDENT * depth}{marker} {text}")
            lines.extend(self._list(sub, depth + 1) for sub in sublists)
        return "\n".join(lines)

    def _table(self, node: Tag) -> str:
        rows: list[str] = []
        for row in node.find_all("tr"):
            cells = [
                _inline_space(self._children(cell)).replace("|", "\\|")
                for cell in row.find_all(("th", "td"), recursive=False)
            ]
            if cells:
                rows.append("| " + " | ".join(cells) + " |")
                if len(rows) == 1 and row.find("th", recursive=False) is not None:
                    rows.append("|" + " --- |" * len(cells))
        return "\n".join(rows)

    def _link(self, node: Tag) -> str:
        text = _inline_space(self._children(node))
        href = str(node.get("href", "")).strip()
        if not href or href.startswith("#") or not text:
            return text
        if self._base_url:
            href = urljoin(self._base_url, href)
        if urlsplit(href).scheme not in ("http", "https", "mailto", ""):
            return text
        return f"[{text}]({href})"
