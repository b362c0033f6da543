"""Running ``apiatlas serve``: the listening socket, uvicorn, and its worker processes.

The socket is bound (and listening) before the project is opened, so that a taken port fails at
once and a client that connects early waits in the backlog. With one process, the CLI opens and
warms the atlas, prints ``apiatlas serving on http://HOST:PORT (POST /ask)`` (a parent process
reads the port from it) and serves. With ``--workers N``, uvicorn starts N processes on the
same socket; each builds the app with :func:`worker_app` from :data:`OPTIONS_ENV` (the
command's options as JSON: no secret, the token stays in its file or variable) and opens and
warms its own atlas before it takes a request.

SIGTERM stops the server as Ctrl-C does: requests in flight are answered, the stores closed.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import re
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from apiatlas.atlas import ApiAtlas
from apiatlas.client import read_token
from apiatlas.config import Settings
from apiatlas.errors import ApiAtlasError, UsageError
from apiatlas.server import DEFAULT_TIMEOUT_S, ServeOptions, create_app, warm
from apiatlas.server_guard import MAX_BODY_BYTES, allowed_hosts

OPTIONS_ENV = "APIATLAS_SERVE_OPTIONS"
"""The variable through which the ``--workers`` processes get the command's options."""
MIN_TOKEN_CHARS = 16
STARTUP_TIMEOUT_S = 300.0
"""Seconds a worker may take to load its project before the parent asks again."""
_TOKEN = re.compile(r"[\x21-\x7e]+")  # visible ASCII: it travels in a header


@dataclass(frozen=True)
class Launch:
    """What ``apiatlas serve`` was asked for (the command's flags).

    Attributes:
        settings: Overrides of :meth:`Settings.from_env` (home, project, graph, vectors).
        host: The address to bind.
        port: The port (0 picks a free one).
        workers: Processes answering on the socket.
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
        ApiAtlasError: The stores or the model failed to open, or a worker failed to start.
    """
    settings, options = resolve(launch)
    if launch.workers > 1:
        _check_stores(settings)
    sock = _listen(launch.host, launch.port)
    host, port = sock.getsockname()[:2]
    where = f"[{host}]" if ":" in host else host
    line = f"apiatlas serving on http://{where}:{port} (POST /ask"
    try:
        if launch.workers == 1:
            with ApiAtlas(settings) as atlas:
                warm(atlas, options.project)
                server = uvicorn.Server(_config(create_app(options, atlas=atlas), options, 1))
                announce(line + ")")
                with _sigterm_as_interrupt():
                    server.run(sockets=[sock])
            return
        os.environ[OPTIONS_ENV] = json.dumps(asdict(launch))
        config = _config("apiatlas.server_run:worker_app", options, launch.workers)
        supervisor = Multiprocess(config, sockets=[sock])
        stopped = threading.Event()
        threading.Thread(
            target=_announce_when_up, daemon=True,
            args=(host, port, line + f", {launch.workers} workers)", announce, stopped),
        ).start()  # fmt: skip
        try:
            supervisor.run()
        finally:
            stopped.set()
        if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes):
            raise ApiAtlasError("a worker process failed to start: see its messages above")
    finally:
        sock.close()


def worker_app() -> FastAPI:
    """The app of one ``--workers`` process (a uvicorn factory): options from
    :data:`OPTIONS_ENV`; the atlas is opened and warmed when the app starts."""
    given = json.loads(os.environ[OPTIONS_ENV])
    launch = Launch(**{**given, "allow_hosts": tuple(given["allow_hosts"])})
    settings, options = resolve(launch)
    return create_app(options, open_atlas=lambda: ApiAtlas(settings))


def _config(app: Any, options: ServeOptions, workers: int) -> uvicorn.Config:
    # h11 and asyncio whatever else is installed: the server behaves as it was tested. A worker
    # is restarted when it leaves the parent's ping unanswered this long: loading a model on a
    # busy machine must not count as hanging (uvicorn's default is 5 s).
    return uvicorn.Config(
        app, workers=workers, factory=isinstance(app, str), http="h11", loop="asyncio",
        lifespan="on", log_level="warning", access_log=False, server_header=False,
        timeout_graceful_shutdown=int(options.timeout) + 1, timeout_worker_healthcheck=60,
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


def _announce_when_up(host: str, port: int, line: str, announce: Callable[[str], None],
                      stopped: threading.Event) -> None:
    """``announce(line)`` once a worker has answered ``GET /health`` on the socket (the
    workers load their models meanwhile), unless the server stops first."""
    local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    while not stopped.is_set():
        connection = http.client.HTTPConnection(local, port, timeout=STARTUP_TIMEOUT_S)
        try:
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                announce(line)
                return
        except OSError:
            pass
        finally:
            connection.close()
        stopped.wait(0.2)


def _check_stores(settings: Settings) -> None:
    """Open the graph store once before starting workers: a wrong address or home fails here
    with its message, not in every worker."""
    from apiatlas.graph.backends import open_graph_store

    store = open_graph_store(settings)
    try:
        store.revision(settings.project)
    finally:
        store.close()


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
