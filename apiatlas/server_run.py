"""Running ``apiatlas serve``: the listening socket, uvicorn, and what answers behind it.

The socket is bound (and listening) before the project is opened, so that a taken port fails at
once and a client that connects early waits in the backlog. The project is opened and warmed,
in this process (one process, questions in threads) or in each of the ``--workers N`` processes
of :class:`~apiatlas.server_answer.InProcesses`; then the CLI prints
``apiatlas serving on http://HOST:PORT (POST /ask...)`` (a parent process reads the port from
it) and uvicorn serves, in this process, every connection.

SIGTERM stops the server as Ctrl-C does: requests in flight are answered, the stores closed.
"""

from __future__ import annotations

import ipaddress
import re
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

import uvicorn
from fastapi import FastAPI

from apiatlas.atlas import ApiAtlas
from apiatlas.client import read_token
from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.server import DEFAULT_TIMEOUT_S, ServeOptions, create_app
from apiatlas.server_answer import InProcesses, warm
from apiatlas.server_guard import MAX_BODY_BYTES, allowed_hosts
from apiatlas.server_protocol import guarded_protocol

MIN_TOKEN_CHARS = 16
_TOKEN = re.compile(r"[\x21-\x7e]+")  # visible ASCII: it travels in a header


@dataclass(frozen=True)
class Launch:
    """What ``apiatlas serve`` was asked for (the command's flags).

    Attributes:
        settings: Overrides of :meth:`Settings.from_env` (home, project, graph, vectors).
        host: The address to bind.
        port: The port (0 picks a free one).
        workers: Processes answering behind the server's own (1: questions in its threads).
        all_projects: Answer for any project a request names.
        allow_hosts: Names ``Host`` may give besides the loopback ones.
        token_file: The file holding the token (else ``APIATLAS_SERVE_TOKEN``, else none).
        timeout: Seconds a request may take.
    """

    settings: dict[str, str] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 8765
    workers: int = 1
    all_projects: bool = False
    allow_hosts: tuple[str, ...] = ()
    token_file: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve(launch: Launch) -> tuple[Settings, ServeOptions]:
    """The settings and the server's options, every flag checked.

    Raises:
        UsageError: A flag is out of range, or the host is not loopback and there is no token
            (or a weak one).
    """
    if launch.workers < 1:
        raise UsageError(f"--workers must be 1 or more, not {launch.workers}")
    if not launch.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {launch.timeout}")
    token = read_token(launch.token_file)
    if token is None and not is_loopback(launch.host):
        raise UsageError(
            f"--host {launch.host} is not a loopback address: give the server a token "
            "(--token-file PATH or APIATLAS_SERVE_TOKEN) so that it answers only your clients"
        )
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not _TOKEN.fullmatch(token)):
        raise UsageError(
            f"the token must be at least {MIN_TOKEN_CHARS} visible ASCII characters without "
            "spaces, e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    settings = Settings.from_env(None, **launch.settings)
    options = ServeOptions(
        project=settings.project,
        all_projects=launch.all_projects,
        token=token,
        hosts=allowed_hosts(launch.allow_hosts),
        max_body_bytes=MAX_BODY_BYTES,
        timeout=launch.timeout,
    )
    return settings, options


def serve(launch: Launch, announce: Callable[[str], None]) -> None:
    """Serve until SIGTERM or Ctrl-C; ``announce`` gets the ``serving on`` line once the
    server takes requests.

    Raises:
        UsageError: Bad flags, or the address cannot be bound.
        ApiAtlasError: The stores or the model failed to open (in a worker process too).
    """
    settings, options = resolve(launch)
    sock = _listen(launch.host, launch.port)
    host, port = sock.getsockname()[:2]
    where = f"[{host}]" if ":" in host else host
    workers = f", {launch.workers} workers" if launch.workers > 1 else ""
    try:
        with _opened(settings, options, launch.workers) as app:
            server = uvicorn.Server(_config(app, options))
            announce(f"apiatlas serving on http://{where}:{port} (POST /ask{workers})")
            with _sigterm_as_interrupt():
                server.run(sockets=[sock])
    finally:
        sock.close()


@contextmanager
def _opened(settings: Settings, options: ServeOptions, workers: int) -> Iterator[FastAPI]:
    """The app, its project opened and warmed in this process or in ``workers`` processes;
    closed at the end."""
    if workers == 1:
        with ApiAtlas(settings) as atlas:
            warm(atlas, options.project)
            yield create_app(options, atlas=atlas)
        return
    answerer = InProcesses(settings, options.project, workers)
    try:
        yield create_app(options, answerer=answerer)
    finally:
        answerer.close()


def _config(app: FastAPI, options: ServeOptions) -> uvicorn.Config:
    # h11 (with a deadline for each request's head) and asyncio whatever else is installed:
    # the server behaves as it was tested.
    return uvicorn.Config(
        app, http=guarded_protocol(options.timeout), loop="asyncio", lifespan="on",
        log_level="warning", access_log=False, server_header=False,
        timeout_graceful_shutdown=int(options.timeout) + 1,
    )  # fmt: skip


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (connections wait in its backlog)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP, and without it
    # a response written in two parts waits for the client's delayed ACK (40 ms a request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as e:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({e.strerror or e})") from e
    sock.set_inheritable(True)
    return sock


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the body as Ctrl-C does (uvicorn raises the signal again once it has shut
    down; Python's default would end the process before the stores are closed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
