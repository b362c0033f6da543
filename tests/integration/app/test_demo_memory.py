"""``make demo`` end to end, twice: a team memory changes an answer, and is recorded only once.

Real SQLite graph, Chroma, MiniLM and ``SqliteStore`` memory under a temporary APIATLAS_HOME.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from apiatlas import demo
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings

DELETE = "DELETE /v2/shipments/{shipment_id}"
CANCEL = "POST /v2/shipments/{shipment_id}/cancel"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    home = tmp_path_factory.mktemp("demo") / ".apiatlas"
    printed: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        for name in ("DATABASE_URL", "APIATLAS_MEMORY", "APIATLAS_GRAPH", "APIATLAS_VECTORS"):
            patch.delenv(name, raising=False)
        patch.setenv("APIATLAS_HOME", str(home))
        for _ in range(2):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                demo.main()
            printed.append(out.getvalue())
    return home, printed


def memory_id(text: str, phrase: str) -> str:
    found = re.search(re.escape(phrase) + r" team memory memory:(mem_\w+) \(warning\)", text)
    assert found is not None, f"no {phrase!r} line in the demo output"
    return found.group(1)


def test_the_first_run_records_a_warning_that_changes_the_answer(
    runs: tuple[Path, list[str]],
) -> None:
    first = runs[1][0]
    mid = memory_id(first, "Recorded")
    assert (
        f"first endpoint before: {DELETE}; after: {CANCEL}; memory cited as [1] memory:{mid}"
        in first
    )
    assert "Team memory" in first and "Forbidden by your team" in first


def test_a_second_run_finds_the_warning_instead_of_adding_it_again(
    runs: tuple[Path, list[str]],
) -> None:
    home, (first, second) = runs
    mid = memory_id(first, "Recorded")
    assert memory_id(second, "Already recorded (not added again):") == mid
    # Before: the answer as it was just before the team recorded the warning.
    assert f"first endpoint before: {DELETE}; after: {CANCEL}" in second
    flat = " ".join(second.split())  # rich wraps long lines at the console width
    assert "graph changed: False" in flat and "vectors added 0," in flat
    with ApiAtlas(Settings(home=home, project="sample")) as atlas:
        warnings = [m for m in atlas.memory().list(include_history=True)
                    if m.text == demo.TEAM_WARNING]
    assert [m.id for m in warnings] == [mid]
