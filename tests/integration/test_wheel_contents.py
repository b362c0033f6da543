"""The wheel ships the library only: no benchmark, experiment or developer tool, and no
setuptools warning about a package left out of its configuration.

``pip wheel`` builds offline with the venv's own setuptools (``--no-build-isolation``), from a
copy of the source tree (the files git tracks, and the untracked ones it does not ignore): an
in-place build would write ``build/`` and ``*.egg-info`` into the checkout, and a stale
``build/lib`` from an earlier commit would end up in the wheel. A few seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pytest

REPO = Path(__file__).resolve().parents[2]
CORE = (
    "apiatlas/cli.py",
    "apiatlas/rag/agent/graph.py",
    "apiatlas/evals/runner.py",
    "apiatlas/models/encoder/model.onnx",
    "apiatlas/rag/ranking/ranker.json",
    "apiatlas/rag/review/relevance.json",
)
LEFT_OUT_WARNINGS = ("absent from the `packages` configuration", "would be ignored")
"""What setuptools says about a folder of the sources that looks like a package but is not
listed (``_IncludePackageDataAbuse``)."""
COPY_IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", ".apiatlas", "__pycache__", ".*_cache",
    "homes", ".eval-out", ".devcarry",
)


def _copy_sources(target: Path) -> None:
    """The files a fresh clone would have, plus untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=False,
    )  # fmt: skip
    if listed.returncode != 0:  # not a git checkout: copy the tree without what is built
        shutil.copytree(REPO, target, ignore=COPY_IGNORED)
        return
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():  # listed but deleted in the working tree: skipped
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], str]:
    """The wheel's file names and the build's stderr (``-v``: setuptools' own output)."""
    root = tmp_path_factory.mktemp("wheel")
    source, out = root / "src", root / "out"
    _copy_sources(source)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "-v", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out)],
        cwd=source, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    wheels = sorted(out.glob("apiatlas-*.whl"))
    assert done.returncode == 0 and len(wheels) == 1, (
        f"pip wheel failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    )
    with zipfile.ZipFile(wheels[0]) as wheel:
        return wheel.namelist(), done.stderr


def test_the_wheel_holds_no_benchmark_experiment_or_tool(built: tuple[list[str], str]) -> None:
    names, stderr = built
    shipped = [PurePosixPath(n) for n in names]
    unwanted = [
        str(p) for p in shipped
        if str(p).startswith("apiatlas/evals/bench/")
        or "notebooks_strip" in p.name
        or {"experiments", "tools"} & set(p.parts[:-1])  # folders only: apiatlas/tools.py stays
    ]  # fmt: skip
    assert not unwanted, f"shipped in the wheel: {unwanted}\n--- build stderr ---\n{stderr}"
    missing = [c for c in CORE if c not in names]
    assert not missing, f"missing from the wheel: {missing}\n--- build stderr ---\n{stderr}"


def test_the_build_warns_of_no_package_left_out(built: tuple[list[str], str]) -> None:
    _, stderr = built
    warned = [
        line for line in stderr.splitlines()
        if any(w in line for w in LEFT_OUT_WARNINGS)
    ]  # fmt: skip
    assert not warned, "setuptools warns of a package left out:\n" + "\n".join(warned) + (
        f"\n--- build stderr ---\n{stderr}"
    )
