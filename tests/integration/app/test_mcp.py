"""`apiatlas mcp`: a real MCP client session over stdio answers from the ingested sample API.

One server process serves the whole module; the SDK's stdio client and ClientSession talk to it
from a blocking portal, so the tests themselves stay synchronous.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic
from typing import Any

import pytest
import yaml
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from apiatlas.cli import main
from apiatlas.rag.agent.context import MAX_K, MAX_QUESTION_CHARS
from apiatlas.rag.memory.store import MAX_MEMORY_CHARS
from tests.integration.conftest import SampleHome

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}
# Built at run time, so that no credential-shaped literal sits in the repository.
TOKEN = ".".join(["eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiJtY3AtdGVzdCJ9", "bWNwLXRlc3Qtc2lnbmF0dXJl"])


@dataclass
class Server:
    """One client session with ``apiatlas mcp``, called from sync tests through a portal."""

    portal: BlockingPortal
    session: ClientSession
    sample: Path
    faults: list[Exception] = field(default_factory=list)

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        result = self.portal.call(self.session.call_tool, tool, arguments)
        self.assert_clean_stdout()
        return result

    def read(self, uri: str) -> str:
        contents = self.portal.call(self.session.read_resource, uri).contents
        self.assert_clean_stdout()
        assert len(contents) == 1 and contents[0].mime_type == "application/json"
        return contents[0].text  # type: ignore[union-attr]

    def assert_clean_stdout(self) -> None:
        assert not self.faults, f"the server wrote non-MCP lines on stdout: {self.faults}"


@pytest.fixture(scope="module")
def server(sample_home: SampleHome) -> Iterator[Server]:
    root, sample, home = sample_home.home.parent, sample_home.sample, sample_home.home
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "apiatlas.cli", "mcp", "--home", str(home), "--project", "demo"],
        env=dict(os.environ),  # the SDK passes only a few variables on by default
        cwd=root,
    )
    faults: list[Exception] = []

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not a JSON-RPC message
            faults.append(message)

    @asynccontextmanager
    async def connect() -> AsyncIterator[ClientSession]:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(
            read, write, message_handler=on_message
        ) as session:
            await session.initialize()
            yield session

    with (root / "server-stderr.log").open("w") as errlog, start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(connect()) as session:  # fmt: skip
        yield Server(portal, session, sample, faults)


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value a JSON pointer (RFC 6901) names in ``document``; KeyError when it names none."""
    assert pointer.startswith("/"), pointer
    value = document
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def assert_citation_resolves(citation: dict[str, Any], sample: Path) -> None:
    if citation["kind"] == "spec":
        source = Path(citation["source"])
        assert source.parent == sample and source.suffix == ".yaml", citation
        spec = yaml.safe_load(source.read_text(encoding="utf-8"))
        assert resolve_pointer(spec, citation["pointer"]) is not None, citation
        assert citation["uri"] == f"{citation['source']}#{citation['pointer']}"
    elif citation["kind"] == "doc":
        assert Path(citation["source"]).is_file(), citation
        assert Path(citation["source"]).parent == sample / "guides", citation
        assert citation["pointer"] and citation["uri"].endswith("#" + citation["pointer"]), citation
    else:
        assert citation["kind"] == "memory" and citation["uri"].startswith("memory:mem_"), citation


def only_text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent), result
    return result.content[0].text


def test_the_four_tools_are_listed_with_their_argument_schemas(server: Server) -> None:
    tools = {tool.name: tool for tool in server.portal.call(server.session.list_tools).tools}
    assert set(tools) == {"find_endpoints", "search_docs", "ask", "remember"}
    assert all(tool.description and len(tool.description) > 60 for tool in tools.values())

    find = tools["find_endpoints"].input_schema
    assert find["required"] == ["question"]
    k = find["properties"]["k"]
    [number] = [t for t in k["anyOf"] if t["type"] == "integer"]  # or null: the default
    assert (number["minimum"], number["maximum"], k["default"]) == (1, MAX_K, None)
    assert find["properties"]["api"]["default"] is None
    assert tools["search_docs"].input_schema["required"] == ["query"]
    assert tools["ask"].input_schema["required"] == ["question"]
    remember = tools["remember"].input_schema
    assert remember["required"] == ["text"]
    assert remember["properties"]["kind"]["enum"] == [
        "fact", "decision", "procedure", "warning", "episode"]  # fmt: skip
    assert remember["properties"]["kind"]["default"] == "fact"
    assert remember["properties"]["refs"]["type"] == "array"
    assert "endpoints" in (tools["find_endpoints"].output_schema or {})["properties"]
    assert "citations" in (tools["ask"].output_schema or {})["properties"]


