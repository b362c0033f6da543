"""`langgraph dev` serves the agent from the repository's langgraph.json (in-memory runtime,
offline), and a LangGraph SDK client gets a cited answer from it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.integration.conftest import SampleHome

REPO = Path(__file__).resolve().parents[3]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
STARTUP_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(sample_home: SampleHome) -> Iterator[str]:
    root, home = sample_home.home.parent, sample_home.home
    port = free_port()
    env = {**os.environ, "APIATLAS_HOME": str(home), "APIATLAS_PROJECT": "demo",
           "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}  # fmt: skip
    log = (root / "server.log").open("w")
    proc = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--config", str(REPO / "langgraph.json"), "--port", str(port),
         "--host", "127.0.0.1", "--no-browser", "--no-reload"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # its in-memory state goes to <root>/.langgraph_api, not into the repository
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=5) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert proc.poll() is None, (root / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "langgraph dev did not start in time"
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        log.close()


def test_runs_wait_returns_a_cited_answer(server: str) -> None:
    client = get_sync_client(url=server)
    assistants = client.assistants.search(graph_id="apiatlas")
    assert assistants, "the graph from langgraph.json is not registered"
    out = client.runs.wait(
        None, "apiatlas", input={"question": "Which call creates a new location?"}
    )
    result = out["result"]
    first = result["endpoints"][0]
    assert (first["method"], first["path"]) == ("POST", "/v2/locations")
    assert len(result["citations"]) >= 2
    assert result["citations"][0]["pointer"].startswith("/paths/")
    assert out["route"][0] == "memory" and "compose" in out["route"]


def test_a_run_picks_its_project_through_the_context(server: str) -> None:
    client = get_sync_client(url=server)
    out = client.runs.wait(
        None, "apiatlas", input={"question": "Which call creates a new location?"},
        context={"project": "no-such-project"},
    )  # fmt: skip
    assert out["result"]["abstained"] is True and out["result"]["endpoints"] == []


def test_a_thread_keeps_its_history(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "apiatlas", input={"question": "How do I create a shipment?"})
    client.runs.wait(thread["thread_id"], "apiatlas",
                     input={"question": "Which call creates a new location?"})  # fmt: skip
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["result"]["endpoints"][0]["path"] == "/v2/locations"
    history = client.threads.get_history(thread["thread_id"], limit=50)
    questions = {h["values"].get("question") for h in history}
    assert {"How do I create a shipment?",
            "Which call creates a new location?"} <= questions  # fmt: skip
