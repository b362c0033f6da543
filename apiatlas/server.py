"""``apiatlas serve``: one warm process answering over HTTP, for millisecond answers.

Every CLI question opens the stores, loads the embedding model and builds the per-project caches
again. A server does that once; each question then costs only its own work. The protocol is
plain JSON over HTTP (standard library only), bound to loopback by default:

- ``POST /ask`` with ``{"question": ..., "project"?, "api"?, "k"?, "agent_type"?}``: the same
  JSON as ``apiatlas ask --json``;
- ``GET /stats?project=...``: the graph's counts, as ``apiatlas graph stats --json``;
- ``GET /health``: ``{"status": "ok"}``.

Bad requests get a 400 with ``{"error": ...}`` that says what to send; apiatlas errors keep their
message (400 for usage errors, 503 for a store that failed). The server keeps serving.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apiatlas.atlas import ApiAtlas
from apiatlas.errors import ApiAtlasError, UsageError
from apiatlas.rag.agent.context import MAX_K

MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted: a question, not a document."""


class AskRequest(BaseModel):
    """The body of ``POST /ask``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    project: str | None = None
    api: str | None = None
    k: int = Field(default=5, ge=1, le=MAX_K)
    agent_type: str | None = None


def make_server(atlas: ApiAtlas, host: str = "127.0.0.1", port: int = 8765) -> ThreadingHTTPServer:
    """An HTTP server answering from ``atlas`` (call ``serve_forever``; ``port=0`` picks one)."""
    lock = threading.Lock()  # one question at a time: the embedded stores share connections

    class Handler(BaseHTTPRequestHandler):
        server_version = "apiatlas"

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            url = urlsplit(self.path)
            if url.path == "/health":
                self._send(HTTPStatus.OK, {"status": "ok"})
            elif url.path == "/stats":
                project = parse_qs(url.query).get("project", [None])[0]
                with lock:
                    stats = atlas.stats(project)
                self._send(HTTPStatus.OK, stats.model_dump(mode="json"))
            else:
                self._send(HTTPStatus.NOT_FOUND, {"error": "use POST /ask, GET /stats or /health"})

        def do_POST(self) -> None:  # noqa: N802
            if urlsplit(self.path).path != "/ask":
                self._send(HTTPStatus.NOT_FOUND, {"error": "use POST /ask"})
                return
            try:
                request = AskRequest.model_validate_json(self._body())
                with lock:
                    result = atlas.ask(
                        request.question,
                        project=request.project,
                        api=request.api,
                        k=request.k,
                        agent_type=request.agent_type,
                    )
            except ValidationError as e:
                detail = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}"
                                   for err in e.errors())
                self._send(HTTPStatus.BAD_REQUEST,
                           {"error": f"send JSON like {{\"question\": \"...\"}} ({detail})"})
                return
            except UsageError as e:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(e)})
                return
            except ApiAtlasError as e:
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(e)})
                return
            self._send(HTTPStatus.OK, result.model_dump(mode="json"))

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                raise UsageError(f"the request body is over {MAX_BODY_BYTES} bytes")
            return self.rfile.read(length)

        def _send(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # quiet: the CLI prints where it listens; requests are the caller's business

    return ThreadingHTTPServer((host, port), Handler)
