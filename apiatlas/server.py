"""``apiatlas serve``'s application: one warm process answering over HTTP, in milliseconds.

Every CLI question opens the stores, loads the embedding model and builds the per-project caches
again. A server does that once; each question then costs only its own work. The app is FastAPI
(on Starlette), run by uvicorn (:mod:`apiatlas.server_run`); its OpenAPI description is at
``/docs``. The protocol is JSON:

- ``POST /ask`` with ``{"question": ..., "project"?, "api"?, "k"?, "agent_type"?, "at"?}``: the
  same JSON as ``apiatlas ask --json``;
- ``GET /stats?project=...``: the project's graph counts, as ``apiatlas graph stats --json``;
- ``GET /health``: ``{"status": "ok"}``.

A server answers for the project it was started with: a request naming another gets a 403,
unless it was started with ``--all-projects``. Every refusal is a 4xx with ``{"error": ...}``
that says what to send (:mod:`apiatlas.server_guard` checks ``Host``, the token and the body
before the app reads it); an apiatlas runtime failure is a 503, and so is a question still
unanswered after the time limit. The server keeps serving.

Questions are answered by an :class:`~apiatlas.server_answer.Answerer`: in a pool of threads
of this process, so that several are answered at once where their work allows it (waiting on
Neo4j or PostgreSQL, the model, numpy and SQLite release the GIL, the rest of an answer is Python
and holds it), or, to use more than one core, in ``--workers N`` processes behind this one. Every
store and cache on a question's path has its own lock or connection pool
(:func:`~apiatlas.server_answer.warm` builds them before the first request), so no lock spans a
question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from apiatlas.atlas import ApiAtlas
from apiatlas.config import check_project
from apiatlas.errors import (
    ApiAtlasError,
    ProjectNotServedError,
    RequestTimeoutError,
    UsageError,
)
from apiatlas.graph.model import GraphStats
from apiatlas.rag.agent.context import MAX_K, MAX_QUESTION_CHARS
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.server_answer import Answerer, InThreads
from apiatlas.server_guard import (
    LOOPBACK_HOSTS,
    MAX_BODY_BYTES,
    GuardRules,
    RequestGuard,
    error_response,
)

DEFAULT_TIMEOUT_S = 30.0
"""Seconds a request may take, waiting for a thread or a worker included, before it gets a
503."""
_ROUTES = "use POST /ask, GET /stats or GET /health (the API is described at /docs)"
_DESCRIPTION = (
    "`POST /ask` answers a question about the project's APIs with cited endpoints, examples "
    "and guide passages (the JSON of `apiatlas ask --json`). Each server answers for one "
    "project unless started with `--all-projects`; when it has a token, send it as "
    "`Authorization: Bearer <token>`. Every refusal is `{\"error\": \"...\"}`."
)


class AskRequest(BaseModel):
    """The body of ``POST /ask``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    project: str | None = None  # checked where it is resolved: ServeOptions.project_for
    api: str | None = Field(default=None, min_length=1)
    k: Annotated[int | None, Field(strict=True, ge=1, le=MAX_K)] = None
    agent_type: str | None = Field(default=None, min_length=1)
    at: datetime | None = None
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)


@dataclass(frozen=True)
class ServeOptions:
    """How a server answers.

    Attributes:
        project: The project it answers for (requests that name none get it too).
        all_projects: Answer for any project a request names.
        token: The bearer token every request needs (``None``: none; loopback only).
        hosts: The names ``Host`` may give (loopback names by default).
        max_body_bytes: The largest request body read.
        timeout: Seconds a request may take before it gets a 503.
    """

    project: str
    all_projects: bool = False
    token: str | None = field(default=None, repr=False)
    hosts: frozenset[str] = LOOPBACK_HOSTS
    max_body_bytes: int = MAX_BODY_BYTES
    timeout: float = DEFAULT_TIMEOUT_S

    def project_for(self, requested: str | None) -> str:
        """The project a request is answered for.

        Raises:
            ConfigError: ``requested`` is no valid project name.
            ProjectNotServedError: It names another project and the server serves one.
        """
        if requested is None:
            return self.project
        name = check_project(requested)
        if name != self.project and not self.all_projects:
            raise ProjectNotServedError(
                f"this server answers for project {self.project!r} only, not {name!r}: ask "
                "the server of that project, or start one with --all-projects"
            )
        return name


