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

