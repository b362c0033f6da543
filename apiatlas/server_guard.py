"""The checks every HTTP request to ``apiatlas serve`` passes before the app reads it.

:class:`RequestGuard` is a plain ASGI middleware, in this order:

1. ``Host`` (and ``Origin``, when a browser sends one) must name an allowed host: loopback
   names by default, so that a page on another site cannot reach the server through a DNS name
   it points at 127.0.0.1 (DNS rebinding). Others get 421 (403 for a foreign ``Origin``).
2. ``Authorization: Bearer <token>`` when the server has a token (compared in constant time):
   401 with ``WWW-Authenticate: Bearer`` otherwise.
3. The request line and headers must be within :data:`MAX_HEAD_BYTES` (431; a larger head
   that the HTTP parser refuses gets 400, also JSON: :mod:`apiatlas.server_protocol`).
4. ``Content-Length`` must be a number within the body limit (400 or 413, before any of the
   body is read), a body must be ``application/json`` (415), and a chunked body is read only up
   to the limit (413). A body that has not all arrived within the server's time limit gets 408
   and its connection closed: a client that declares a body and trickles it holds nothing.

Every refusal is JSON, ``{"error": "..."}``. ``GET /health`` passes without checks: it says
only that the process is up, for load balancers that send neither the server's name nor a token.
The API description (``/docs``, ``/openapi.json``) needs no token, only an allowed ``Host``.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
"""The names a request may give in ``Host`` by default (any port)."""
MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted: a question, not a document."""
MAX_HEAD_BYTES = 16 * 1024
"""Largest request head (its headers, names and values) accepted: the HTTP parser's own limit
for a head that arrives in parts."""
UNCHECKED_PATHS = frozenset({"/health"})
PUBLIC_PATHS = frozenset({"/docs", "/openapi.json"})
"""Paths that need no token: the protocol is no secret (``Host`` is still checked)."""
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class GuardRules:
    """What a request must satisfy.

    Attributes:
        hosts: Host names (lower case, no port) that ``Host`` and ``Origin`` may name.
        token: The bearer token every request needs (``None``: none needed).
        max_body_bytes: The largest body read.
        body_seconds: The longest a body may take to arrive (``None``: no limit).
    """

    hosts: frozenset[str] = LOOPBACK_HOSTS
    token: str | None = None
    max_body_bytes: int = MAX_BODY_BYTES
    body_seconds: float | None = None


def host_name(value: str) -> str:
    """The host of a ``Host`` header value, lower case and without its port
    (``[::1]:8765`` -> ``::1``, ``Example.com:80`` -> ``example.com``)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    if value.count(":") == 1:  # name:port (a bare IPv6 address has more colons)
        return value.split(":", 1)[0]
    return value


def allowed_hosts(extra: Collection[str] = ()) -> frozenset[str]:
    """The loopback names and ``extra`` (``--allow-host``), as :func:`host_name` writes them."""
    return LOOPBACK_HOSTS | {host_name(name) for name in extra if name.strip()}


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None
                   ) -> JSONResponse:
    """The server's one shape of refusal: ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _closing(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """A refusal that closes the connection: the request's body is left unread."""
    return error_response(status, message, {**(headers or {}), "Connection": "close"})


class RequestGuard:
    """ASGI middleware refusing, before the app reads it, any request that fails
    :class:`GuardRules` (see the module docstring)."""

    def __init__(self, app: ASGIApp, rules: GuardRules) -> None:
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNCHECKED_PATHS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        with anyio.move_on_after(self.rules.body_seconds) as waiting:
            body = await _read_body(receive, self.rules.max_body_bytes)
        if waiting.cancelled_caught:
            late = _closing(408, f"the request body did not arrive within "
                                 f"{self.rules.body_seconds:g} s: send it whole, at once")
            await late(scope, receive, send)
            return
        if body is None:  # the client went away
            return
        if isinstance(body, JSONResponse):
            await body(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, scope: Scope, headers: Headers) -> JSONResponse | None:
        """The response refusing the request before its body is read, or ``None``."""
        host = headers.get("host")
        if host is None or host_name(host) not in self.rules.hosts:
            return _closing(
                421, f"this server does not answer for host {host!r}: it answers for "
                f"{', '.join(sorted(self.rules.hosts))} (add names with --allow-host)",
            )
        origin = headers.get("origin")
        if origin is not None and (urlsplit(origin).hostname or "") not in self.rules.hosts:
            return _closing(403, f"requests from origin {origin!r} are refused")
        if self.rules.token is not None and scope["path"] not in PUBLIC_PATHS:
            refused = _token_refusal(headers.get("authorization"), self.rules.token)
            if refused is not None:
                return refused
        if sum(len(name) + len(value) for name, value in scope["headers"]) > MAX_HEAD_BYTES:
            return _closing(431, f"the request's headers are over {MAX_HEAD_BYTES // 1024} KiB "
                                 "together: send smaller ones")
        lengths = headers.getlist("content-length")
        if len(lengths) > 1 or (lengths and not _DIGITS.fullmatch(lengths[0])):
            return _closing(400, "Content-Length must be one whole number of bytes")
        if lengths and int(lengths[0]) > self.rules.max_body_bytes:
            return _closing(
                413, f"the request body is over {self.rules.max_body_bytes} bytes"
            )
        if scope["method"] == "POST" and not _is_json(headers.get("content-type")):
            return _closing(
                415, "send the body as JSON, with the header Content-Type: application/json"
            )
        return None


def _token_refusal(authorization: str | None, token: str) -> JSONResponse | None:
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode("utf-8"), token.encode("utf-8")
    ):
        return None
    challenge = 'Bearer realm="apiatlas"'
    if authorization is not None:
        challenge += ', error="invalid_token"'
    return _closing(
        401, "send the server's token as Authorization: Bearer <token>",
        headers={"WWW-Authenticate": challenge},
    )


def _is_json(content_type: str | None) -> bool:
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    return media_type == "application/json"


async def _read_body(receive: Receive, limit: int) -> bytes | JSONResponse | None:
    """The whole body, read up to ``limit`` bytes; a 413 response past it (the rest is never
    read); ``None`` when the client disconnected."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return _closing(413, f"the request body is over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app ``body`` whole, then whatever the client sends next
    (its disconnection)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed
