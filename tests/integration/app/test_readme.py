"""The README's Python quickstart runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def test_quickstart_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quickstart (Python)", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "the README lost its quickstart code block"
    assert len(code.group(1).strip().splitlines()) <= 12
    monkeypatch.chdir(tmp_path)  # the quickstart keeps its state in ./.apiatlas
    exec(compile(code.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "POST" in out and "/v2/locations" in out
    assert (tmp_path / ".apiatlas" / "graph.sqlite").exists()
