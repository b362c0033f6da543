"""`apiatlas serve`: one warm process answers over HTTP, and bad requests do not stop it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.integration.conftest import SampleHome


@pytest.fixture(scope="module")
def server(sample_home: SampleHome) -> Iterator[str]:
    home = sample_home.home
    proc = subprocess.Popen(
        [sys.executable, "-m", "apiatlas.cli", "serve", "--home", str(home), "--project", "demo",
         "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=home,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("apiatlas serving on http://127.0.0.1:"), line + (
            proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        yield line.split()[3]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def call(url: str, body: bytes | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_ask_answers_like_the_cli_with_citations(server: str) -> None:
    status, result = call(f"{server}/ask", json.dumps(
        {"question": "What endpoints can I use to create a location?"}).encode())
    assert status == 200
    assert result["endpoints"][0]["method"] == "POST"
    assert result["endpoints"][0]["path"] == "/v2/locations"
    assert len(result["citations"]) >= 2
    status, again = call(f"{server}/ask", json.dumps(
        {"question": "How do I create a shipment?", "k": 3}).encode())
    assert status == 200 and again["endpoints"][0]["path"] == "/v2/shipments"
    ranked = [e for e in again["endpoints"] if e["role"] != "prerequisite"]
    assert len(ranked) <= 3  # k counts the ranked endpoints; calls needed first come on top


def test_bad_requests_get_a_clear_400_and_the_server_keeps_serving(server: str) -> None:
    status, body = call(f"{server}/ask", b"not json")
    assert status == 400 and "question" in body["error"]
    status, body = call(f"{server}/ask", json.dumps({"question": ""}).encode())
    assert status == 400 and "question" in body["error"]
    status, body = call(f"{server}/ask", json.dumps({"question": "x", "k": 0}).encode())
    assert status == 400 and "k" in body["error"]
    assert call(f"{server}/nowhere")[0] == 404
    assert call(f"{server}/health") == (200, {"status": "ok"})
    status, stats = call(f"{server}/stats?project=demo")
    assert status == 200 and stats["nodes"]["Endpoint"] >= 30
