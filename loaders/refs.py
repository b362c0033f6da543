"""Resolving ``$ref``s across files and URLs, over spec documents read as located nodes.

Everything the OpenAPI loader walks is a :class:`Node`: a value plus the :class:`Loc` (document and
RFC 6901 pointer) it was read from. Following a ``$ref`` yields the target's own location, so
provenance always names the file that really holds the text. Documents (JSON, YAML, text) are read
by :mod:`apiatlas.loaders.documents`, whose :func:`parse_document` and :func:`read_file` are
importable from here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urldefrag, urlsplit

from apiatlas.errors import FetchError, SpecError
from apiatlas.loaders.documents import parse_document, read_file
from apiatlas.loaders.limits import MAX_REF_RESOLUTIONS
from apiatlas.loaders.models import LoadWarning

if TYPE_CHECKING:
    from apiatlas.loaders.fetch import FetchPolicy

__all__ = [
    "Loc",
    "Node",
    "RefResolver",
    "Warnings",
    "escape_token",
    "is_remote",
    "parse_document",
    "pointer_get",
    "read_file",
    "ref_name",
    "unescape_token",
]

_STRUCTURED_SUFFIXES = (".json", ".yaml", ".yml")


def escape_token(token: str) -> str:
    """Escape one JSON-pointer reference token (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """Undo :func:`escape_token`."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer_get(doc: Any, pointer: str) -> Any:
    """Return the value at ``pointer`` inside ``doc``.

    Raises:
        KeyError: If the pointer does not lead to a value.
    """
    value = doc
    if not pointer:
        return value
    for raw in pointer.lstrip("/").split("/"):
        token = unescape_token(raw)
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            raise KeyError(token)
    return value


def is_remote(source: str) -> bool:
    """True when ``source`` is an http(s) URL rather than a file path."""
    return source.startswith(("http://", "https://"))


@dataclass(frozen=True)
class Loc:
    """Where a value lives: a document (absolute path or URL) and a JSON pointer inside it."""

    source: str
    pointer: str = ""

    def child(self, *keys: str | int) -> Loc:
        """The location of a value nested under ``keys``."""
        tail = "".join("/" + escape_token(str(k)) for k in keys)
        return Loc(self.source, self.pointer + tail)


@dataclass(frozen=True)
class Node:
    """A value read from a spec, with where it was read from.

    Attributes:
        value: The (already dereferenced) value.
        loc: Its location; after a ``$ref`` this is the target's location.
        ref_name: Name of the last ``$ref`` target followed to reach it (schema name), if any.
    """

    value: Any
    loc: Loc
    ref_name: str | None = None

    @property
    def mapping(self) -> dict[str, Any]:
        """The value when it is a mapping, else an empty dict (malformed input reads as empty)."""
        return self.value if isinstance(self.value, dict) else {}

    def get(self, key: str) -> Node | None:
        """The child node under ``key``, or ``None`` when absent (not dereferenced)."""
        if isinstance(self.value, dict) and key in self.value:
            return Node(self.value[key], self.loc.child(key))
        return None

    def items(self) -> list[tuple[str, Node]]:
        """Children of a mapping as ``(key, node)`` pairs; empty for anything else."""
        if not isinstance(self.value, dict):
            return []
        return [(k, Node(v, self.loc.child(k))) for k, v in self.value.items()]

    def elements(self) -> list[Node]:
        """Children of a list as nodes; empty for anything else."""
        if not isinstance(self.value, list):
            return []
        return [Node(v, self.loc.child(i)) for i, v in enumerate(self.value)]


@dataclass
class Warnings:
    """Collects :class:`LoadWarning`s for one item, without duplicates."""

    items: list[LoadWarning] = field(default_factory=list)

    def add(self, warning: LoadWarning) -> None:
        """Record ``warning`` unless the same message at the same place is already recorded."""
        if warning not in self.items:
            self.items.append(warning)

    def extend(self, warnings: list[LoadWarning]) -> None:
        """Record several warnings."""
        for warning in warnings:
            self.add(warning)


_PLAIN_NAME = re.compile(r"[A-Za-z_][\w.\-]*")


class RefResolver:
    """Loads documents once and follows ``$ref``s between them, cycle-safely.

    Remote (http/https) documents are fetched only when ``fetch`` is set; otherwise a remote
    ``$ref`` is recorded as a warning on the item that uses it.

    Args:
        fetch_policy: Policy for fetching remote documents.
        allow_remote: Whether remote documents may be fetched at all.
        root: The folder local ``$ref``s may read from (resolved, links followed); ``None``:
            anywhere.
    """

    def __init__(self, *, fetch_policy: FetchPolicy | None = None, allow_remote: bool = False,
                 root: Path | None = None):
        self._fetch_policy = fetch_policy
        self._allow_remote = allow_remote or fetch_policy is not None
        self._root = root
        self._docs: dict[str, Any] = {}
        self._failed: dict[str, FetchError] = {}
        """Remote documents that could not be fetched: each is tried once per load, not once
        per ``$ref`` (a spec may point at one unreachable host hundreds of times)."""
        self._resolutions = 0
        self.warnings = Warnings()
        """Warnings about whole documents (strings cut), for the specs that read them."""

    @property
    def sources(self) -> list[str]:
        """Every document loaded so far (file paths and URLs), in loading order."""
        return list(self._docs)

    def add_document(self, source: str, value: Any) -> None:
        """Register an already-parsed document (the root of a fetched spec)."""
        self._docs[source] = value

    def document(self, source: str) -> Any:
        """The parsed document at ``source`` (file path or URL), loading it on first use.

        Raises:
            SpecError: If a file cannot be read or parsed.
            FetchError: If a remote document cannot be fetched.
        """
        if source in self._failed:
            raise self._failed[source].with_traceback(None)
        if source not in self._docs:
            try:
                self._docs[source] = self._load(source)
            except FetchError as e:
                self._failed[source] = e
                raise
        return self._docs[source]

    def _load(self, source: str) -> Any:
        if is_remote(source):
            from apiatlas.loaders.fetch import fetch_text  # the only module allowed on the network

            fetched = fetch_text(source, self._fetch_policy)
            hint = fetched.content_type or urlsplit(fetched.url).path
            return parse_document(fetched.text, source, hint=hint, sink=self.warnings)
        text = read_file(Path(source))
        if source.lower().endswith(_STRUCTURED_SUFFIXES):
            return parse_document(text, source, hint=source, sink=self.warnings)
        # Markdown and other text referenced from descriptions are used verbatim.
        return text

    def deref(self, node: Node, sink: Warnings, *, lenient: bool = False) -> Node | None:
        """Follow ``$ref``s from ``node`` until a non-reference value.

        Sibling keys of a ``$ref`` (allowed in OpenAPI 3.1) override the target's keys.

        Args:
            node: The node to dereference (returned as is when it is not a ``$ref``).
            sink: Receives a warning for every reference that cannot be resolved.
            lenient: Treat a dangling pointer into a loaded document as a warning, not an error.
                Used only where the referring object stands on its own (a property's type):
                real specs (Square) ship a few such refs and the rest of the spec is sound.

        Returns:
            The target node, or ``None`` when a remote reference (or, if ``lenient``, a dangling
            one) cannot be resolved; a warning naming it is added to ``sink``.

        Raises:
            SpecError: For a dangling reference, a missing file, or a loop of pure references.
        """
        seen: list[Loc] = []
        current = node
        while isinstance(current.value, dict) and isinstance(current.value.get("$ref"), str):
            ref = current.value["$ref"]
            self._resolutions += 1
            if self._resolutions > MAX_REF_RESOLUTIONS:
                raise SpecError(
                    f"more than {MAX_REF_RESOLUTIONS:,} $ref resolutions: the references expand "
                    "too far (the spec is probably broken or hostile); fix or split it.",
                    source=current.loc.source,
                    pointer=current.loc.pointer,
                )
            target = self._target(ref, current.loc)
            if target in seen:
                chain = " -> ".join(loc.pointer or loc.source for loc in seen)
                raise SpecError(
                    f"$ref loop ({chain}): a reference must end at a real object.",
                    source=current.loc.source,
                    pointer=current.loc.pointer,
                )
            seen.append(target)
            value = self._lookup(ref, target, current.loc, sink, lenient)
            if value is _UNRESOLVED:
                return None
            siblings = {k: v for k, v in current.value.items() if k != "$ref"}
            if siblings and isinstance(value, dict):
                value = {**value, **siblings}
            current = Node(value, target, ref_name=ref_name(target))
        return current

    def _target(self, ref: str, at: Loc) -> Loc:
        base, fragment = urldefrag(ref)
        if not base:
            source = at.source
        elif is_remote(at.source) or is_remote(base):
            source = urljoin(at.source, base)
            if not is_remote(source):
                # A fetched document must never make us open a local file.
                raise SpecError(
                    f"$ref {ref!r} in a remote document is not an http(s) URL: fix the reference.",
                    source=at.source,
                    pointer=at.pointer,
                )
        else:
            target = (Path(at.source).parent / unquote(base)).resolve()
            if self._root is not None and not target.is_relative_to(self._root):
                # Whether the file exists is not said: a spec must not probe the machine.
                raise SpecError(
                    f"$ref {ref!r} leads outside the folder of the spec ({self._root}): copy the "
                    "file into it, or allow it (`ingest --read-outside`).",
                    source=at.source,
                    pointer=at.pointer,
                )
            source = str(target)
        return Loc(source, unquote(fragment))

    def _lookup(self, ref: str, target: Loc, at: Loc, sink: Warnings, lenient: bool) -> Any:
        if is_remote(target.source) and not self._allow_remote:
            sink.add(_remote_warning(ref, at, "remote references are not fetched offline"))
            return _UNRESOLVED
        try:
            doc = self.document(target.source)
        except FetchError as e:
            sink.add(_remote_warning(ref, at, str(e)))
            return _UNRESOLVED
        except SpecError as e:
            if target.source == at.source:
                raise
            raise SpecError(
                f"$ref {ref!r} points to a file that cannot be loaded ({e}): fix the reference"
                " or add the file.",
                source=at.source,
                pointer=at.pointer,
            ) from e
        pointer = target.pointer
        if pointer and not pointer.startswith("/"):
            return self._anchor(doc, pointer, ref, at, sink)
        try:
            return pointer_get(doc, pointer)
        except KeyError as e:
            if is_remote(target.source):
                sink.add(_remote_warning(ref, at, "the fragment is not in the fetched document"))
                return _UNRESOLVED
            if lenient:
                message = f"dangling $ref {ref!r}: nothing at {pointer!r}; the type is unknown."
                sink.add(LoadWarning(message=message, source=at.source, pointer=at.pointer))
                return _UNRESOLVED
            raise SpecError(
                f"dangling $ref {ref!r}: nothing at {pointer!r} in {target.source}; fix the"
                " reference or define the target.",
                source=at.source,
                pointer=at.pointer,
            ) from e

    def _anchor(self, doc: Any, name: str, ref: str, at: Loc, sink: Warnings) -> Any:
        # A plain-name fragment (`common.json#squareup.common.String`) names an $anchor or $id.
        found = _find_anchor(doc, name) if _PLAIN_NAME.fullmatch(name) else None
        if found is None:
            if is_remote(at.source) or is_remote(ref):
                sink.add(_remote_warning(ref, at, f"no schema named {name!r} in the document"))
                return _UNRESOLVED
            raise SpecError(
                f"$ref {ref!r}: no $anchor or $id named {name!r}; fix the reference.",
                source=at.source,
                pointer=at.pointer,
            )
        return found

    def check_refs(self, value: Any, loc: Loc, sink: Warnings) -> None:
        """Follow every ``$ref`` nested in a literal value (an example) so broken ones surface.

        Example values are kept as written; this only records unresolvable remote references
        as warnings and raises for dangling local ones, like everywhere else in the spec.
        """
        if isinstance(value, dict):
            if isinstance(value.get("$ref"), str):
                self.deref(Node(value, loc), sink)
            for key, child in value.items():
                self.check_refs(child, loc.child(key), sink)
        elif isinstance(value, list):
            for index, child in enumerate(value):
                self.check_refs(child, loc.child(index), sink)


class _Unresolved:
    pass


_UNRESOLVED = _Unresolved()


def _remote_warning(ref: str, at: Loc, why: str) -> LoadWarning:
    return LoadWarning(
        message=f"remote $ref {ref!r} not resolved: {why}.", source=at.source, pointer=at.pointer
    )


def _find_anchor(doc: Any, name: str) -> Any:
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if name in (value.get("$anchor"), value.get("$id"), value.get("id")):
                return value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


def ref_name(loc: Loc) -> str:
    """A readable name for a ref target: the last pointer token, else the file stem."""
    if loc.pointer:
        return unescape_token(loc.pointer.rsplit("/", 1)[-1])
    return Path(urlsplit(loc.source).path).stem
