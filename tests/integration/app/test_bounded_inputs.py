"""`apiatlas ingest` on inputs that never end or never start: a usage error (exit 2) that names
the file, within a bounded time and memory, and the project's earlier data still answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from apiatlas.loaders.limits import MAX_DOCUMENT_BYTES
from apiatlas.sample import write_sample_api

MEMORY_BOUND_KB = 1_500_000
"""What a refused ingest may peak at (a CLI ingest of the sample peaks at a few hundred MB);
reading /dev/zero whole ran the machine out of memory."""


@dataclass(frozen=True)
class Run:
    returncode: int
    said: str
    """stdout and stderr, whitespace folded (rich wraps long lines)."""
    peak_kb: int
    """The process's own largest resident set (Linux reports kilobytes)."""


def _cli(home: Path, *args: str) -> Run:
    out = home.parent / "cli-output.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "apiatlas.cli", *args, "--home", str(home), "--project", "p"],
            stdout=sink, stderr=subprocess.STDOUT,
        )
        timer = threading.Timer(120, proc.kill)  # a read that never ends fails the test
        timer.start()
        try:
            # wait4, not Popen.wait: it reports this child's own peak memory.
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Run(proc.returncode, " ".join(out.read_text(encoding="utf-8").split()),
               usage.ru_maxrss)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bounded")
    spec = write_sample_api(root / "sample")
    run = _cli(root / "home", "ingest", "--openapi", str(spec))
    assert run.returncode == 0, run.said
    return root / "home"


@pytest.mark.parametrize("kind", ["device", "fifo", "fifo-docs"])
def test_a_device_or_fifo_exits_2_naming_it_in_bounded_memory(
    home: Path, tmp_path: Path, kind: str
) -> None:
    if kind == "device":
        target, flag = Path("/dev/zero"), "--openapi"
    else:
        target = tmp_path / ("guide.md" if kind == "fifo-docs" else "spec.yaml")
        os.mkfifo(target)  # no writer: reading it would wait forever
        flag = "--docs" if kind == "fifo-docs" else "--openapi"
    run = _cli(home, "ingest", flag, str(target))
    assert run.returncode == 2, run.said
    assert str(target) in run.said and "not a regular file" in run.said
    assert "Traceback" not in run.said
    assert run.peak_kb < MEMORY_BOUND_KB


def test_a_file_over_the_limit_stops_the_read_at_the_limit(home: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:  # sparse: no disk used, every byte reads as zero
        f.truncate(MAX_DOCUMENT_BYTES * 4)
    run = _cli(home, "ingest", "--openapi", str(big))
    assert run.returncode == 2, run.said
    assert str(big) in run.said and f"over the {MAX_DOCUMENT_BYTES:,}-byte limit" in run.said
    assert run.peak_kb < MEMORY_BOUND_KB


def test_the_project_still_answers_after_the_refusals(home: Path) -> None:
    run = _cli(home, "graph", "stats", "--json")
    assert run.returncode == 0, run.said
    assert json.loads(run.said)["nodes"]["Endpoint"] > 0
