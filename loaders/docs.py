"""Documentation pages (Markdown, MDX, HTML; files, directories, URLs, sitemaps) into sections.

Each page is split at its ``#`` to ``####`` headings into :class:`DocSection` objects that carry
the heading trail and a GitHub-style anchor, so an answer can cite ``page#anchor``.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from apiatlas.errors import LoaderError, SpecError
from apiatlas.files import read_bounded
from apiatlas.loaders.fetch import Fetched, FetchPolicy, fetch_text
from apiatlas.loaders.documents import parse_document
from apiatlas.loaders.html import html_to_text
from apiatlas.loaders import limits
from apiatlas.loaders.models import DocPage, DocSection, LoadWarning
from apiatlas.loaders.scrubbing import scrub_pages

_log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
HTML_SUFFIXES = (".html", ".htm")
DOC_SUFFIXES = MARKDOWN_SUFFIXES + HTML_SUFFIXES

_MAX_SITEMAP_DEPTH = 2
# Any indent: list items in real docs indent their fences by four spaces or more.
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,4})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_MDX_STATEMENT = re.compile(r"^(?:import|export)\s")
# JSX components are PascalCase; ALL-CAPS names such as <TOKEN> are placeholders in the prose.
_JSX_TAG = re.compile(r"</?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9.]*(?:\s[^<>]*)?/?>")
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|b|br|code|dd|details|div|dl|dt|em|i|img|kbd|li|ol|p|pre|span|strong|sub|"
    r"summary|sup|table|tbody|td|th|thead|tr|u|ul)(?:\s[^<>]*)?/?>",
    re.I,
)
_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.I | re.S)
_COMMENT = re.compile(r"<!--.*?-->|\{/\*.*?\*/\}", re.S)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_SITEMAP_ROOT = re.compile(r"<(?:\w+:)?(?:urlset|sitemapindex)\b")


def load_docs(
    location: str | Path,
    *,
    fetch_policy: FetchPolicy | None = None,
    warnings: list[LoadWarning] | None = None,
) -> list[DocPage]:
    """Load documentation pages from a file, a directory, a page URL or a sitemap URL.

    Args:
        location: A ``.md``/``.markdown``/``.mdx``/``.html``/``.htm`` file, a directory
            (searched recursively, in sorted order), or an http(s) URL of a page or sitemap.
        fetch_policy: Rules for fetching URLs (see :class:`FetchPolicy`).
        warnings: Where to record the files of a directory that were left out (a link to a
            file outside the directory).

    Returns:
        The pages, each split into sections, with secrets scrubbed from the sections' text.

    Raises:
        LoaderError: If a path is missing or unreadable, a file is not valid text, a directory
            holds no doc files, or a URL cannot be fetched (``FetchError``).
    """
    if isinstance(location, str) and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", location):
        return _scrubbed(_load_url(location, fetch_policy or FetchPolicy(), depth=0), location)
    path = Path(location).expanduser().resolve()
    if not path.exists():
        raise LoaderError("no such file or directory: check the path", source=str(path))
    if path.is_dir():
        outside = fetch_policy is not None and fetch_policy.read_outside
        files = _doc_files(path, [] if warnings is None else warnings, outside=outside)
        return _scrubbed([_load_file(f) for f in files], str(path))
    return _scrubbed([_load_file(path)], str(path))


def _scrubbed(pages: list[DocPage], location: str) -> list[DocPage]:
    # Secrets are scrubbed before anything is stored: here, at the loader's output. A section
    # has no warnings list, so the count goes to the log.
    pages, removed = scrub_pages(pages)
    if removed:
        _log.info("scrubbed %d secret(s) from the docs at %s", removed, location)
    return pages


def parse_markdown(text: str, *, source: str, default_title: str) -> DocPage:
    """Split one Markdown/MDX page into sections.

    Args:
        text: The page's Markdown.
        source: File path or URL recorded on the page and its sections.
        default_title: Title used when there is no front-matter title and no ``#`` heading.

    Raises:
        LoaderError: If the YAML front matter is invalid.
    """
    body, fm_title = _front_matter(text, source)
    lines = _strip_mdx(body)
    return _sections(lines, source=source, title=fm_title or _first_h1(lines) or default_title)


def parse_html(html: str, *, source: str, default_title: str) -> DocPage:
    """Sanitise an HTML page and split it into sections (see :func:`html_to_text`)."""
    base_url = source if "://" in source else None
    title, text = html_to_text(html, base_url=base_url)
    lines = text.split("\n")
    return _sections(lines, source=source, title=title or _first_h1(lines) or default_title)


def slugify(heading: str) -> str:
    """GitHub-style anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _doc_files(root: Path, warnings: list[LoadWarning], *, outside: bool = False) -> list[Path]:
    """The documentation files under ``root`` (resolved), in sorted order; a link that leads
    out of ``root`` is left out with a warning (unless ``outside``): a folder of guides must not
    read the machine."""
    files: list[Path] = []
    for p in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        # Hidden folders (.git, .cache) hold tooling files, not documentation.
        if (not p.is_file() or p.suffix.lower() not in DOC_SUFFIXES
                or any(part.startswith(".") for part in p.relative_to(root).parts)):
            continue
        target = p.resolve()
        if not outside and not target.is_relative_to(root):
            warnings.append(LoadWarning(
                message=f"left out: a link to {target}, outside the folder ingested (copy the "
                        "file into the folder, or allow it: `ingest --read-outside`)",
                source=str(p),
            ))
            continue
        files.append(p)
    if not files:
        raise LoaderError(
            f"the directory holds no documentation files ({', '.join(DOC_SUFFIXES)})",
            source=str(root),
        )
    return files