def create_app(options: ServeOptions, atlas: ApiAtlas | None = None,
               answerer: Answerer | None = None) -> FastAPI:
    """The server's app.

    Args:
        options: Which project it answers for, its token, hosts and limits.
        atlas: The atlas to answer from in threads, opened and warmed by the caller, who
            closes it.
        answerer: Otherwise, what answers (the worker processes of ``--workers N``).
    """
    if (atlas is None) == (answerer is None):
        raise ValueError("give create_app either an atlas or an answerer")
    answers = answerer if answerer is not None else InThreads(atlas)  # type: ignore[arg-type]

    app = FastAPI(
        title="apiatlas",
        summary="Grounded, cited answers to questions about your APIs",
        description=_DESCRIPTION,
        redoc_url=None,  # one description page: /docs
    )
    app.add_middleware(
        RequestGuard,
        rules=GuardRules(
            hosts=options.hosts, token=options.token, max_body_bytes=options.max_body_bytes,
            body_seconds=options.timeout,
        ),
    )
    _add_error_handlers(app)

    @app.post("/ask", response_model=AnswerResult,
              responses=_REFUSALS | {403: {"description": "another project"}})
    async def ask(body: AskRequest) -> Response:
        """Answer a question about the project's APIs, as ``apiatlas ask --json``."""
        project = options.project_for(body.project)
        with anyio.move_on_after(options.timeout):
            return _json(await answers.ask(
                body.question, project=project, api=body.api, k=body.k,
                agent_type=body.agent_type, at=body.at, min_confidence=body.min_confidence,
            ))  # fmt: skip
        raise _too_late(options.timeout)

    @app.get("/stats", response_model=GraphStats, responses=_REFUSALS)
    async def stats(project: str | None = None) -> Response:
        """The project's knowledge-graph counts, as ``apiatlas graph stats --json``."""
        name = options.project_for(project)
        with anyio.move_on_after(options.timeout):
            return _json(await answers.stats(name))
        raise _too_late(options.timeout)

    @app.get("/health")
    async def health() -> dict[str, str]:
        """Whether the process is up (no token or host check)."""
        return {"status": "ok"}

    _document_token(app, options)
    return app


_REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"description": "a malformed request"},
    401: {"description": "no or a wrong token"},
    408: {"description": "a body that did not arrive within the time limit"},
    413: {"description": "a body over the limit"},
    415: {"description": "a body that is not JSON"},
    421: {"description": "a Host the server does not answer for"},
    503: {"description": "a store failed, or the time limit passed"},
}


def _json(document: bytes) -> Response:
    return Response(document, media_type="application/json")


def _too_late(timeout: float) -> RequestTimeoutError:
    """A question past the time limit (its thread or worker is left to finish)."""
    return RequestTimeoutError(
        f"no answer within {timeout:g} s: the server is busy or the question too costly; "
        "try again later"
    )


def _add_error_handlers(app: FastAPI) -> None:
    """Every refusal and failure as ``{"error": ...}``."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        detail = "; ".join(
            f"{'.'.join(str(part) for part in e['loc'][1:]) or 'body'}: {e['msg']}"
            for e in error.errors()
        )
        return error_response(400, f'send JSON like {{"question": "..."}} ({detail})')

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        message = _ROUTES if error.status_code in (404, 405) else str(error.detail)
        return error_response(error.status_code, message, headers=error.headers)

    @app.exception_handler(ProjectNotServedError)
    async def other_project(request: Request, error: ProjectNotServedError) -> JSONResponse:
        return error_response(403, str(error))

    @app.exception_handler(UsageError)
    async def usage(request: Request, error: UsageError) -> JSONResponse:
        return error_response(400, str(error))

    @app.exception_handler(ApiAtlasError)
    async def failed(request: Request, error: ApiAtlasError) -> JSONResponse:
        return error_response(503, str(error))

    @app.exception_handler(Exception)
    async def crashed(request: Request, error: Exception) -> JSONResponse:
        # A bug: Starlette logs its traceback after this response is sent.
        return error_response(500, f"internal error ({type(error).__name__}); see the server log")


def _document_token(app: FastAPI, options: ServeOptions) -> None:
    """Describe the bearer token in the OpenAPI schema (``/docs``), when the server has one."""
    if options.token is None:
        return
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {})["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer"}
            }
            for path in ("/ask", "/stats"):
                for operation in schema["paths"][path].values():
                    operation["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
