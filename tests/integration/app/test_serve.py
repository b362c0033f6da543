"""`apiatlas serve`: one warm process answers over HTTP, for its project only, and every bad
request gets its 4xx as JSON without a traceback or a stop."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from time import monotonic, sleep

import pytest

from tests.integration.app.serve_process import Server, ask_body, call, raw, running_server
from tests.integration.conftest import SampleHome

QUESTIONS = (
    "set up a new warehouse location",
    "How do I create a shipment?",
    "add a courier to the network",
    "How do I verify a webhook signature?",
    "list all tracking events for a parcel",
)


@pytest.fixture(scope="module")
def served(sample_home: SampleHome) -> Iterator[Server]:
    with running_server(sample_home.home, "--project", sample_home.project) as server:
        yield server


@pytest.fixture(scope="module")
def server(served: Server) -> str:
    return served.url


def test_ask_answers_like_the_cli_with_citations(server: str) -> None:
    status, result, _ = call(f"{server}/ask", ask_body(QUESTIONS[0]))
    assert status == 200
    assert result["endpoints"][0]["method"] == "POST"
    assert result["endpoints"][0]["path"] == "/v2/locations"
    assert len(result["citations"]) >= 2
    status, again, _ = call(f"{server}/ask", ask_body(QUESTIONS[1], k=3))
    assert status == 200 and again["endpoints"][0]["path"] == "/v2/shipments"
    ranked = [e for e in again["endpoints"] if e["role"] != "prerequisite"]
    assert len(ranked) <= 3  # k counts the ranked endpoints; calls needed first come on top


def test_bad_requests_get_a_clear_400_and_the_server_keeps_serving(server: str) -> None:
    status, body, _ = call(f"{server}/ask", b"not json")
    assert status == 400 and "question" in body["error"]
    status, body, _ = call(f"{server}/ask", json.dumps({"question": ""}).encode())
    assert status == 400 and "question" in body["error"]
    status, body, _ = call(f"{server}/ask", json.dumps({"question": "x", "k": 0}).encode())
    assert status == 400 and "k" in body["error"]
    assert call(f"{server}/nowhere")[0] == 404
    assert call(f"{server}/health")[:2] == (200, {"status": "ok"})
    status, stats, _ = call(f"{server}/stats?project=demo")
    assert status == 200 and stats["nodes"]["Endpoint"] >= 30


def _post(body: bytes, *headers: bytes) -> bytes:
    """A raw ``POST /ask``; its ``Content-Length`` is the body's unless ``headers`` frame it."""
    lines = [b"POST /ask HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close", *headers]
    if not any(h.lower().startswith((b"content-length", b"transfer-encoding")) for h in headers):
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


