"""Every notebook's code cells run top to bottom against the real embedded stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[3] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    namespace: dict[str, object] = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{notebook.name}", "exec"), namespace)
    assert namespace["result"].endpoints[0].path == "/v2/locations"  # type: ignore[attr-defined]
    assert namespace["missing"].abstained is True  # type: ignore[attr-defined]


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS, "notebooks/ has no notebook"
