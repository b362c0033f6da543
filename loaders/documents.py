"""Reading spec documents: JSON and YAML parsed within the loader's limits, and local text files.

:func:`parse_document` picks the parser from a file name or media type, reads YAML with a safe
loader that keeps dates as strings and makes every mapping key a string, and enforces the size,
nesting and alias limits of :mod:`apiatlas.loaders.limits`; :func:`read_file` reads a bounded
UTF-8 file. :class:`~apiatlas.loaders.refs.RefResolver` reads every document through them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from apiatlas.errors import SpecError
from apiatlas.files import read_bounded
from apiatlas.loaders import limits
from apiatlas.loaders.limits import MAX_TEXT_CHARS, check_shape, check_size, too_deep
from apiatlas.loaders.models import LoadWarning

if TYPE_CHECKING:
    from apiatlas.loaders.refs import Warnings

_YAML_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _SpecYamlLoader(_YAML_BASE):  # type: ignore[misc,valid-type]
    """Safe YAML loader that keeps dates as strings and makes every mapping key a string."""


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _key_text(key: object) -> str:
    # YAML reads `200:` as an int and `true:` as a bool; pointers and status codes need text.
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return key if isinstance(key, str) else str(key)


def _construct_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    data: dict[str, Any] = {}
    yield data
    data.update((_key_text(k), v) for k, v in loader.construct_mapping(node).items())


_SpecYamlLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_str)
_SpecYamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


def parse_document(
    text: str, source: str, *, hint: str = "", sink: Warnings | None = None
) -> Any:
    """Parse JSON or YAML text (``hint`` is a file name or media type that picks the parser),
    within the limits of :mod:`apiatlas.loaders.limits`.

    Args:
        text: The document.
        source: Its file or URL, for errors.
        hint: A file name or media type.
        sink: Receives a warning when over-long strings were cut.

    Raises:
        SpecError: With the line number when the text is not valid JSON/YAML; naming the limit
            when the document is too large, too deep or its aliases expand too far.
    """
    check_size(len(text), source)
    try:
        doc = _parse(text, source, hint)
    except RecursionError as e:  # the pure-Python parsers recurse per nesting level
        raise too_deep(source) from e
    cut = check_shape(doc, source)
    if cut and sink is not None:
        sink.add(LoadWarning(
            message=f"{cut} string(s) longer than {MAX_TEXT_CHARS:,} characters were cut.",
            source=source,
        ))
    return doc


def _parse(text: str, source: str, hint: str) -> Any:
    if "json" in hint.lower() or (not hint and text.lstrip().startswith("{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError(
                f"invalid JSON ({e.msg}, column {e.colno}): fix the syntax at this line.",
                source=source,
                line=e.lineno,
            ) from e
    try:
        if _depth_bound(text) > PARSER_SAFE_DEPTH:
            _check_depth(text, source)
        return yaml.load(text, Loader=_SpecYamlLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e)
        raise SpecError(
            f"invalid YAML ({problem}): fix the syntax at this line.", source=source, line=line
        ) from e


PARSER_SAFE_DEPTH = 10_000
"""Nesting the C YAML loader builds without running out of the process's stack: it recurses
in C per level, and a flow sequence nested 25,000 deep (50 KB) crashed the process with a
segmentation fault where 20,000 still gave a clean error. Deeper text is measured first."""
_BLOCK_INDICATOR = re.compile(r"[-?](?=[ \t\r\n])")


def _depth_bound(text: str) -> int:
    """An upper bound of the YAML text's nesting, read in one pass without parsing: every
    level opens with a bracket, a ``-`` or ``?`` indicator or a deeper indentation, and a
    flow sequence entry may hold one implicit mapping more."""
    brackets = text.count("[") + text.count("{")
    indent = max((len(m.group()) for m in re.finditer(r"(?m)^ +", text)), default=0)
    return 2 * (brackets + len(_BLOCK_INDICATOR.findall(text))) + indent + 2


def _check_depth(text: str, source: str) -> None:
    """Refuse text nested deeper than :data:`~apiatlas.loaders.limits.MAX_DEPTH`, from the
    parser's events (libyaml keeps its own stack on the heap), before anything is built."""
    depth = 0
    for event in yaml.parse(text, Loader=_YAML_BASE):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > limits.MAX_DEPTH:
                raise too_deep(source)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def read_file(path: Path) -> str:
    """Read a UTF-8 text file of at most :data:`~apiatlas.loaders.limits.MAX_DOCUMENT_BYTES`.

    Raises:
        SpecError: If the file is missing, unreadable, not a regular file, too large or not UTF-8.
    """
    raw = read_bounded(path, limits.MAX_DOCUMENT_BYTES, SpecError)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SpecError("file is not UTF-8 text: convert it or remove it.", source=str(path)) from e
