"""Stripping notebooks: outputs and execution counts go, everything else stays byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.notebooks_strip import main, strip, strip_file, unstripped_cells


def _notebook(*, executed: bool) -> dict[str, object]:
    run = {"execution_count": 3, "outputs": [{"output_type": "stream", "name": "stdout",
                                              "text": ["hi\n"]}]}  # fmt: skip
    clean = {"execution_count": None, "outputs": []}
    return {
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title"]},
            {"cell_type": "code", "id": "say", "metadata": {"tags": ["keep"]},
             "source": ["print('hi')"], **(run if executed else clean)},
            {"cell_type": "code", "id": "quiet", "metadata": {}, "source": ["x = 1"],
             "execution_count": 4 if executed else None, "outputs": []},
        ],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _write(path: Path, notebook: dict[str, object]) -> None:
    path.write_text(json.dumps(notebook, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def test_unstripped_cells_names_what_each_cell_holds() -> None:
    assert unstripped_cells(_notebook(executed=True)) == [
        "cell say: outputs and an execution count",
        "cell quiet: an execution count",
    ]
    assert unstripped_cells(_notebook(executed=False)) == []


def test_strip_clears_results_and_keeps_the_rest() -> None:
    notebook = _notebook(executed=True)
    assert strip(notebook) is True
    assert notebook == _notebook(executed=False)
    assert strip(notebook) is False


def test_strip_file_rewrites_only_when_needed(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    _write(path, _notebook(executed=True))
    assert strip_file(path) is True
    assert json.loads(path.read_text(encoding="utf-8")) == _notebook(executed=False)
    clean = path.read_bytes()
    path.write_bytes(clean.replace(b' "cells"', b'  "cells"'))  # any layout: left alone
    kept = path.read_bytes()
    assert strip_file(path) is False
    assert path.read_bytes() == kept


def test_check_fails_naming_the_cells_and_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirty, clean = tmp_path / "dirty.ipynb", tmp_path / "clean.ipynb"
    _write(dirty, _notebook(executed=True))
    _write(clean, _notebook(executed=False))
    before = dirty.read_bytes()
    assert main(["--check", str(dirty), str(clean)]) == 1
    err = capsys.readouterr().err
    assert f"{dirty}: cell say: outputs" in err and "clean.ipynb" not in err
    assert "python tools/notebooks_strip.py" in err
    assert dirty.read_bytes() == before  # a check changes nothing
    assert main(["--check", str(clean)]) == 0


def test_main_strips_the_notebooks_folder_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "a.ipynb"
    _write(path, _notebook(executed=True))
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0
    assert capsys.readouterr().out == "stripped notebooks/a.ipynb\n"
    assert unstripped_cells(json.loads(path.read_text(encoding="utf-8"))) == []
