"""``apiatlas mcp``: one project's tools and resources over the Model Context Protocol (stdio).

An MCP client (an IDE, a desktop assistant, your own agent) starts
``apiatlas mcp --home H --project P`` and exchanges JSON-RPC messages with it over the process's
stdin and stdout. Every call is scoped to that project.

Tools: the functions of :mod:`apiatlas.tools`, with the argument schemas (descriptions, limits,
defaults) and descriptions of its LangChain tools:

- ``find_endpoints(question, api=None, k=None, min_confidence=None)``: the endpoints that answer a
  question, each with its spec citation, and the answer's outcome (``answer``, ``unsure``,
  ``none``) and confidence (structured content, also as JSON text);
- ``search_docs(query, k=5)``: guide passages with their section URIs;
- ``ask(question)``: the cited Markdown answer as text; the whole result (endpoints, examples,
  citations), as ``apiatlas ask --json`` prints it, as structured content;
- ``remember(text, kind="fact", refs=[])``: record a project memory (secrets are scrubbed); the
  reply names earlier memories it almost repeats or contradicts (``touches``).

Resources (JSON):

- ``apiatlas://stats``: the project's knowledge-graph counts, as ``apiatlas graph stats --json``;
- ``apiatlas://endpoint/{method}/{+path}{?api}``: one endpoint's detail (parameters, schemas,
  examples, guide sections). ``path`` is the HTTP path without its leading slash, slashes kept
  or percent-encoded, and braces percent-encoded: ``apiatlas://endpoint/POST/v2/locations``,
  ``apiatlas://endpoint/GET/v2/locations/%7Bid%7D`` (path-parameter names do not matter).
  ``?api=NAME`` picks the API when several of the project's APIs have the endpoint.

stdout carries protocol messages only: while serving, the SDK points file descriptor 1 at stderr,
where logs go too. apiatlas errors reach the client as tool errors (``isError``) or resource
errors with their message, and the server keeps serving. A line that is not JSON (or nests
deeper than the parser goes) gets JSON-RPC's parse error, -32700; JSON that is no JSON-RPC
message gets -32600 (both with a null ``id``).
"""

from __future__ import annotations

from apiatlas.extras import require

require("mcp.server.mcpserver", purpose="apiatlas mcp")

import logging  # noqa: E402 - after the check that names the extra
import threading  # noqa: E402
from collections.abc import AsyncIterator, Callable, Iterator  # noqa: E402
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager  # noqa: E402
from typing import Annotated, Any  # noqa: E402

import anyio.to_thread  # noqa: E402
from mcp.server.mcpserver import MCPServer, ResourceSecurity  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402
from mcp.server.mcpserver.exceptions import (  # noqa: E402
    ResourceError,
    ResourceNotFoundError,
    ToolError,
)
from mcp.types import (  # noqa: E402
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    TextContent,
)
from pydantic import BaseModel, ValidationError  # noqa: E402
from pydantic.fields import FieldInfo  # noqa: E402

import apiatlas  # noqa: E402
from apiatlas import tools  # noqa: E402
from apiatlas.atlas import ApiAtlas  # noqa: E402
from apiatlas.config import Settings  # noqa: E402
from apiatlas.errors import ApiAtlasError, UsageError  # noqa: E402
from apiatlas.graph.model import EndpointDetail  # noqa: E402
from apiatlas.rag.answer.result import AnswerResult  # noqa: E402
from apiatlas.rag.memory.model import MemoryKind  # noqa: E402
from apiatlas.tools import (  # noqa: E402
    AskInput,
    DocPassage,
    FindEndpointsInput,
    FoundEndpoints,
    RememberInput,
    SearchDocsInput,
    make_tools,
)

_log = logging.getLogger(__name__)

STATS_URI = "apiatlas://stats"
"""The project's knowledge-graph counts."""

ENDPOINT_TEMPLATE = "apiatlas://endpoint/{method}/{+path}{?api}"
"""One endpoint, e.g. ``apiatlas://endpoint/POST/v2/locations`` (see the module docstring)."""

_Answering = Callable[[type[Exception]], AbstractContextManager[None]]
"""Holds the server's lock around a call and turns an apiatlas error into the given error."""

def _arg(model: type[BaseModel], name: str) -> FieldInfo:
    """A field of an :mod:`apiatlas.tools` input model, as ``Annotated`` metadata.

    A tool parameter annotated with it gets the field's description, limits and default, so the
    MCP input schema is the LangChain tool's and neither can drift from the other.
    """
    return model.model_fields[name]


