"""Limits on what a spec document may make the loader do, checked before anything is built.

A hostile or broken document must fail with a clear error that names the file and the limit, and
never with a ``RecursionError`` traceback or by eating the machine's memory:

- **size**: a document larger than :data:`MAX_DOCUMENT_BYTES` is not read (local files are read
  through :func:`apiatlas.files.read_bounded`, which stops at the limit and refuses FIFOs and
  devices; URLs through the fetcher's own limit);
- **nesting**: objects and arrays nested deeper than :data:`MAX_DEPTH` (real specs stay under
  about 30 levels; the loader's own walks recurse per level);
- **alias expansion**: YAML aliases let a small file stand for a huge tree (the "billion laughs"
  bomb); the tree a document stands for, aliases expanded, may hold at most :data:`MAX_NODES`
  values, and an alias that contains itself is refused;
- **references**: one spec may resolve at most :data:`MAX_REF_RESOLUTIONS` ``$ref``s;
- **strings and enums**: a string longer than :data:`MAX_TEXT_CHARS` is cut (with a warning)
  and only the first :data:`MAX_ENUM_VALUES` values of an ``enum`` are kept: both are data,
  not structure, so the spec still loads.

The walk is iterative, so checking a deep document cannot overflow the stack either.
"""

from __future__ import annotations

from typing import Any

from apiatlas.errors import SpecError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest spec document (or local documentation page) read: 64 MiB; the largest public specs
are about 15 MB."""
MAX_DEPTH = 100
"""Deepest nesting of objects and arrays in a document."""
MAX_NODES = 10_000_000
"""Most values a document may stand for with its YAML aliases expanded."""
MAX_REF_RESOLUTIONS = 2_000_000
"""Most ``$ref`` resolutions while loading one spec."""
MAX_TEXT_CHARS = 100_000
"""Longest string kept whole; longer ones are cut to this many characters."""
MAX_ENUM_VALUES = 100
"""Values of an ``enum`` kept."""

_ADVICE = "the document is probably broken or hostile; fix or split it"


def check_size(size: int, source: str) -> None:
    """Refuse a document of ``size`` bytes above :data:`MAX_DOCUMENT_BYTES`.

    Raises:
        SpecError: The document is too large.
    """
    if size > MAX_DOCUMENT_BYTES:
        raise SpecError(
            f"the document is {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit for one "
            f"spec document: {_ADVICE}.",
            source=source,
        )


def too_deep(source: str) -> SpecError:
    """The error for a document nested deeper than :data:`MAX_DEPTH` (or than the parser can)."""
    return SpecError(
        f"objects and arrays are nested more than {MAX_DEPTH} levels deep, over the limit: "
        f"{_ADVICE}.",
        source=source,
    )


def check_shape(doc: Any, source: str) -> int:
    """Check nesting depth and alias expansion of a parsed document; cut over-long strings.

    Args:
        doc: The parsed JSON or YAML value (changed in place: long strings are cut).
        source: The file or URL, for errors.

    Returns:
        How many strings were cut to :data:`MAX_TEXT_CHARS`.

    Raises:
        SpecError: Too deep, aliases that expand past :data:`MAX_NODES`, or an alias inside
            itself.
    """
    cut = 0
    seen: set[int] = set()
    shared = False
    stack: list[tuple[Any, int]] = [(doc, 1)] if isinstance(doc, dict | list) else []
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise too_deep(source)
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(child, dict | list):
                if id(child) in seen:
                    shared = True  # a YAML alias (JSON never shares a value)
                    continue
                seen.add(id(child))
                stack.append((child, depth + 1))
            elif isinstance(child, str) and len(child) > MAX_TEXT_CHARS:
                value[key] = child[:MAX_TEXT_CHARS] + "…"
                cut += 1
    if shared:
        _check_expansion(doc, source)
    return cut


def _check_expansion(doc: Any, source: str) -> None:
    """Size and height of ``doc`` with its aliases expanded, bottom-up without recursion."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        value, done = stack.pop()
        key = id(value)
        children = [c for c in (value.values() if isinstance(value, dict) else value)
                    if isinstance(c, dict | list)]
        if done:
            on_path.discard(key)
            size[key] = 1 + len(value) + sum(size[id(c)] - 1 for c in children)
            height[key] = 1 + max((height[id(c)] for c in children), default=0)
            if size[key] > MAX_NODES:
                raise SpecError(
                    f"the document stands for more than {MAX_NODES:,} values once its YAML "
                    f"aliases are expanded, over the limit: {_ADVICE}.",
                    source=source,
                )
            if height[key] > MAX_DEPTH:
                raise too_deep(source)
            continue
        if key in size:
            continue
        on_path.add(key)
        stack.append((value, True))
        for child in children:
            if id(child) in on_path:
                raise SpecError(
                    f"a YAML alias refers to a node that contains it: {_ADVICE}.", source=source
                )
            if id(child) not in size:
                stack.append((child, False))


def first_enum_values(values: list[Any]) -> list[Any]:
    """The ``enum`` values kept (the first :data:`MAX_ENUM_VALUES`)."""
    return values[:MAX_ENUM_VALUES]
