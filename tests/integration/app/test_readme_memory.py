"""The README's project-memory example runs as written, and its CLI lines name real commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from apiatlas.cli import _parser

README = Path(__file__).resolve().parents[3] / "README.md"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("## Project memory", 1)[1].split("\n## ", 1)[0]


def test_the_memory_example_makes_the_warning_lead_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = re.search(r"```python\n(.*?)```", section(), re.S)
    assert code is not None, "the README lost its project-memory code block"
    monkeypatch.chdir(tmp_path)  # the example keeps its state in ./.apiatlas
    exec(compile(code.group(1), "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "/v2/shipments/{shipment_id}/cancel True"
    assert (tmp_path / ".apiatlas" / "memory.sqlite").exists()


def test_the_memory_cli_lines_parse() -> None:
    block = re.search(r"```bash\n(.*?)```", section(), re.S)
    assert block is not None
    first = block.group(1).split("apiatlas memory list")[0].replace("\\\n", " ")
    argv = re.findall(r'"[^"]*"|\S+', first)[1:]
    args = _parser().parse_args([a.strip('"') for a in argv])
    assert args.memory_command == "add" and args.kind == "warning"
    assert args.refs == ["DELETE /v2/shipments/{shipment_id}",
                         "POST /v2/shipments/{shipment_id}/cancel"]
    for line in ("memory list --at 2026-11-01 --json", "memory search QUESTION",
                 "memory history ID", "memory forget ID",
                 "memory supersede ID TEXT --refs REF", "ask --at 2026-11-01 QUESTION"):
        _parser().parse_args(line.split())
