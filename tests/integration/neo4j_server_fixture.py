"""The session's Neo4j: the server in NEO4J_URI when set, else a real local one started here."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.config import Settings
from apiatlas.graph.devserver import launcher as neo4j_server

# The compiled launcher and its classpath outlive a session (only the data dir is per session),
# so later sessions skip Maven and javac.
LAUNCHER_HOME = Path(tempfile.gettempdir()) / "apiatlas-test-neo4j-launcher"
TEST_PASSWORD = "apiatlas-test-password"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def neo4j_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Settings (``graph="neo4j"``, a session tmp ``home``) pointing at a running Neo4j."""
    home = tmp_path_factory.mktemp("neo4j-home")
    uri = os.environ.get("NEO4J_URI")
    if uri:
        yield Settings(
            home=home,
            graph="neo4j",
            neo4j_uri=uri,
            neo4j_username=os.environ.get("NEO4J_USERNAME", "neo4j"),
            neo4j_password=os.environ.get("NEO4J_PASSWORD", Settings.neo4j_password),
        )
        return
    port = free_port()
    launcher = Settings(home=LAUNCHER_HOME, neo4j_password=TEST_PASSWORD)
    data_dir = tmp_path_factory.mktemp("neo4j-data")
    uri = neo4j_server.start(launcher, port=port, data_dir=data_dir, timeout=240)
    try:
        yield Settings(home=home, graph="neo4j", neo4j_uri=uri, neo4j_password=TEST_PASSWORD)
    finally:
        neo4j_server.stop(launcher, data_dir=data_dir)
