"""Code sites read from the graph: where the team's code calls an API, and how sure the link is."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from apiatlas.graph.build.linker import extract_mentions, link
from apiatlas.graph.model import Node
from apiatlas.graph.store import KnowledgeGraphStore


class CodeSite(BaseModel):
    """One call in the team's code that reaches an API.

    Attributes:
        file: Relative to its code set's folder, ``/`` separators.
        line: 1-based line the call begins on.
        endpoint: ``METHOD /path`` of the endpoint it calls, or ``None`` for a call to the API
            that reaches none of its ingested endpoints (an unknown call).
        api: The API it calls.
        confidence: How often a site matched this way was right on the dev code sets.
        matched_by: How the call was matched (``http``, ``route``, ``path``, ``operation-id``,
            ``sdk``; ``host``, ``ambiguous``, ``client`` for unknown calls).
    """

    file: str
    line: int
    endpoint: str | None
    api: str
    confidence: float
    matched_by: str
    code_set: str
    root: str = Field(default="", exclude=True)
    """The folder its code set was scanned from (``file`` is relative to it)."""
    function: str = ""
    language: str = ""
    text: str = ""
    method: str | None = None
    path: str | None = None
    deprecated: bool = False
    replacement: list[str] = Field(default_factory=list)
    """For a deprecated endpoint: the endpoints its description names that are not deprecated
    (``Deprecated: use `POST /v2/locations` instead``)."""
    endpoint_key: str | None = Field(default=None, exclude=True)

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"

    @property
    def sent(self) -> str:
        """What the call sends (``GET /v2/invoices``), else its text."""
        if self.path is None:
            return self.text
        return f"{self.method} {self.path}" if self.method else self.path

    @property
    def source(self) -> str:
        """The file's full path where its folder is known, else its relative path."""
        return f"{self.root.rstrip('/')}/{self.file}" if self.root else self.file


def code_sites(graph: KnowledgeGraphStore, project: str, *, api: str | None = None,
               endpoint_keys: Iterable[str] | None = None,
               under: str | None = None) -> list[CodeSite]:  # fmt: skip
    """The project's code sites, by code set, file and line.

    Args:
        api: Only the sites calling this API.
        endpoint_keys: Only the sites calling these endpoints (graph keys).
        under: Only the sites in this file, or in files under this folder (relative path).
    """
    wanted = set(endpoint_keys) if endpoint_keys is not None else None
    deprecated = replacements(graph.nodes(project, "Endpoint"))
    found = []
    for node in graph.nodes(project, "CodeSite"):
        site = _site(node, deprecated)
        if api is not None and site.api != api:
            continue
        if wanted is not None and site.endpoint_key not in wanted:
            continue
        if under is not None and not _within(site.file, under):
            continue
        found.append(site)
    return sorted(found, key=lambda s: (s.code_set, s.file, s.line))


def replacements(endpoints: list[Node]) -> dict[str, list[str]]:
    """Each deprecated endpoint's key -> the live endpoints of its API its description names,
    as ``METHOD /path`` (read as the guides' links are)."""
    live = [n for n in endpoints if not n.props.get("deprecated")]
    old = [n for n in endpoints if n.props.get("deprecated")]
    named = [Node(key=n.key, label="DocSection",
                  props={"mentions": extract_mentions(n.props.get("description") or "")})
             for n in old]  # fmt: skip
    by_key = {n.key: n.props for n in live}
    api_of = {n.key: n.props.get("api") for n in old}
    found: dict[str, list[str]] = {n.key: [] for n in old}
    for edge in link(named, live):
        props = by_key[edge.dst]
        if props.get("api") == api_of[edge.src]:
            found[edge.src].append(f"{props['method']} {props['path']}")
    return found


def _site(node: Node, deprecated: dict[str, list[str]]) -> CodeSite:
    p = node.props
    key = p.get("endpoint_key")
    return CodeSite(
        file=p["file"], line=p["line"], endpoint=p.get("endpoint"), api=p.get("api") or "",
        confidence=p.get("confidence", 0.0), matched_by=p["matched_by"], code_set=p["code_set"],
        root=p.get("root", ""),
        function=p.get("function", ""), language=p.get("language", ""), text=p.get("text", ""),
        method=p.get("method"), path=p.get("path"), endpoint_key=p.get("endpoint_key"),
        deprecated=key in deprecated, replacement=deprecated.get(key or "", []),
    )  # fmt: skip


def _within(file: str, under: str) -> bool:
    folder = under.strip().strip("/").removeprefix("./")
    return not folder or file == folder or file.startswith(folder + "/")
