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
    heavy = (*HEAVY, "langgraph", "langchain_chroma")
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