def test_find_endpoints_ranks_the_create_call_first_with_a_citation_into_the_spec(
    server: Server,
) -> None:
    result = server.call("find_endpoints", {"question": "Which call creates a new location?"})
    assert not result.is_error, result
    found = result.structured_content or {}
    assert json.loads(only_text(result)) == found
    first = found["endpoints"][0]
    assert (first["method"], first["path"], first["role"]) == ("POST", "/v2/locations", "primary")
    assert first["citation"]["kind"] == "spec"
    assert first["citation"]["source"] == str(server.sample / "openapi.yaml")
    operation = resolve_pointer(yaml.safe_load((server.sample / "openapi.yaml").read_text()),
                                first["citation"]["pointer"])
    assert operation["operationId"] == first["operation_id"]
    for endpoint in found["endpoints"]:
        assert_citation_resolves(endpoint["citation"], server.sample)
    one = server.call("find_endpoints", {"question": "a new location", "k": 1})
    assert len((one.structured_content or {})["endpoints"]) == 1


def test_ask_answers_in_markdown_and_every_citation_resolves(server: Server) -> None:
    result = server.call("ask", {"question": "How do I track a shipment?"})
    assert not result.is_error, result
    answer = result.structured_content or {}
    assert only_text(result) == answer["answer"]
    assert answer["endpoints"][0]["path"] == "/v2/shipments/{shipment_id}/tracking-events"
    kinds = {c["kind"] for c in answer["citations"]}
    assert {"spec", "doc"} <= kinds
    for citation in answer["citations"]:
        assert_citation_resolves(citation, server.sample)
        assert f"[{citation['n']}]" in answer["answer"]
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])} <= {
        c["n"] for c in answer["citations"]}  # fmt: skip


def test_search_docs_returns_guide_passages_with_their_section(server: Server) -> None:
    result = server.call("search_docs", {"query": "verify the webhook signature", "k": 2})
    assert not result.is_error, result
    passages = (result.structured_content or {})["result"]
    assert 1 <= len(passages) <= 2
    for passage in passages:
        source, _, anchor = passage["uri"].partition("#")
        assert Path(source).parent == server.sample / "guides" and anchor, passage
        assert passage["text"]
    assert passages[0]["uri"].endswith("webhooks.md#verifying-the-signature")


def test_the_stats_resource_counts_the_sample(server: Server) -> None:
    listed = server.portal.call(server.session.list_resources).resources
    assert [str(r.uri) for r in listed] == ["apiatlas://stats"]
    stats = json.loads(server.read("apiatlas://stats"))
    spec = yaml.safe_load((server.sample / "openapi.yaml").read_text(encoding="utf-8"))
    operations = sum(len(HTTP_METHODS & set(item)) for item in spec["paths"].values())
    assert stats["project"] == "demo"
    assert stats["apis"] == ["parcelroute-logistics-api"]
    assert stats["nodes"]["Endpoint"] == operations
    assert stats["nodes"]["DocSection"] > 0


@pytest.mark.parametrize(
    "uri",
    ["apiatlas://endpoint/GET/v2/locations/%7Blocation_id%7D",
     "apiatlas://endpoint/get/v2/locations/%7Bid%7D",  # any method case, any parameter name
     "apiatlas://endpoint/GET/%2Fv2%2Flocations%2F%7Bid%7D"],  # the whole path percent-encoded
)  # fmt: skip
def test_the_endpoint_resource_carries_a_path_with_slashes(server: Server, uri: str) -> None:
    templates = server.portal.call(server.session.list_resource_templates).resource_templates
    assert [t.uri_template for t in templates] == ["apiatlas://endpoint/{method}/{+path}{?api}"]
    detail = json.loads(server.read(uri))
    endpoint = detail["endpoint"]
    assert (endpoint["method"], endpoint["path"]) == ("GET", "/v2/locations/{location_id}")
    assert [(p["name"], p["location"], p["required"]) for p in detail["parameters"]] == [
        ("location_id", "path", True)]  # fmt: skip
    spec = yaml.safe_load((server.sample / "openapi.yaml").read_text(encoding="utf-8"))
    assert resolve_pointer(spec, endpoint["pointer"])["operationId"] == endpoint["operation_id"]


@pytest.mark.parametrize(
    ("uri", "message"),
    [("apiatlas://endpoint/GET/v9/nowhere", "no endpoint GET /v9/nowhere in project 'demo'"),
     ("apiatlas://endpoint/POST/v2/locations?api=other", "no endpoint POST /v2/locations in API"),
     ("apiatlas://endpoint/FETCH/v2/locations", "is not an endpoint")],
)  # fmt: skip
def test_an_unknown_endpoint_is_a_clear_resource_error(
    server: Server, uri: str, message: str
) -> None:
    with pytest.raises(MCPError, match=re.escape(message)):
        server.read(uri)
    assert json.loads(server.read("apiatlas://endpoint/POST/v2/locations"))["endpoint"][
        "operation_id"] == "createLocation"  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [("find_endpoints", {"k": 3}, ["question", "Field required"]),
     ("find_endpoints", {"question": "create a location", "k": "many"}, ["k", "valid integer"]),
     ("search_docs", {"query": "webhooks", "k": 0}, ["k", "greater than or equal to 1"]),
     ("remember", {"text": "x", "kind": "rumour"}, ["kind", "'fact'"]),
     ("remember", {"text": "Locations need a timezone", "refs": ["POST"]},
      ["'POST' is not an endpoint", "METHOD /path"]),  # an apiatlas UsageError, as it says it
     ("find_endpoints", {"question": "create a location", "api": "shiping"},
      ["no API 'shiping' in project 'demo'", "APIs: "]),  # never an abstention
     ("no_such_tool", {}, ["Unknown tool: no_such_tool"]),
     ("find_endpoints", {"question": "create a location " * 60},
      ["question", f"at most {MAX_QUESTION_CHARS} characters"]),
     ("remember", {"text": "Locations need a timezone. " * 400},
      ["text", f"at most {MAX_MEMORY_CHARS} characters"])],
    ids=["missing-argument", "wrong-type", "out-of-range", "bad-kind", "apiatlas-error",
         "unknown-api", "unknown-tool", "question-too-long", "memory-too-long"],
)  # fmt: skip
def test_a_malformed_call_gets_a_clear_error_and_the_server_keeps_serving(
    server: Server, tool: str, arguments: dict[str, Any], said: list[str]
) -> None:
    result = server.call(tool, arguments)
    assert result.is_error
    message = only_text(result)
    assert all(part in message for part in said), message
    assert "Traceback" not in message
    after = server.call("search_docs", {"query": "rate limits", "k": 1})
    assert not after.is_error and len((after.structured_content or {})["result"]) == 1