def _load_file(path: Path) -> DocPage:
    suffix = path.suffix.lower()
    if suffix not in DOC_SUFFIXES:
        raise LoaderError(
            f"not a documentation file: use one of {', '.join(DOC_SUFFIXES)}", source=str(path)
        )
    raw = read_bounded(path, limits.MAX_DOCUMENT_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise LoaderError(
            f"not valid UTF-8 (byte {e.start}): re-save the file as UTF-8",
            source=str(path),
            line=line,
        ) from e
    if suffix in HTML_SUFFIXES:
        return parse_html(text, source=str(path), default_title=path.stem)
    return parse_markdown(text, source=str(path), default_title=path.stem)


def _load_url(url: str, policy: FetchPolicy, *, depth: int) -> list[DocPage]:
    fetched = fetch_text(url, policy)
    if is_sitemap(fetched):
        return _load_sitemap(fetched.url, fetched.text, policy, depth=depth)
    return [parse_fetched(fetched)]


def is_markdown(fetched: Fetched) -> bool:
    """Whether a fetched page is Markdown (by media type or ``.md``-like path), not HTML."""
    markdown_type = fetched.content_type in ("text/markdown", "text/x-markdown", "text/plain")
    return markdown_type or urlsplit(fetched.url).path.lower().endswith(MARKDOWN_SUFFIXES)


def parse_fetched(fetched: Fetched, *, source: str | None = None) -> DocPage:
    """Split a fetched Markdown or HTML page into sections.

    Args:
        fetched: The page as :func:`fetch_text` returned it.
        source: The URL to record on the page and its sections (``fetched.url`` by default).
    """
    source = source or fetched.url
    path = urlsplit(source).path
    default_title = PurePosixPath(path).stem or urlsplit(source).hostname or source
    if is_markdown(fetched):
        return parse_markdown(fetched.text, source=source, default_title=default_title)
    return parse_html(fetched.text, source=source, default_title=default_title)


def is_sitemap(fetched: Fetched) -> bool:
    """Whether a fetched document is an XML sitemap or sitemap index."""
    stripped = fetched.text.lstrip()
    is_xml = "xml" in fetched.content_type or stripped.startswith("<?xml")
    if urlsplit(fetched.url).path.lower().endswith("sitemap.xml"):
        return True
    return is_xml and _SITEMAP_ROOT.search(stripped[:2000]) is not None


def sitemap_locations(url: str, text: str) -> list[str]:
    """The ``<loc>`` URLs of a sitemap or sitemap index, in order, without repeats.

    Raises:
        LoaderError: The sitemap declares a DOCTYPE or entities, or is not valid XML.
    """
    # Entity declarations are how XML bombs work; a sitemap never needs them.
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise LoaderError("sitemaps with a DOCTYPE or entities are not accepted", source=url)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise LoaderError(
            f"the sitemap is not valid XML ({e}): check the URL", source=url, line=e.position[0]
        ) from e
    locs = [el.text.strip() for el in root.iter() if el.tag.endswith("loc") and el.text]
    return list(dict.fromkeys(locs))


def _load_sitemap(url: str, text: str, policy: FetchPolicy, *, depth: int) -> list[DocPage]:
    locs = sitemap_locations(url, text)
    if depth >= _MAX_SITEMAP_DEPTH:
        raise LoaderError("sitemaps are nested too deeply (or list each other)", source=url)
    pages: list[DocPage] = []
    for loc in locs:
        pages.extend(_load_url(loc, policy, depth=depth + 1))
    if not pages:
        raise LoaderError("the sitemap lists no pages", source=url)
    return pages


def _front_matter(text: str, source: str) -> tuple[str, str]:
    match = _FRONT_MATTER.match(text)
    if not match:
        return text, ""
    try:
        # The spec loader's parser and limits: size, nesting and aliases are bounded here too.
        data = parse_document(match.group(1), source, hint="front-matter.yaml")
    except SpecError as e:
        raise LoaderError(
            f"in the YAML front matter (the '---' block): {e.message}",
            source=source,
            line=e.line + 1 if e.line is not None else 1,
        ) from e
    title = data.get("title") if isinstance(data, dict) else None
    body = text[match.end() :]
    return body, str(title).strip() if title else ""


def _strip_mdx(text: str) -> list[str]:
    """Drop MDX statements, component tags, comments and inline HTML outside code."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    text = _COMMENT.sub("", _SCRIPT_OR_STYLE.sub("", text))
    for line in text.split("\n"):
        marker = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            out.extend(_strip_tags(prose))
            prose = []
            fence = marker.group(1)
            out.append(line)
        elif not _MDX_STATEMENT.match(line):
            prose.append(line)
    out.extend(_strip_tags(prose))
    return out


def _strip_tags(lines: list[str]) -> list[str]:
    """Remove tags from a run of prose lines; a tag may span lines, inline code is kept."""
    block = "\n".join(lines)
    parts: list[str] = []
    last = 0
    for code in _INLINE_CODE.finditer(block):
        parts.append(_HTML_TAG.sub("", _JSX_TAG.sub("", block[last : code.start()])))
        parts.append(code.group(0))
        last = code.end()
    parts.append(_HTML_TAG.sub("", _JSX_TAG.sub("", block[last:])))
    return "".join(parts).split("\n") if lines else []


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """``(line index, level, heading text)`` of every heading outside fenced code."""
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        heading = _HEADING.match(line)
        if heading and heading.group(2).strip():
            found.append((i, len(heading.group(1)), _plain_heading(heading.group(2))))
    return found


def _plain_heading(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\{#[^}]*\}\s*$", "", text)
    return re.sub(r"[`*]|(?<!\w)_+|_+(?!\w)", "", text).strip()


def _first_h1(lines: list[str]) -> str:
    return next((text for _, level, text in _headings(lines) if level == 1), "")


def _sections(lines: list[str], *, source: str, title: str) -> DocPage:
    headings = _headings(lines)
    bounds = [i for i, _, _ in headings] + [len(lines)]
    sections: list[DocSection] = []
    preamble = _clean_text(lines[: bounds[0]])
    if preamble:
        sections.append(
            DocSection(source=source, title=title, section_path=[title], text=preamble)
        )
    seen: dict[str, int] = {"": 0}
    trail: list[tuple[int, str]] = []
    pending: list[list[str]] = []
    for n, (start, level, heading) in enumerate(headings):
        trail = [(lvl, h) for lvl, h in trail if lvl < level] + [(level, heading)]
        path = [title] + [h for _, h in trail]
        if len(path) > 1 and path[1].casefold() == title.casefold():
            path.pop(1)
        # Every heading takes its anchor in order, as on GitHub, even one merged away below.
        anchor = _unique(slugify(heading), seen)
        text = _clean_text(lines[start + 1 : bounds[n + 1]])
        if not text:
            pending.append(path)
            continue
        # Headings with no text of their own are merged into the next section; an ancestor is
        # already in this section's trail, any other heading is kept as a line of its text.
        carried = [p[-1] for p in pending if p[-1] not in path]
        pending = []
        sections.append(
            DocSection(
                source=source,
                title=title,
                section_path=path,
                anchor=anchor,
                text="\n\n".join(carried + [text]),
            )
        )
    return DocPage(source=source, title=title, sections=sections)


def _unique(slug: str, seen: dict[str, int]) -> str:
    # As github-slugger: repeats get -1, -2 ..., skipping any slug already taken, so a literal
    # "Payload 1" heading after two "Payload" headings still gets its own anchor.
    result = slug
    while result in seen:
        seen[slug] += 1
        result = f"{slug}-{seen[slug]}"
    seen[result] = 0
    return result


def _clean_text(lines: list[str]) -> str:
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in lines)).strip()
