"""Fixtures that start real servers (Neo4j, PostgreSQL) for the integration suites, and the
sample API ingested once per session for the suites that only read it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from apiatlas.sample import write_sample_api
from tests.integration.postgres_server_fixture import pg_url  # noqa: F401
from tests.integration.neo4j_server_fixture import neo4j_settings  # noqa: F401

SAMPLE_PROJECT = "demo"


class SampleHome(NamedTuple):
    """An apiatlas home holding the sample API (specs and guides) as project ``demo``."""

    home: Path
    sample: Path
    project: str = SAMPLE_PROJECT


@pytest.fixture(scope="session")
def _ingested_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample written and ingested once, by the CLI in its own process (so that no
    client of this process holds its stores open while modules copy it)."""
    root = tmp_path_factory.mktemp("sample-ingested")
    sample = write_sample_api(root / "sample")
    done = subprocess.run(
        [sys.executable, "-m", "apiatlas.cli", "ingest", "--home", str(root / "home"),
         "--project", SAMPLE_PROJECT, "--openapi", str(sample / "openapi.yaml"),
         "--docs", str(sample / "guides")],
        capture_output=True, text=True, timeout=600, cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture(scope="module")
def sample_home(_ingested_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleHome:
    """A module's own copy of the ingested sample home: what a module writes stays its own."""
    root = tmp_path_factory.mktemp("sample-home")
    shutil.copytree(_ingested_sample / "home", root / "home")
    return SampleHome(home=root / "home", sample=_ingested_sample / "sample")


@pytest.fixture(scope="session")
def eval_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's ``apiatlas eval`` output folder: a dataset's home is ingested once and the
    runs after it reuse it (``keep_homes``), so a real API is embedded once per session."""
    return tmp_path_factory.mktemp("eval-out")
