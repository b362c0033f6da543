"""Endpoint signatures as people write them: ``METHOD /path``, compared loosely.

Eval datasets and project-memory refs both name endpoints this way. Two signatures name the same
endpoint when their methods match case-insensitively and their paths match once path-parameter
names are blanked and a trailing slash is dropped.
"""

from __future__ import annotations

import re

from apiatlas.errors import UsageError

_ENDPOINT = re.compile(r"^\s*([A-Za-z]+)\s+(/\S*)\s*$")
_PARAM = re.compile(r"\{[^{}/]*\}")
HTTP_METHODS = frozenset({"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"})


def normalise_endpoint(text: str) -> str:
    """The comparison form of ``METHOD /path``.

    The method is upper-cased; path-parameter names are blanked (``{id}`` -> ``{}``) and a
    trailing slash dropped. The case of the path is kept: HTTP paths are case-sensitive.

    Example:
        >>> normalise_endpoint("post /v2/locations/{id}/")
        'POST /v2/locations/{}'

    Raises:
        UsageError: ``text`` is not ``METHOD /path`` with an HTTP method.
    """
    match = _ENDPOINT.match(text)
    if match is None or match.group(1).upper() not in HTTP_METHODS:
        raise UsageError(
            f"{text!r} is not an endpoint: write it as 'METHOD /path', e.g. 'POST /v2/locations'"
        )
    return f"{match.group(1).upper()} {_normalise_path(match.group(2))}"


def endpoint_key(signature: str) -> str:
    """Like :func:`normalise_endpoint`, but never fails: for what a strategy returned.

    Webhooks of OpenAPI 3.1 have a name instead of a path; they are kept as they are, so they
    simply never equal an expected ``METHOD /path``.
    """
    method, _, path = signature.strip().partition(" ")
    path = path.strip()
    return f"{method.upper()} {_normalise_path(path) if path.startswith('/') else path}"


def _normalise_path(path: str) -> str:
    path = _PARAM.sub("{}", path)
    return path.rstrip("/") or "/"
