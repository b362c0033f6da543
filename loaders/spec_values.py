"""Small readers of OpenAPI values that the spec loader and the endpoint builder share.

A list of strings, the URLs of a ``servers`` list (variables set to their defaults), and the
warning for a value of the wrong type that is skipped rather than loaded: what both
:mod:`apiatlas.loaders.openapi` (spec-wide values) and :mod:`apiatlas.loaders.endpoints` (an
operation's own) read the same way.
"""

from __future__ import annotations

from typing import Any

from apiatlas.loaders.models import LoadWarning
from apiatlas.loaders.refs import Node, RefResolver, Warnings
from apiatlas.loaders.schemas import text


def malformed(node: Node, what: str, expected: str) -> LoadWarning:
    """The warning for a value of the wrong type, skipped: names its pointer and what it is."""
    found = {dict: "an object", list: "a list", str: "a string", type(None): "null",
             bool: "a boolean"}.get(type(node.value), "a number")
    return LoadWarning(
        message=f"{what} must be {expected}, but is {found}: skipped. Fix the spec to load it.",
        source=node.loc.source,
        pointer=node.loc.pointer,
    )


def server_urls(owner: Node, resolver: RefResolver, sink: Warnings) -> list[str]:
    """URLs of an OpenAPI 3 ``servers`` list, with server variables set to their defaults."""
    servers = owner.get("servers")
    urls: list[str] = []
    for server in servers.elements() if servers is not None else []:
        resolved = resolver.deref(server, sink)
        value = resolved.mapping if resolved is not None else {}
        url = text(value.get("url"))
        variables = value.get("variables") if isinstance(value.get("variables"), dict) else {}
        for var, spec in variables.items():
            if isinstance(spec, dict) and "default" in spec:
                url = url.replace("{" + var + "}", str(spec["default"]))
        if url:
            urls.append(url)
    return urls


def strings(value: Any) -> list[str]:
    """The items of a list as strings (anything else gives an empty list)."""
    return [str(v) for v in value] if isinstance(value, list) else []
