"""The HTTP connection of ``apiatlas serve``: uvicorn's h11 protocol with a deadline for each
request's head, and JSON for a request it cannot parse.

uvicorn closes a keep-alive connection that sends nothing after a response, but not one that
never sends a request, nor one that trickles its headers a byte at a time: a few hundred such
clients hold a server's connections as long as they like. Here a connection has
:func:`head_seconds` from its first byte (or from opening) to send a request's whole head; past
that it gets ``408`` and is closed. The body has its own limit (:mod:`apiatlas.server_guard`).

A request h11 refuses (malformed, or a head over uvicorn's 16 KiB) gets the server's one shape
of refusal, ``{"error": "..."}``, instead of uvicorn's plain text.
"""

from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_HEAD_SECONDS = 10.0
"""The longest a request's head (request line and headers) may take to arrive: a client sends
it in one write; a slower one is holding the connection."""
LINGER_SECONDS = 2.0
"""How long a refused connection's input is read and dropped after the refusal is sent, before
it is closed: closed at once, a client still sending gets a reset, which can discard the
refusal before the client reads it."""


def head_seconds(timeout: float) -> float:
    """How long a request's head may take: :data:`MAX_HEAD_SECONDS`, or the server's time
    limit for a whole request when that is shorter."""
    return min(MAX_HEAD_SECONDS, timeout)


def _refusal(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 response refusing the request and closing the connection."""
    body = json.dumps({"error": message}).encode("utf-8")
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")  # fmt: skip
    return head.encode("ascii") + body


class GuardedH11Protocol(H11Protocol):
    """:class:`H11Protocol` with the head deadline of :attr:`head_seconds` and JSON refusals
    (see the module docstring). Make one with :func:`guarded_protocol`."""

    head_seconds: float = MAX_HEAD_SECONDS
    _head_timer: asyncio.TimerHandle | None = None
    _refused: bool = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # dropped until the connection closes
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._await_head()  # a request begun, or bytes short of one
        else:
            self._head_arrived()

    def on_response_complete(self) -> None:
        # Between requests uvicorn's keep-alive limit holds; the next head's begins with its
        # first byte.
        self._head_arrived()
        super().on_response_complete()
        if self.conn.their_state is not h11.IDLE:
            self._head_arrived()  # a pipelined request was already read

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        self._refuse(_refusal(
            400, "Bad Request", "the request is not valid HTTP/1.1, or its request line and "
            "headers are over 16 KiB together: send a well-formed request with smaller headers",
        ))  # fmt: skip

    def _await_head(self) -> None:
        if self._head_timer is None and self.timeout_keep_alive_task is None:
            self._head_timer = self.loop.call_later(self.head_seconds, self._head_late)

    def _head_arrived(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self._refuse(_refusal(
            408, "Request Timeout", f"the request's headers did not arrive within "
            f"{self.head_seconds:g} s: send the request line and headers at once",
        ))  # fmt: skip

    def _refuse(self, response: bytes) -> None:
        """Send ``response`` and end the connection: our side at once, then whatever the client
        still sends is dropped for :data:`LINGER_SECONDS` before the connection is closed."""
        self._refused = True
        self.transport.write(response)
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()


def guarded_protocol(timeout: float) -> type[GuardedH11Protocol]:
    """The protocol class for a server whose requests may take ``timeout`` seconds."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"head_seconds": head_seconds(timeout)})  # fmt: skip
