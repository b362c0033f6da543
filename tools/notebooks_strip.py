"""Keep notebooks committed without results.

Usage, from the repository root: ``python tools/notebooks_strip.py [--check] [PATH]...``.

The notebooks under ``notebooks/`` run in CI; their committed copies carry no outputs and null
execution counts, so a diff shows only what a person changed. By default this strips the given
notebooks in place (``notebooks/*.ipynb`` of the current directory when none is given), rewriting
only those that change, the way Jupyter writes them (one-space indent, sorted keys). With
``--check`` it changes nothing, names each code cell that still holds results, and exits 1.

Plain JSON, so it needs no Jupyter package.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_GLOB = "notebooks/*.ipynb"
STRIP_COMMAND = "python tools/notebooks_strip.py"
"""What to run to strip them, for messages."""


def _code_cells(notebook: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, c) for i, c in enumerate(notebook.get("cells", [])) if c.get("cell_type") == "code"]


def unstripped_cells(notebook: dict[str, Any]) -> list[str]:
    """The code cells that hold results, each as ``cell <id or index>: <what it holds>``."""
    found = []
    for index, cell in _code_cells(notebook):
        held = [
            what
            for what, present in (
                ("outputs", bool(cell.get("outputs"))),
                ("an execution count", cell.get("execution_count") is not None),
            )
            if present
        ]
        if held:
            found.append(f"cell {cell.get('id', index)}: {' and '.join(held)}")
    return found


def strip(notebook: dict[str, Any]) -> bool:
    """Remove every code cell's outputs and execution count, in place; True if any were set."""
    changed = bool(unstripped_cells(notebook))
    for _, cell in _code_cells(notebook):
        cell["outputs"] = []
        cell["execution_count"] = None
    return changed


def strip_file(path: Path) -> bool:
    """Strip the notebook at ``path``; rewrite it only when that changed something.

    Returns:
        Whether the file was rewritten.
    """
    notebook = json.loads(path.read_text(encoding="utf-8"))
    if not strip(notebook):
        return False
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Strip (or ``--check``) notebooks; 0 when they are (now) stripped, 1 when a check fails."""
    parser = argparse.ArgumentParser(
        prog=STRIP_COMMAND, description="Remove the outputs and execution counts of notebooks."
    )
    parser.add_argument("paths", nargs="*", type=Path, help=f"notebooks (default: {DEFAULT_GLOB})")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if unstripped")
    args = parser.parse_args(argv)
    paths: list[Path] = args.paths or sorted(Path().glob(DEFAULT_GLOB))
    failed = False
    for path in paths:
        if args.check:
            for problem in unstripped_cells(json.loads(path.read_text(encoding="utf-8"))):
                print(f"{path}: {problem}", file=sys.stderr)
                failed = True
        elif strip_file(path):
            print(f"stripped {path}")
    if failed:
        print(f"run `{STRIP_COMMAND}` to strip them", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
