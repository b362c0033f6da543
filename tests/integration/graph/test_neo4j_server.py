"""The local Neo4j launcher: a real server's lifecycle on its own port and data directory."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from apiatlas.config import Settings
from apiatlas.errors import StoreError
from apiatlas.graph.devserver import launcher as neo4j_server
from apiatlas.graph.model import GraphBatch, Node
from apiatlas.graph.neo4j.store import Neo4jGraphStore
from tests.integration.neo4j_server_fixture import LAUNCHER_HOME, free_port

PASSWORD = "lifecycle-password"


def _store(uri: str, password: str = PASSWORD) -> Neo4jGraphStore:
    return Neo4jGraphStore(uri, "neo4j", password)


def test_start_status_stop_restart(tmp_path: Path) -> None:
    settings = Settings(home=LAUNCHER_HOME, neo4j_password=PASSWORD)
    data, port = tmp_path / "neo4j", free_port()
    uri = neo4j_server.start(settings, port=port, data_dir=data, timeout=240)
    try:
        assert uri == f"bolt://127.0.0.1:{port}"
        running = neo4j_server.status(settings, data_dir=data)
        assert running.running and running.accepting and running.uri == uri
        assert running.pid is not None
        cmdline = Path(f"/proc/{running.pid}/cmdline").read_bytes()
        assert PASSWORD.encode() not in cmdline  # argv is world-readable; the password is not there
        started = time.monotonic()
        assert neo4j_server.start(settings, port=port, data_dir=data) == uri
        assert time.monotonic() - started < 10  # idempotent: no second server
        store = _store(uri)
        batch = GraphBatch(project="life", scope="s", nodes=[Node(key="t", label="Tag", props={"name": "kept"})])
        assert store.apply([batch]).nodes_added == 1
        with pytest.raises(StoreError, match="credentials"):
            neo4j_server.start(Settings(home=LAUNCHER_HOME, neo4j_password="wrong-password"), port=port, data_dir=data)
        assert neo4j_server.status(settings, data_dir=data).running  # a bad login stops nothing
        with pytest.raises(StoreError, match="NEO4J_PASSWORD"):
            _store(uri, "wrong-password")

        assert neo4j_server.stop(settings, data_dir=data) is True
        started = time.monotonic()
        with pytest.raises(StoreError, match=uri):  # a store outliving its server fails fast
            store.nodes("life", "Tag")
        assert time.monotonic() - started < 15
        store.close()
        stopped = neo4j_server.status(settings, data_dir=data)
        assert not stopped.running and not stopped.accepting
        assert not (data / "neo4j.pid").exists()
        assert neo4j_server.stop(settings, data_dir=data) is False

        assert neo4j_server.start(settings, port=port, data_dir=data, timeout=240) == uri
        store = _store(uri)
        assert [n.props for n in store.nodes("life", "Tag")] == [{"name": "kept"}]  # data persisted
        store.close()
    finally:
        neo4j_server.stop(settings, data_dir=data)


def test_unreachable_uri_fails_fast_naming_it() -> None:
    uri = f"bolt://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(StoreError, match=uri) as raised:
        _store(uri)
    assert time.monotonic() - started < 10
    assert "apiatlas neo4j start" in str(raised.value)


def test_cli_reports_and_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    idle = Settings(home=tmp_path, neo4j_uri=f"bolt://127.0.0.1:{free_port()}", neo4j_password=PASSWORD)
    assert neo4j_server.cli("status", idle) == 1
    assert "not reachable" in capsys.readouterr().out
    assert neo4j_server.cli("stop", idle) == 0
    assert capsys.readouterr().out.strip() == "not running"
    remote = Settings(home=tmp_path, neo4j_uri="neo4j+s://example.databases.neo4j.io", neo4j_password=PASSWORD)
    assert neo4j_server.cli("start", remote) == 2
    assert "NEO4J_URI" in capsys.readouterr().err
    short = Settings(home=tmp_path, neo4j_uri="bolt://127.0.0.1:7999", neo4j_password="short")
    assert neo4j_server.cli("start", short) == 2
