"""`apiatlas serve` in its production shape: several worker processes, a bearer token, more host
names and every project; and the flags it refuses to start with."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.integration.app.serve_process import Server, ask_body, call, running_server
from tests.integration.conftest import SampleHome

TOKEN = "s3cret-token-for-the-tests-0123456789"
QUESTION = "How do I create a shipment?"


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("token") / "token"
    path.write_text(TOKEN + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served(sample_home: SampleHome, token_file: Path) -> Iterator[Server]:
    with running_server(
        sample_home.home, "--project", sample_home.project, "--workers", "2",
        "--token-file", str(token_file), "--allow-host", "atlas.internal", "--all-projects",
    ) as server:  # fmt: skip
        yield server


def _bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _workers(server: Server) -> list[int]:
    """The server's worker processes."""
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text()
    return [int(pid) for pid in children.split()
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_two_worker_processes_answer(served: Server) -> None:
    assert len(_workers(served)) == 2
    for _ in range(4):
        status, result, _ = call(f"{served.url}/ask", ask_body(QUESTION), _bearer())
        assert status == 200 and result["endpoints"][0]["path"] == "/v2/shipments"


def test_the_workers_share_questions_whatever_the_connections(served: Server) -> None:
    """Four keep-alive clients connecting together: each worker answers its part. (uvicorn's
    own workers share the listening socket, and the first to wake took all four connections,
    or three of them, in most rounds of the bench.)"""
    workers = _workers(served)
    before = [_cpu_seconds(pid) for pid in workers]

    def client(_: int) -> list[int]:
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
        statuses = []
        for _ in range(8):
            connection.request("POST", "/ask", ask_body(QUESTION),
                               {**_bearer(), "Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        connection.close()
        return statuses

    with ThreadPoolExecutor(4) as pool:
        statuses = [status for each in pool.map(client, range(4)) for status in each]
    assert statuses == [200] * 32
    used = [_cpu_seconds(pid) - was for pid, was in zip(workers, before)]
    assert min(used) >= 0.3 * sum(used), used


def test_a_worker_that_cannot_open_the_project_stops_the_server_with_why(
    sample_home: SampleHome,
) -> None:
    done = _cli("serve", "--home", str(sample_home.home), "--project", sample_home.project,
                "--port", "0", "--workers", "2", "--graph", "neo4j",
                env={"NEO4J_URI": "bolt://127.0.0.1:9"})  # fmt: skip
    said = " ".join(done.stdout.split())
    assert done.returncode != 0 and "serving on" not in said
    assert "a worker process could not start: cannot reach Neo4j at bolt://127.0.0.1:9" in said
    assert "Traceback" not in done.stdout + done.stderr


def test_the_workers_end_with_the_server(sample_home: SampleHome) -> None:
    """SIGTERM: the workers finish and close their stores; SIGKILL: they end on their own."""
    for stop in (signal.SIGTERM, signal.SIGKILL):
        with running_server(sample_home.home, "--project", sample_home.project,
                            "--workers", "2") as server:  # fmt: skip
            workers = _workers(server)
            assert call(f"{server.url}/ask", ask_body(QUESTION))[0] == 200
            server.proc.send_signal(stop)
            server.proc.wait(timeout=60)
            assert _ended(workers), (stop, workers)
        assert "Traceback" not in server.stderr()


def _ended(pids: list[int], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return True
        time.sleep(0.1)
    return False


def test_no_or_a_wrong_token_gets_a_401_with_its_challenge(served: Server) -> None:
    status, body, headers = call(f"{served.url}/ask", ask_body(QUESTION))
    assert status == 401 and "Bearer" in body["error"]
    assert headers["www-authenticate"].startswith("Bearer")
    status, _, headers = call(f"{served.url}/stats", headers=_bearer(TOKEN[:-1] + "x"))
    assert status == 401 and 'error="invalid_token"' in headers["www-authenticate"]
    assert call(f"{served.url}/stats", headers={"Authorization": TOKEN})[0] == 401
    assert call(f"{served.url}/stats", headers=_bearer())[0] == 200
    # Health and the API's description need no token.
    assert call(f"{served.url}/health")[:2] == (200, {"status": "ok"})
    status, schema, _ = call(f"{served.url}/openapi.json")
    assert status == 200 and "bearer" in schema["components"]["securitySchemes"]
    assert {"/ask", "/stats", "/health"} <= set(schema["paths"])


def test_an_allowed_host_name_is_answered_and_others_are_not(served: Server) -> None:
    assert call(f"{served.url}/stats", headers={**_bearer(), "Host": "atlas.internal"})[0] == 200
    assert call(f"{served.url}/stats", headers={**_bearer(), "Host": "atlas.evil"})[0] == 421


def test_every_project_is_answered_with_all_projects(served: Server) -> None:
    status, result, _ = call(f"{served.url}/ask", ask_body(QUESTION, project="demo"), _bearer())
    assert status == 200 and result["endpoints"] and result["outcome"] in ("answer", "unsure")
    # A project nothing was ingested into is a 400 naming the projects that exist.
    status, body, _ = call(f"{served.url}/ask", ask_body(QUESTION, project="deme"), _bearer())
    assert status == 400 and "no project 'deme'" in body["error"]
    assert "did you mean 'demo'?" in body["error"] and body["error"].endswith("Projects: demo")
    status, body, _ = call(f"{served.url}/stats?project=other", headers=_bearer())
    assert status == 400 and "no project 'other'" in body["error"]
    status, stats, _ = call(f"{served.url}/stats", headers=_bearer())
    assert status == 200 and stats["project"] == "demo" and stats["nodes"]["Endpoint"] >= 30


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "APIATLAS_SERVE_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "apiatlas.cli", *args], capture_output=True, text=True,
        timeout=120, env={**environment, **(env or {})}, check=False,
    )  # fmt: skip


def test_the_thin_client_sends_the_token(served: Server, token_file: Path) -> None:
    refused = _cli("ask", QUESTION, "--server", served.url, "--json")
    assert refused.returncode == 2 and "error: send the server's token" in refused.stderr
    by_env = _cli("ask", QUESTION, "--json", env={"APIATLAS_SERVER": served.url,
                                                 "APIATLAS_SERVE_TOKEN": TOKEN})
    by_file = _cli("ask", QUESTION, "--server", served.url, "--token-file", str(token_file),
                   "--json")
    assert by_env.returncode == by_file.returncode == 0, by_env.stderr + by_file.stderr
    for done in (by_env, by_file):
        assert '"path": "/v2/shipments"' in done.stdout


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--host", "0.0.0.0"], {}, "is not a loopback address: give the server a token"),
        (["--host", "0.0.0.0"], {"APIATLAS_SERVE_TOKEN": "short"}, "at least 16"),
        (["--workers", "0"], {}, "--workers must be 1 or more"),
        (["--timeout", "0"], {}, "--timeout must be a positive number"),
    ],
    ids=["public-without-token", "weak-token", "no-workers", "no-time"],
)
def test_a_server_refuses_to_start_with_unsafe_or_bad_flags(
    tmp_path: Path, args: list[str], env: dict[str, str], says: str
) -> None:
    done = _cli("serve", "--home", str(tmp_path / "home"), "--port", "0", *args, env=env)
    assert done.returncode == 2
    assert says in " ".join(done.stdout.split())
    assert "serving on" not in done.stdout and not (tmp_path / "home").exists()


def test_without_the_serve_extra_the_command_names_it(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['fastapi'] = None  # as if not installed\n"
        "from apiatlas.cli import main\n"
        f"sys.exit(main(['serve', '--home', {str(tmp_path / 'home')!r}, '--port', '0']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "pip install 'apiatlas[serve]'" in " ".join(done.stdout.split())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; its new parent reaps it