def test_remember_stores_a_scrubbed_memory_that_later_answers_follow(server: Server) -> None:
    text = f"The reporting job creates locations with Authorization: Bearer {TOKEN}"
    result = server.call(
        "remember", {"text": text, "kind": "warning", "refs": ["POST /v2/locations"]}
    )
    assert not result.is_error, result
    stored = result.structured_content or {}
    assert stored["id"].startswith("mem_") and stored["kind"] == "warning"
    assert stored["refs"] == ["POST /v2/locations"]
    assert "[REDACTED:bearer-token]" in stored["text"]
    assert TOKEN not in json.dumps(stored) and TOKEN not in only_text(result)

    answer = server.call("ask", {"question": "Which call creates a new location?"})
    memories = (answer.structured_content or {})["memories"]
    assert stored["id"] in [m["id"] for m in memories]
    assert TOKEN not in json.dumps(answer.structured_content)

    # The same note again is written, and the reply says which memory it repeats.
    again = server.call(
        "remember", {"text": text, "kind": "warning", "refs": ["POST /v2/locations"]}
    )
    assert not again.is_error, again
    touches = (again.structured_content or {})["touches"]
    assert [(t["kind"], t["memory_id"]) for t in touches] == [("near_duplicate", stored["id"])]
    assert f"almost the same as {stored['id']}" in touches[0]["message"]


def test_without_a_graph_mcp_exits_with_a_usage_error_and_writes_nothing_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "--home", str(tmp_path / "nothing"), "--project", "demo"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "no knowledge graph" in " ".join(err.split()) and "apiatlas ingest" in err


def test_without_the_extra_mcp_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "apiatlas.mcp_server", raising=False)
    assert main(["mcp", "--home", str(tmp_path), "--project", "demo"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "pip install 'apiatlas[mcp]'" in " ".join(err.split())


def test_every_unreadable_line_gets_its_json_rpc_error_and_the_server_keeps_serving(
    sample_home: SampleHome,
) -> None:
    """Raw lines on stdin, as a broken client sends them after the handshake: each gets one
    reply on stdout, and a well-formed request after them is answered.

    The handshake is awaited first, as clients do: pipelined right behind ``initialize``, a
    ping was once left unanswered by the SDK on a loaded machine."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}
    lines = [
        "this is not json",
        "[" * 100_000 + "]" * 100_000,  # deeper than any parser goes
        '{"jsonrpc": "2.0", "id": 7',  # cut short
        json.dumps({"jsonrpc": "1.0", "id": 8, "method": "ping"}),  # JSON, not JSON-RPC 2.0
        json.dumps([1, 2, 3]),
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "apiatlas.cli", "mcp", "--home", str(sample_home.home),
         "--project", sample_home.project],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=sample_home.home.parent,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    deadline = monotonic() + 120
    replies = []

    def read(count: int) -> None:
        while len(replies) < count and monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1)[0]:
                replies.append(json.loads(proc.stdout.readline()))

    proc.stdin.write(json.dumps(hello) + "\n")
    proc.stdin.flush()
    read(1)
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    proc.stdin.write("\n".join([json.dumps(initialized), *lines]) + "\n")
    proc.stdin.flush()
    read(7)
    _, err = proc.communicate(timeout=60)  # stdin closes: the server ends
    by_id = {r.get("id"): r for r in replies}
    assert len(replies) == 7 and set(by_id) == {1, None, 9}, replies
    assert by_id[1]["result"]["serverInfo"]["name"] == "apiatlas"
    assert by_id[9]["result"] == {}
    unreadable = [r["error"] for r in replies if r.get("id") is None]
    assert sorted(e["code"] for e in unreadable) == [-32700, -32700, -32700, -32600, -32600]
    assert all(e["message"].startswith(("Parse error: the line is not JSON", "Invalid Request"))
               for e in unreadable)  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in err
