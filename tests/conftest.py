"""Shared fixtures. Real third-party data lives in ../shared/data and is never copied here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("APIATLAS_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()

# .ci/run greps for this exact phrase: a skip for missing shared data fails CI.
SHARED_SKIP_REASON = "shared data missing: ../shared/data is not beside the repository"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ../shared/data; skips the test with a clear reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_SKIP_REASON} (looked in {SHARED_DATA})")
    return SHARED_DATA



@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep what shares a server or a home on one worker when ``make test`` runs in parallel
    (pytest-xdist, ``--dist loadgroup``): every test module that names the session's Neo4j
    (one server, one launcher folder) on one worker, every module of the session's eval homes
    (a real API ingested once) on one. The rest spread over the workers."""
    texts: dict[Path, str] = {}
    for item in items:
        path = Path(str(item.path))
        text = texts.setdefault(path, path.read_text(encoding="utf-8"))
        if "neo4j_settings" in text or "LAUNCHER_HOME" in text:
            item.add_marker(pytest.mark.xdist_group("neo4j"))
        elif "eval_out" in text:
            item.add_marker(pytest.mark.xdist_group("eval-homes"))
