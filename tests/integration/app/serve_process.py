"""A real ``apiatlas serve`` in its own process, on a free loopback port, and ways to talk to it:
JSON calls through urllib and raw bytes through a socket (for what urllib would never send)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

SERVING = "apiatlas serving on http://127.0.0.1:"


@dataclass
class Server:
    """A running server: its URL, its process and the file its stderr goes to."""

    url: str
    proc: subprocess.Popen[str]
    log: Path

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def rss_kib(self) -> int:
        """The server process's resident memory now (VmRSS, KiB)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


@contextmanager
def running_server(home: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """``apiatlas serve --home home --port 0 *args``, stopped (SIGTERM) at the end."""
    log = home.parent / f"serve-{os.getpid()}-{len(args)}-{id(args)}.log"
    with log.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "apiatlas.cli", "serve", "--home", str(home), "--port", "0",
             *args],
            stdout=subprocess.PIPE, stderr=err, text=True, cwd=home,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if proc.poll() is not None and not line:
            proc.wait(timeout=30)
        assert line.startswith(SERVING), line + log.read_text(encoding="utf-8")
        yield Server(line.split()[3], proc, log)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def call(url: str, body: bytes | None = None, headers: dict[str, str] | None = None,
         ) -> tuple[int, Any, dict[str, str]]:
    """One request; ``(status, parsed JSON body, headers by lower-case name)``, whatever the
    status."""
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read()), _lower(response.headers.items())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), _lower(e.headers.items())


def ask_body(question: str, **fields: Any) -> bytes:
    return json.dumps({"question": question, **fields}).encode()


def raw(port: int, data: bytes) -> tuple[int, bytes]:
    """Send ``data`` as is and read the response until the server closes: its status and
    body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), received[:200]
    return int(head.split()[1]), body


def _lower(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers by lower-case name (servers write them in either case)."""
    return {name.lower(): value for name, value in headers}