def endpoint_detail(
    atlas: ApiAtlas, project: str, signature: str, *, api: str | None = None
) -> EndpointDetail | None:
    """The endpoint ``METHOD /path`` names in ``project`` (``None`` when there is none).

    Methods compare case-insensitively and path-parameter names are ignored, as in project-memory
    refs (:meth:`~apiatlas.graph.store.KnowledgeGraphStore.resolve_signatures`).

    Raises:
        UsageError: ``signature`` is not ``METHOD /path``, or several APIs of the project have
            the endpoint and ``api`` does not pick one.
    """
    found = atlas.graph.resolve_signatures(project, [signature], api=api)[signature]
    apis = sorted({ref.api for ref in found})
    if len(apis) > 1:
        raise UsageError(
            f"{signature} is in several APIs of project {project!r} ({', '.join(apis)}): "
            "pick one with ?api=NAME"
        )
    return atlas.graph.get_endpoint(project, found[0].key) if found else None


def make_server(atlas: ApiAtlas, *, project: str | None = None) -> MCPServer[None]:
    """An MCP server answering from ``atlas``, every call scoped to ``project``.

    Call ``run("stdio")`` on it (:func:`serve_stdio` does). The embedding model loads when the
    server starts, before it answers the client's handshake, so the first question is fast.
    """
    scope = atlas.project_of(project)
    lock = threading.Lock()  # one call at a time: the embedded stores share connections
    descriptions = {tool.name: tool.description for tool in make_tools(atlas, project=scope)}

    @contextmanager
    def answering(error: type[Exception]) -> Iterator[None]:
        """Hold the lock; turn an apiatlas error into ``error`` with the same message."""
        with lock:
            try:
                yield
            except ApiAtlasError as e:
                raise error(str(e)) from e

    @asynccontextmanager
    async def warm_up(_: MCPServer[None]) -> AsyncIterator[None]:
        # Runs inside the stdio transport, so whatever loading the model prints misses stdout.
        try:
            await anyio.to_thread.run_sync(atlas.embeddings.embed_query, "warm up")
        except ApiAtlasError as e:  # keep serving: each call that needs the model says why
            _log.warning("apiatlas could not load the embedding model: %s", e)
        yield

    server: MCPServer[None] = _StdioServer(
        "apiatlas",
        version=apiatlas.__version__,
        instructions=(
            f"Answers developers' questions about the APIs of project {scope!r} from their "
            "OpenAPI specs and guides, with citations. Use find_endpoints to learn which "
            "endpoints do something, ask for a full answer with an example request, search_docs "
            "to quote the guides, and remember to record what the team has learned. Read "
            f"{STATS_URI} for what the project holds and {ENDPOINT_TEMPLATE} for one endpoint."
        ),
        lifespan=warm_up,
    )
    _add_tools(server, atlas, scope, answering, descriptions)
    _add_resources(server, atlas, scope, answering)
    return server


class _StdioServer(MCPServer[None]):
    """:class:`MCPServer` whose stdio transport answers every line it cannot read (see the
    module docstring); the SDK's own passes them to the session, which replies nothing."""

    async def run_stdio_async(self) -> None:
        async with stdio_server() as (read_stream, write_stream):
            send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

            async def forward() -> None:
                async with send:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await write_stream.send(SessionMessage(unreadable_reply(item)))
                        else:
                            await send.send(item)

            async with anyio.create_task_group() as group:
                group.start_soon(forward)
                lowlevel = self._lowlevel_server  # what MCPServer.run_stdio_async runs
                await lowlevel.run(receive, write_stream,
                                   lowlevel.create_initialization_options())  # fmt: skip


def unreadable_reply(error: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message: -32700 when
    it is not JSON, else -32600. Its ``id`` is null, as JSON-RPC 2.0 asks when the request's
    cannot be read."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    if not problems or problems[0]["type"] == "json_invalid":
        detail = problems[0]["msg"] if problems else str(error)
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message=f"Parse error: the line is not JSON ({detail[:200]})"))
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
        code=INVALID_REQUEST,
        message="Invalid Request: send a JSON-RPC 2.0 request, notification or response"))


