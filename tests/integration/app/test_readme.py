"""The README's Python quickstart runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
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


def _extra_modules(extras: set[str]) -> set[str]:
    """Top-level modules that only the distributions of ``extras`` install."""
    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    dists = {re.split(r"[\[=<>]", d)[0].lower().replace("_", "-")
             for name in extras for d in project["optional-dependencies"][name]
             if not d.startswith("apiatlas")}  # fmt: skip
    owners = metadata.packages_distributions()
    return {module for module, of in owners.items()
            if of and {d.lower().replace("_", "-") for d in of} <= dists}  # fmt: skip


def test_the_tools_snippet_runs_on_the_install_it_names(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("**Tools**", 1)[1]
    named = re.search(r"pip install 'apiatlas\[(\w+)\]'", section.split("```python", 1)[0])
    assert named is not None, "the README names no install for its tools snippet"
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None and "make_tools" in code.group(1)
    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    others = set(project["optional-dependencies"]) - {named.group(1), "dev"}
    blocked = _extra_modules(others)
    assert {"mcp", "fastapi", "torch", "neo4j"} <= blocked  # the check blocks the other extras
    script = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {sorted(blocked)!r}:
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.sample import sample_guides_dir, sample_spec_path
with ApiAtlas(Settings.from_env()) as atlas:
    atlas.ingest(openapi=[sample_spec_path()], docs=[sample_guides_dir()])
exec(compile({code.group(1)!r}, 'README.md', 'exec'))
print(sorted(t.name for t in agent.get_graph().nodes.values() if t.name != '__start__'))
"""
    env = {**os.environ, "APIATLAS_HOME": str(tmp_path / "home"), "APIATLAS_PROJECT": "shop",
           "OPENAI_API_KEY": "sk-not-used"}  # the model is built, never called
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "tools" in run.stdout and "model" in run.stdout, run.stdout
