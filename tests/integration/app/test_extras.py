"""The core install runs the embedded default; a path that needs an extra names the extra.

Each CLI run below happens in a fresh interpreter where the extras' packages cannot be
imported (a meta-path finder refuses them), as on a machine with only ``pip install apiatlas``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from apiatlas.extras import MissingExtraError, require
from apiatlas.sample import write_sample_api

EXTRA_PACKAGES = (
    "neo4j", "psycopg", "psycopg_pool", "langchain_postgres", "pgserver",
    "langgraph.checkpoint.postgres", "langgraph.store.postgres", "langchain_openai", "mcp",
    "matplotlib",
)  # fmt: skip

WITHOUT_EXTRAS = f"""
import sys

class NotInstalled:
    blocked = {EXTRA_PACKAGES!r}

    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in self.blocked):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
from apiatlas.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_without_extras(*args: str, env: dict[str, str] | None = None, cwd: Path
                       ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project ingested by the core install alone."""
    root = tmp_path_factory.mktemp("core-only")
    sample = write_sample_api(root / "sample")
    done = run_without_extras(
        "ingest", "--home", str(root / "home"), "--project", "demo",
        "--openapi", str(sample / "openapi.yaml"), "--docs", str(sample / "guides"), cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root / "home"


def test_the_embedded_default_needs_no_extra(home: Path) -> None:
    done = run_without_extras(
        "ask", "--home", str(home), "--project", "demo", "--json",
        "Which call creates a new location?", cwd=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"path": "/v2/locations"' in done.stdout


@pytest.mark.parametrize(
    ("args", "env", "extra"),
    [
        (["graph", "stats", "--graph", "neo4j"], {}, "neo4j"),
        (["neo4j", "status"], {}, "neo4j"),
        (["ask", "--vectors", "pgvector", "anything"],
         {"DATABASE_URL": "postgresql://u:p@127.0.0.1:1/db"}, "postgres"),
        (["memory", "list", "--memory", "postgres"],
         {"DATABASE_URL": "postgresql://u:p@127.0.0.1:1/db"}, "postgres"),
    ],
    ids=["graph-neo4j", "neo4j-server", "ask-pgvector", "memory-postgres"],
)  # fmt: skip
def test_a_missing_extra_is_named(home: Path, args: list[str], env: dict[str, str], extra: str
                                  ) -> None:
    done = run_without_extras(*args, "--home", str(home), env=env, cwd=home)
    said = " ".join((done.stdout + done.stderr).split())  # the console wraps long lines
    assert done.returncode == 2, said
    assert f"pip install 'apiatlas[{extra}]'" in said
    assert "Traceback" not in said


def test_require_names_the_extra_of_a_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an uninstalled package looks like
    with pytest.raises(MissingExtraError, match=r"apiatlas\[mcp\]"):
        require("mcp", purpose="apiatlas mcp")
    assert require("json").dumps([1]) == "[1]"