def _add_tools(
    server: MCPServer[None],
    atlas: ApiAtlas,
    scope: str,
    answering: _Answering,
    descriptions: dict[str, str],
) -> None:
    """Register the tools of :mod:`apiatlas.tools`, every call scoped to project ``scope``."""

    # Each function is named after its tool: the name titles the tool's input schema.
    def find_endpoints(
        *,
        question: Annotated[str, _arg(FindEndpointsInput, "question")],
        api: Annotated[str | None, _arg(FindEndpointsInput, "api")],
        k: Annotated[int | None, _arg(FindEndpointsInput, "k")],
        min_confidence: Annotated[float | None, _arg(FindEndpointsInput, "min_confidence")],
    ) -> FoundEndpoints:
        with answering(ToolError):
            return tools.find_endpoints(atlas, question, project=scope, api=api, k=k,
                                        min_confidence=min_confidence)

    def search_docs(
        *,
        query: Annotated[str, _arg(SearchDocsInput, "query")],
        k: Annotated[int, _arg(SearchDocsInput, "k")],
    ) -> list[DocPassage]:
        with answering(ToolError):
            return tools.search_docs(atlas, query, project=scope, k=k)

    def ask(
        *, question: Annotated[str, _arg(AskInput, "question")]
    ) -> Annotated[CallToolResult, AnswerResult]:
        with answering(ToolError):
            result = atlas.ask(question, project=scope)
        return CallToolResult(
            content=[TextContent(type="text", text=result.answer)],
            structured_content=result.model_dump(mode="json"),
        )

    def remember(
        *,
        text: Annotated[str, _arg(RememberInput, "text")],
        kind: Annotated[MemoryKind, _arg(RememberInput, "kind")],
        refs: Annotated[list[str], _arg(RememberInput, "refs")],
    ) -> dict[str, Any]:
        with answering(ToolError):
            return tools.remember(atlas, text, project=scope, kind=kind, refs=refs)

    server.add_tool(find_endpoints, description=descriptions["find_endpoints"])
    server.add_tool(search_docs, description=descriptions["search_docs"])
    server.add_tool(
        ask,
        description=descriptions["ask"]
        + " The structured result also lists the endpoints, examples and citations as JSON.",
    )
    server.add_tool(remember, description=descriptions["remember"])


def _add_resources(
    server: MCPServer[None], atlas: ApiAtlas, scope: str, answering: _Answering
) -> None:
    """Register the graph-counts resource and the endpoint template of project ``scope``."""

    @server.resource(
        STATS_URI,
        name="stats",
        title="Knowledge-graph counts",
        description=f"Node counts per label, edge counts per type and APIs of project {scope!r}.",
        mime_type="application/json",
    )
    def stats() -> str:
        with answering(ResourceError):
            return atlas.stats(scope).model_dump_json(indent=2)

    @server.resource(
        ENDPOINT_TEMPLATE,
        name="endpoint",
        title="One endpoint",
        description=(
            "An endpoint's parameters, request and response schemas, examples and guide sections. "
            "path: the HTTP path without its leading slash, braces percent-encoded, e.g. "
            "apiatlas://endpoint/GET/v2/locations/%7Bid%7D; ?api=NAME when several APIs have it."
        ),
        mime_type="application/json",
        # The path is looked up in the graph, never opened: absolute and '..' are just text here.
        security=ResourceSecurity(exempt_params=frozenset({"path"})),
    )
    def endpoint(method: str, path: str, api: str | None = None) -> str:
        signature = f"{method} /{path.lstrip('/')}"
        with answering(ResourceError):
            detail = endpoint_detail(atlas, scope, signature, api=api)
        if detail is None:
            where = f"API {api!r} of project {scope!r}" if api else f"project {scope!r}"
            raise ResourceNotFoundError(
                f"no endpoint {signature} in {where}: find_endpoints lists the ones that exist"
            )
        return detail.model_dump_json(indent=2)


def serve_stdio(settings: Settings) -> None:
    """Serve ``settings.project`` over stdin and stdout until the client closes the connection.

    Raises:
        UsageError: There is no knowledge graph at the home (a wrong ``--home``, or nothing
            ingested yet): an MCP client starts the server in a folder of its choosing.
    """
    if settings.graph == "embedded" and not settings.graph_path.exists():
        raise UsageError(
            f"no knowledge graph at {settings.graph_path.resolve()}: run `apiatlas ingest` first, "
            "or pass the --home it used (an absolute path: MCP clients pick the working folder)"
        )
    with ApiAtlas(settings) as atlas:
        try:
            make_server(atlas).run("stdio")
        except KeyboardInterrupt:
            pass
