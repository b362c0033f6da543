"""Numbered citations: one number per distinct spec item, guide section or project memory, in
first-use order."""

from __future__ import annotations

import os
from collections.abc import Sequence

from apiatlas.rag.answer.result import Citation


class CitationRegistry:
    """Hands out citation numbers ``[1]``, ``[2]``… and remembers what each one points at.

    Citing the same item twice returns the same number, so numbers in the answer are unique and
    every number resolves to exactly one :class:`~apiatlas.rag.answer.result.Citation`.
    """

    def __init__(self) -> None:
        self._by_uri: dict[str, Citation] = {}

    def spec(self, source: str, pointer: str, title: str = "") -> int | None:
        """Cite a spec item by file and JSON pointer; ``None`` when the source is unknown."""
        if not source:
            return None
        return self._add("spec", source, f"{source}#{pointer}", pointer, title)

    def doc(self, source: str, anchor: str = "", title: str = "") -> int | None:
        """Cite a guide section by file/URL and heading anchor; ``None`` without a source."""
        if not source:
            return None
        uri = f"{source}#{anchor}" if anchor else source
        return self._add("doc", source, uri, anchor, title)

    def memory(self, memory_id: str, title: str = "") -> int:
        """Cite a project memory: uri ``memory:<id>``."""
        return self._add("memory", "memory", f"memory:{memory_id}", memory_id, title)

    def citations(self) -> list[Citation]:
        """All citations, numbered from 1 in the order they were first cited."""
        return sorted(self._by_uri.values(), key=lambda c: c.n)

    def _add(self, kind: str, source: str, uri: str, pointer: str, title: str) -> int:
        found = self._by_uri.get(uri)
        if found is None:
            found = Citation(
                n=len(self._by_uri) + 1,
                kind=kind,  # type: ignore[arg-type]
                source=source,
                uri=uri,
                pointer=pointer,
                title=title,
            )
            self._by_uri[uri] = found
        return found.n

    def sources_markdown(self) -> str:
        """The ``Sources`` list of these citations (see :func:`sources_markdown`)."""
        return sources_markdown(self.citations())


def sources_markdown(citations: Sequence[Citation]) -> str:
    """A ``Sources`` Markdown list, one short line per citation: ``- [n] title — `where` ``,
    files shown relative to the folder all the cited files share (the citations keep the full
    URIs), a guide section by its own heading."""
    root = _shared_folder(citations)
    lines = []
    for c in citations:
        where = c.uri[len(root) + 1:] if root and c.uri.startswith(root + os.sep) else c.uri
        title = c.title.rsplit(HEADING_PATH, 1)[-1] if c.kind == "doc" else c.title
        lines.append(f"- [{c.n}] {title} — `{where}`" if title else f"- [{c.n}] `{where}`")
    return "\n".join(lines)


HEADING_PATH = " > "
"""What joins a guide section's headings in its title (``Locations > Creating a location``)."""


def _shared_folder(citations: Sequence[Citation]) -> str:
    """The deepest folder holding every cited local file (``""``: none, or a URL among them)."""
    files = [c.source for c in citations if c.kind != "memory"]
    if not files or any("://" in f or not os.path.isabs(f) for f in files):
        return ""
    return os.path.commonpath([os.path.dirname(f) for f in files])