JSON = b"Content-Type: application/json"
MALFORMED = {
    # The HTTP parser refuses these itself (as JSON too).
    "length-not-a-number": (_post(b"{}", JSON, b"Content-Length: abc"), 400, "not valid HTTP"),
    "length-negative": (_post(b"{}", JSON, b"Content-Length: -1"), 400, "not valid HTTP"),
    "headers-over-16-kib": (_post(b"{}", JSON, b"X-Padding: " + b"p" * 20_000), 431, "16 KiB"),
    "head-over-the-parser-s-limit": (b"POST /ask HTTP/1.1\r\nX-Padding: " + b"p" * 40_000,
                                     400, "16 KiB"),
    "not-http": (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", 400, "not valid HTTP"),
    # Refused before a byte of the body is read.
    "length-over-the-limit": (_post(b"{}", JSON, b"Content-Length: 99999999999"), 413, "over"),
    "chunked-over-the-limit": (
        _post(b"a000\r\n" + b"x" * 0xA000 + b"\r\n" + b"a000\r\n" + b"x" * 0xA000 + b"\r\n",
              JSON, b"Transfer-Encoding: chunked"), 413, "over"),
    "text-plain": (_post(ask_body("x"), b"Content-Type: text/plain"), 415, "application/json"),
    "no-content-type": (_post(ask_body("x")), 415, "application/json"),
    "invalid-json": (_post(b"{nope", JSON), 400, "question"),
    "extra-field": (_post(ask_body("x", shell="rm"), JSON), 400, "shell"),
    "k-zero": (_post(ask_body("x", k=0), JSON), 400, "k:"),
    "k-over": (_post(ask_body("x", k=51), JSON), 400, "k:"),
    "k-true": (_post(ask_body("x", k=True), JSON), 400, "k:"),
    "k-text": (_post(ask_body("x", k="3"), JSON), 400, "k:"),
    "empty-project": (_post(ask_body("x", project=""), JSON), 400, "project"),
    "bad-project": (_post(ask_body("x", project="../etc"), JSON), 400, "project"),
    "empty-question": (_post(ask_body(""), JSON), 400, "question"),
}


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_each_malformed_request_gets_its_4xx(served: Server, case: str) -> None:
    data, expected, says = MALFORMED[case]
    status, body = raw(served.port, data)
    assert status == expected, body
    assert says in json.loads(body)["error"]


def test_no_malformed_request_left_a_traceback_and_the_server_still_answers(
    served: Server,
) -> None:
    for data, _, _ in MALFORMED.values():
        raw(served.port, data)
    assert call(f"{served.url}/ask", ask_body(QUESTIONS[1]))[0] == 200
    assert "Traceback" not in served.stderr()


def test_a_server_answers_for_its_own_project_only(server: str) -> None:
    status, body, _ = call(f"{server}/ask", ask_body(QUESTIONS[0], project="other"))
    assert status == 403 and "'demo' only" in body["error"]
    status, body, _ = call(f"{server}/stats?project=other")
    assert status == 403
    status, stats, _ = call(f"{server}/stats")  # its project's counts, not every project's
    assert status == 200 and stats["project"] == "demo"
    assert call(f"{server}/stats?project=")[0] == 400
    assert call(f"{server}/ask", ask_body(QUESTIONS[0], project="demo"))[0] == 200


def test_a_foreign_host_or_origin_is_refused(served: Server) -> None:
    status, body, _ = call(f"{served.url}/ask", ask_body(QUESTIONS[0]),
                           {"Host": "evil.example"})
    assert status == 421 and "--allow-host" in body["error"]
    status, _, _ = call(f"{served.url}/stats", headers={"Host": f"evil.example:{served.port}"})
    assert status == 421
    status, _, _ = call(f"{served.url}/stats", headers={"Origin": "http://evil.example"})
    assert status == 403
    for host in (f"localhost:{served.port}", "127.0.0.1", f"[::1]:{served.port}"):
        assert call(f"{served.url}/stats", headers={"Host": host})[0] == 200


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "apiatlas.cli", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, check=False)  # fmt: skip


def _answer(out: str) -> dict[str, object]:
    result = json.loads(out)
    result.pop("timings_ms")
    return dict(result)


def test_the_thin_client_prints_what_ask_prints(served: Server, sample_home: SampleHome) -> None:
    home = ["--home", str(sample_home.home), "--project", sample_home.project]
    question = QUESTIONS[1]
    local_json = _cli("ask", question, "--json", "-k", "3", *home)
    remote_json = _cli("ask", question, "--json", "-k", "3", "--server", served.url)
    assert local_json.returncode == remote_json.returncode == 0, remote_json.stderr
    assert _answer(remote_json.stdout) == _answer(local_json.stdout)
    local_text = _cli("ask", question, *home)
    remote_text = _cli("ask", question, "--server", served.url)
    assert remote_text.returncode == 0
    assert remote_text.stdout == local_text.stdout and "route: " in remote_text.stdout


def test_the_thin_client_says_what_the_server_refused(served: Server) -> None:
    refused = _cli("ask", "x", "--server", served.url, "--project", "other")
    assert refused.returncode == 2
    assert refused.stdout.startswith("error: ") and "'demo' only" in refused.stdout
    gone = _cli("ask", "x", "--server", "http://127.0.0.1:9")
    assert gone.returncode == 1 and "cannot reach" in gone.stdout
    mixed = _cli("ask", "x", "--server", served.url, "--graph", "neo4j")
    assert mixed.returncode == 2 and "--graph cannot be used with --server" in mixed.stdout


