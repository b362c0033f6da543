"""A documentation site on a real ``ThreadingHTTPServer`` at 127.0.0.1, for the crawl tests.

The site records every request (time and path), serves slow pages that only answer once the
test is over (so a time limit must cut them off), and a page that trickles its body byte by byte.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from apiatlas.loaders.fetch import FetchPolicy, clear_robots_cache

HTML = "text/html; charset=utf-8"
SLOW_SECONDS = 10.0
"""How long a slow page waits before answering (or until the site stops)."""


@dataclass
class Page:
    """One route: status, headers and body; ``slow`` waits before the headers, ``trickle``
    sends the body a byte at a time."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": HTML})
    slow: bool = False
    trickle: bool = False


@dataclass
class Site:
    """The routes served and the requests seen (``(clock time, path)``); ``clock`` is the
    crawler's when a test gives the crawl a clock of its own."""

    port: int = 0
    routes: dict[str, Page] = field(default_factory=dict)
    requests: list[tuple[float, str]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    @property
    def paths(self) -> list[str]:
        return [path for _, path in self.requests]

    def html(self, path: str, body: str, **kwargs: object) -> None:
        self.routes[path] = Page(body=body.encode(), **kwargs)  # type: ignore[arg-type]

    @property
    def policy(self) -> FetchPolicy:
        """Private addresses allowed for this site's host only."""
        return FetchPolicy(private_hosts=("127.0.0.1",), timeout=5.0)


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            site.requests.append((site.clock(), self.path))
            missing = Page(b"not found", 404, {"Content-Type": "text/plain"})
            page = site.routes.get(self.path, missing)
            if page.slow and site.stopping.wait(SLOW_SECONDS):
                return
            self.send_response(page.status)
            for name, value in page.headers.items():
                self.send_header(name, value)
            if not page.trickle:
                self.send_header("Content-Length", str(len(page.body)))
            self.end_headers()
            try:
                self._write(page)
            except OSError:
                pass  # the client gave up, as it should

        def _write(self, page: Page) -> None:
            if not page.trickle:
                self.wfile.write(page.body)
                return
            for byte in page.body:
                if site.stopping.wait(0.05):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serve(site: Site) -> Iterator[Site]:
    """Serve ``site`` on 127.0.0.1 (port 0) until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    site.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield site
    finally:
        site.stopping.set()
        server.shutdown()
        server.server_close()
        # A later test may get the same port; it must not see this site's robots.txt.
        clear_robots_cache()
