"""The thin client of ``apiatlas serve``: ``apiatlas ask --server URL``.

It sends the question over HTTP with the standard library alone and returns the server's JSON,
which is what ``apiatlas ask --json`` prints: no agent, model or store is imported, so a question
costs a small process and the server's few milliseconds. The token comes from ``--token-file``
or ``APIATLAS_SERVE_TOKEN``, as for the server.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apiatlas.errors import RemoteError, UsageError
from apiatlas.files import read_bounded

if TYPE_CHECKING:
    from urllib.error import HTTPError

SERVER_ENV = "APIATLAS_SERVER"
"""The server ``apiatlas ask`` sends questions to when ``--server`` is not given."""
TOKEN_ENV = "APIATLAS_SERVE_TOKEN"
"""The bearer token of the server, for the server and its clients alike."""
PROJECT_ENV = "APIATLAS_PROJECT"
MAX_TOKEN_FILE_BYTES = 4096
"""Largest token file read."""
TIMEOUT_S = 120.0
"""Seconds the client waits for an answer (the server's own limit is shorter by default)."""


def server_url(flag: str | None) -> str | None:
    """The server to ask: ``--server``'s value, else :data:`SERVER_ENV`'s, else ``None``
    (answer in this process).

    Raises:
        UsageError: ``--server`` was given empty (it must not fall back to a local answer).
    """
    if flag is None:
        return os.environ.get(SERVER_ENV) or None
    if not flag.strip():
        raise UsageError("--server needs the server's URL, e.g. http://127.0.0.1:8765")
    return flag


def default_project() -> str | None:
    """The project ``$APIATLAS_PROJECT`` names, if any (else the server's own answers)."""
    return os.environ.get(PROJECT_ENV) or None


def read_token(path: str | None) -> str | None:
    """The token in the file at ``path`` (surrounding whitespace dropped), else the one in
    :data:`TOKEN_ENV`, else ``None``.

    Raises:
        UsageError: The file is missing, unreadable, not a regular file, over
            :data:`MAX_TOKEN_FILE_BYTES`, or holds no token (a ``LoaderError`` naming it).
    """
    if path is None:
        return os.environ.get(TOKEN_ENV) or None
    try:  # bounded: a token file is a line, never a device or a FIFO
        token = read_bounded(Path(path).expanduser(), MAX_TOKEN_FILE_BYTES).decode("utf-8").strip()
    except UnicodeDecodeError as e:
        raise UsageError(f"the token file {path} is not UTF-8 text") from e
    if not token:
        raise UsageError(f"the token file {path} is empty")
    return token


def ask_remote(
    server: str,
    question: str,
    *,
    project: str | None = None,
    api: str | None = None,
    k: int | None = None,
    agent_type: str | None = None,
    at: datetime | None = None,
    token: str | None = None,
    min_confidence: float | None = None,
) -> dict[str, Any]:
    """``POST /ask`` to the server at ``server`` (``http://host:port``); its JSON answer.

    Raises:
        UsageError: ``server`` is not an http(s) URL.
        RemoteError: The server refused (``status`` 4xx) or failed (5xx) the question, or
            could not be reached (``status`` ``None``).
    """
    # Imported here: a process that answers locally never needs them.
    import urllib.error
    import urllib.request

    base = server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise UsageError(f"--server must be an http:// or https:// URL, not {server!r}")
    fields = {"question": question, "project": project, "api": api, "k": k,
              "agent_type": agent_type, "at": None if at is None else at.isoformat(),
              "min_confidence": min_confidence}
    body = json.dumps({name: value for name, value in fields.items() if value is not None})
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"{base}/ask", data=body.encode("utf-8"), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as e:
        raise RemoteError(_refusal(e), status=e.code) from e
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise RemoteError(f"cannot reach the apiatlas server at {base} ({reason})") from e
    except ValueError as e:  # not JSON: not an apiatlas server
        raise RemoteError(f"{base} did not answer with apiatlas JSON ({e})") from e


def _refusal(error: HTTPError) -> str:
    """The server's ``{"error": ...}`` message, or the status when there is none."""
    try:
        message = json.loads(error.read()).get("error")
    except (ValueError, AttributeError, OSError):
        message = None
    return str(message) if message else f"the server answered HTTP {error.code} {error.reason}"