def test_the_thin_client_loads_neither_the_agent_nor_the_model(served: Server) -> None:
    code = (
        "import sys\n"
        "from apiatlas.cli import main\n"
        f"code = main(['ask', 'How do I create a shipment?', '--server', {served.url!r}])\n"
        "heavy = ('langgraph', 'onnxruntime', 'apiatlas.atlas', 'numpy', 'pydantic')\n"
        "print(code, sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "0 []", out.stdout + out.stderr


def test_a_bounded_load_is_answered_alike_without_failures_or_growth(served: Server) -> None:
    def answer(question: str) -> tuple[int, str]:
        status, result, _ = call(f"{served.url}/ask", ask_body(question))
        result.pop("timings_ms", None)
        return status, json.dumps(result, sort_keys=True)

    alone = {q: answer(q) for q in QUESTIONS}  # one at a time: what each answer must be

    def client(rounds: int) -> list[tuple[int, str]]:
        return [answer(QUESTIONS[i % len(QUESTIONS)]) for i in range(rounds)]

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(client, [5] * 4))  # warm-up
        before = served.rss_kib()
        started = monotonic()
        answers = [a for r in pool.map(client, [25] * 4) for a in r]
    assert monotonic() - started < 120
    assert answers == [alone[QUESTIONS[i % len(QUESTIONS)]] for _ in range(4) for i in range(25)]
    assert all(status == 200 for status, _ in answers)
    grown_mib = (served.rss_kib() - before) / 1024
    assert grown_mib < 50, f"resident memory grew {grown_mib:.0f} MiB over 100 questions"
    assert "Traceback" not in served.stderr()


def test_a_body_slower_than_the_time_limit_gets_408_and_the_server_keeps_serving(
    sample_home: SampleHome,
) -> None:
    with running_server(sample_home.home, "--project", sample_home.project,
                        "--timeout", "2") as server:
        started = monotonic()
        status, body = raw(server.port, b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           b"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n"
                           b'{"question"')  # ten bytes of the sixty thousand declared
        assert status == 408, body
        assert "did not arrive within 2 s" in json.loads(body)["error"]
        assert monotonic() - started < 20
        status, result, _ = call(f"{server.url}/ask", ask_body("create a location"))
        assert status == 200 and result["endpoints"][0]["path"] == "/v2/locations"


def test_a_connection_that_trickles_its_headers_or_sends_none_is_closed_with_408(
    sample_home: SampleHome,
) -> None:
    """150 connections, each sending its request line and headers a byte every half second,
    one that sends nothing and one that trickles its second request: all closed with a JSON 408
    at the head deadline, while a normal client is answered."""
    with running_server(sample_home.home, "--project", sample_home.project,
                        "--timeout", "2") as server:
        head = b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        started = monotonic()
        slow = [socket.create_connection(("127.0.0.1", server.port), timeout=30)
                for _ in range(150)]
        idle = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        second = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        second.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b'{"status":"ok"}' not in first:  # the whole first reply
            first += second.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        every = [*slow, idle, second]
        got = {sock: b"" for sock in every}
        ended: set[socket.socket] = set()  # closed by the server
        sent = 0
        while len(ended) < len(every) and monotonic() - started < 30:
            for sock in [*slow, second]:
                if sock not in ended:
                    try:
                        sock.sendall(head[sent:sent + 1])
                    except OSError:  # closed by the server: its reply is read below
                        pass
            sent += 1
            if sent == 2:
                status, answer, _ = call(f"{server.url}/ask", ask_body("create a location"))
                assert status == 200 and answer["endpoints"][0]["path"] == "/v2/locations"
            sleep(0.5)
            for sock in every:
                if sock in ended:
                    continue
                sock.setblocking(False)
                try:
                    while chunk := sock.recv(65536):
                        got[sock] += chunk
                    ended.add(sock)
                except BlockingIOError:
                    pass
                except OSError:
                    ended.add(sock)
                sock.setblocking(True)
        took = monotonic() - started
        assert sent < len(head), "a connection sent its whole head: trickle slower"
        assert len(ended) == len(every)
        late = [got[sock][:40] for sock in every if not got[sock].startswith(b"HTTP/1.1 408")]
        assert not late, late
        error = json.loads(got[slow[0]].partition(b"\r\n\r\n")[2])["error"]
        assert "did not arrive within 2 s" in error
        assert took < 15
        for sock in [*slow, idle, second]:
            sock.close()
        assert call(f"{server.url}/ask", ask_body("create a location"))[0] == 200
        assert "Traceback" not in server.stderr()
