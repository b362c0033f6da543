"""Commands that only read the graph or the project memory start without the heavy stack."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import SampleHome

HEAVY = (
    "torch", "transformers", "sentence_transformers", "chromadb", "sklearn", "onnxruntime", "mcp",
)  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [["--help"], ["graph", "stats", "--json"], ["memory", "list", "--json"]],
    ids=["help", "graph-stats", "memory-list"],
)
def test_light_commands_import_no_model_and_no_vector_store(args: list[str], tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from apiatlas.cli import main\n"
        f"argv = {args!r} + ([] if '--help' in {args!r} else ['--home', {str(tmp_path)!r}])\n"
        "try:\n"
        "    main(argv)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr


def test_an_unchanged_ingest_starts_without_the_model_stores_or_agent(
    sample_home: SampleHome, tmp_path: Path
) -> None:
    home = shutil.copytree(sample_home.home, tmp_path / "home")
    args = ["ingest", "--home", str(home), "--project", sample_home.project,
            "--openapi", str(sample_home.sample / "openapi.yaml"),
            "--docs", str(sample_home.sample / "guides")]
    # Nor the loaders, the graph builder or the answer's Markdown renderer: nothing is read.
    heavy = (*HEAVY, "langgraph", "langchain_chroma", "apiatlas.loaders.openapi",
             "apiatlas.loaders.splitting", "apiatlas.graph.build.ingest", "rich.markdown")
    code = (
        "import sys\n"
        "from apiatlas.cli import main\n"
        f"code = main({args!r})\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert "unchanged" in out.stdout.lower(), out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0 []", out.stdout + out.stderr


def test_the_program_leaves_the_imports_to_the_os_at_exit_but_main_does_not(
    tmp_path: Path,
) -> None:
    # The console script and `python -m apiatlas.cli` run `run`: the command, then a frozen
    # collector, so Python's shutdown does not search the imported libraries' objects for cycles.
    argv = ["graph", "stats", "--json", "--home", str(tmp_path)]
    code = (
        "import gc\n"
        "from importlib.metadata import entry_points\n"
        "from apiatlas.cli import main, run\n"
        f"first = main({argv!r})\n"
        "before = gc.get_freeze_count()\n"
        f"second = run({argv!r})\n"
        "script = entry_points(group='console_scripts')['apiatlas'].value\n"
        "print(first, before, second, gc.get_freeze_count() > 0, script)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    last = out.stdout.strip().splitlines()[-1]
    assert last == "2 0 2 True apiatlas.cli:run", out.stdout + out.stderr
    # The module entry point is the same program (with --json, messages go to stderr).
    module = subprocess.run(
        [sys.executable, "-m", "apiatlas.cli", *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert module.returncode == 2 and "no knowledge graph" in module.stderr, module.stderr
