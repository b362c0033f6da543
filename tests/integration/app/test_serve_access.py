"""`apiatlas serve` in its production shape: several worker processes, a bearer token, more host
names and every project; and the flags it refuses to start with."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
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


def test_two_worker_processes_answer(served: Server) -> None:
    children = Path(f"/proc/{served.proc.pid}/task/{served.proc.pid}/children").read_text()
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in children.split()]
    assert sum(b"spawn_main" in c for c in commands) == 2
    for _ in range(4):
        status, result, _ = call(f"{served.url}/ask", ask_body(QUESTION), _bearer())
        assert status == 200 and result["endpoints"][0]["path"] == "/v2/shipments"


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
    status, result, _ = call(f"{served.url}/ask", ask_body(QUESTION, project="other"), _bearer())
    assert status == 200 and result["endpoints"] == []  # nothing was ingested there
    status, stats, _ = call(f"{served.url}/stats?project=other", headers=_bearer())
    assert status == 200 and stats["project"] == "other" and stats["nodes"] == {}
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
