"""The server's app in process, over a stand-in atlas: the time limit, a crash, concurrency and
the guard's parsing, without a model or a store."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from apiatlas import server_answer
from apiatlas.atlas import ApiAtlas
from apiatlas.cli import main
from apiatlas.errors import StoreError, UsageError
from apiatlas.graph.model import GraphStats
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.server import ServeOptions, create_app
from apiatlas.server_guard import allowed_hosts, host_name
from apiatlas.server_run import Launch, is_loopback, resolve


class StandIn:
    """Answers once ``wait`` returns (at once by default), or raises ``error``; counts questions
    in flight. Tests wait on events and barriers, not on the clock, so a slow machine cannot
    change what they see."""

    def __init__(
        self, wait: Callable[[], object] = lambda: None, error: Exception | None = None
    ) -> None:
        self.wait, self.error = wait, error
        self.in_flight = self.most = 0
        self._lock = threading.Lock()

    def ask(self, question: str, **context: Any) -> AnswerResult:
        with self._lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            self.wait()
            if self.error is not None:
                raise self.error
            return AnswerResult(question=question, answer=f"for {context['project']}")
        finally:
            with self._lock:
                self.in_flight -= 1

    def stats(self, project: str | None = None) -> GraphStats:
        return GraphStats(project=project)


def client(atlas: StandIn, **options: Any) -> TestClient:
    app = create_app(ServeOptions(project="demo", **options), atlas=cast(ApiAtlas, atlas))
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False)


def test_a_question_past_the_time_limit_gets_a_503_and_the_server_goes_on() -> None:
    answered = threading.Event()
    atlas = StandIn(wait=lambda: answered.wait(30))
    with client(atlas, timeout=0.2) as http:
        response = http.post("/ask", json={"question": "slow"})
        assert atlas.in_flight == 1  # the 503 came while the question was still being answered
        assert response.status_code == 503 and "no answer within 0.2 s" in response.json()["error"]
        assert http.get("/health").json() == {"status": "ok"}
        answered.set()


def test_a_store_failure_is_a_503_and_a_bug_a_500_both_as_json() -> None:
    with client(StandIn(error=StoreError("graph down"))) as http:
        response = http.post("/ask", json={"question": "x"})
        assert response.status_code == 503 and response.json() == {"error": "graph down"}
    with client(StandIn(error=RuntimeError("oops"))) as http:
        response = http.post("/ask", json={"question": "x"})
        assert response.status_code == 500 and "RuntimeError" in response.json()["error"]


def test_questions_are_answered_side_by_side() -> None:
    together = threading.Barrier(4, timeout=30)  # one at a time, the barrier breaks: a 500
    atlas = StandIn(wait=together.wait)
    with client(atlas) as http, ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(lambda _: http.post("/ask", json={"question": "x"}).status_code,
                                 range(4)))
    assert statuses == [200] * 4
    assert atlas.most == 4


def test_the_request_names_the_project_within_what_the_server_serves() -> None:
    with client(StandIn()) as http:
        assert http.post("/ask", json={"question": "x"}).json()["answer"] == "for demo"
        assert http.post("/ask", json={"question": "x", "project": "b"}).status_code == 403
    with client(StandIn(), all_projects=True) as http:
        assert http.post("/ask", json={"question": "x", "project": "b"}).json()["answer"] == "for b"
        assert http.get("/stats", params={"project": "b"}).json()["project"] == "b"
        assert http.get("/stats").json()["project"] == "demo"


@pytest.mark.parametrize(
    ("header", "name"),
    [("localhost:8765", "localhost"), ("[::1]:8765", "::1"), ("::1", "::1"),
     ("Example.COM", "example.com"), ("127.0.0.1", "127.0.0.1")],
)
def test_host_names_lose_their_port_and_case(header: str, name: str) -> None:
    assert host_name(header) == name


def test_allowed_hosts_are_the_loopback_names_and_those_added() -> None:
    assert allowed_hosts(["Atlas.Internal:443", " "]) == {
        "localhost", "127.0.0.1", "::1", "atlas.internal"}


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("atlas.internal", False)])
def test_only_loopback_addresses_serve_without_a_token(host: str, loopback: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APIATLAS_SERVE_TOKEN", raising=False)
    assert is_loopback(host) is loopback
    if loopback:
        assert resolve(Launch(host=host))[1].token is None
    else:
        with pytest.raises(UsageError, match="not a loopback address"):
            resolve(Launch(host=host))
        monkeypatch.setenv("APIATLAS_SERVE_TOKEN", "x" * 32)
        assert resolve(Launch(host=host))[1].token == "x" * 32


def test_an_empty_server_url_is_refused_not_answered_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["ask", "create a location", "--server", ""]) == 2
    assert "--server needs the server's URL" in capsys.readouterr().out
    assert not (tmp_path / ".apiatlas").exists()  # no local answer: no home opened


def test_a_worker_process_sends_back_the_answer_or_the_kind_of_apiatlas_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What crosses from a ``--workers`` process: the answer's JSON, or an apiatlas error's
    kind and message (the app answers them 400 or 503 as in one process); a bug as it is."""
    def outcome(atlas: StandIn) -> tuple[str, object]:
        monkeypatch.setattr(server_answer, "_atlas", atlas)
        return server_answer._ask("x", {"project": "demo"})

    kind, document = outcome(StandIn())
    assert kind == "ok" and json.loads(document)["answer"] == "for demo"
    assert outcome(StandIn(error=UsageError("k must be 1 to 50"))) == ("usage", "k must be 1 to 50")
    assert outcome(StandIn(error=StoreError("graph down"))) == ("failed", "graph down")
    with pytest.raises(RuntimeError, match="oops"):
        outcome(StandIn(error=RuntimeError("oops")))
    monkeypatch.setattr(server_answer, "_atlas", None)
    assert server_answer._stats("demo")[0] == "failed"
