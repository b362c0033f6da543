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

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.loaders.limits import MAX_DOCUMENT_BYTES
from apiatlas.sample import write_sample_api
from apiatlas.tools import search_docs
from tests.integration.app.test_cli_memory import PROVIDER_SECRETS

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


def _alias_bomb(width: int = 9, levels: int = 8) -> str:
    """YAML of a few hundred bytes that stands for ``width ** (levels + 1)`` values."""
    lines = [f"a0: &a0 [{', '.join('x' * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join([*lines, f"title: *a{levels}"])


@pytest.mark.parametrize(
    ("front_matter", "said"),
    [(_alias_bomb(), "stands for more than"),
     ("title: " + "[" * 1000 + "]" * 1000, "nested more than"),
     ("title: " + "[" * 30_000 + "]" * 30_000, "nested more than")],
    ids=["alias-bomb", "deep", "deeper-than-the-parser"],
)
def test_a_guide_whose_front_matter_is_hostile_exits_2_in_bounded_memory(
    home: Path, tmp_path: Path, front_matter: str, said: str
) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text(f"---\n{front_matter}\n---\n# Guide\n\nText.\n", encoding="utf-8")
    run = _cli(home, "ingest", "--docs", str(guide))
    assert run.returncode == 2, run.said
    assert str(guide) in run.said and "front matter" in run.said and said in run.said
    assert "Traceback" not in run.said
    assert run.peak_kb < MEMORY_BOUND_KB


def test_a_link_out_of_the_guides_folder_is_left_out_and_said(home: Path, tmp_path: Path) -> None:
    guides = tmp_path / "guides"
    guides.mkdir()
    (guides / "start.md").write_text("# Start\n\nCreate a location first.\n", encoding="utf-8")
    outside = tmp_path / "private.md"
    outside.write_text("# Private\n\nroot:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    (guides / "passwd.md").symlink_to(outside)
    run = _cli(home, "ingest", "--docs", str(guides))
    assert run.returncode == 0, run.said
    assert f"left out: a link to {outside}" in run.said
    with ApiAtlas(Settings(home=home, project="p")) as atlas:
        passages = search_docs(atlas, "root bash private", k=5)  # the tools' and MCP's search
    assert passages and all("start.md" in p.uri and "root:x" not in p.text for p in passages)


def test_a_spec_ref_out_of_its_folder_exits_2_unless_allowed(home: Path, tmp_path: Path) -> None:
    spec = write_sample_api(tmp_path / "api") / "openapi.yaml"
    (tmp_path / "api" / "schemas.yaml").rename(tmp_path / "schemas.yaml")
    spec.write_text(spec.read_text().replace("schemas.yaml#", "../schemas.yaml#"), encoding="utf-8")
    run = _cli(home, "ingest", "--openapi", str(spec))
    assert run.returncode == 2, run.said
    assert "leads outside the folder of the spec" in run.said and "--read-outside" in run.said
    run = _cli(home, "ingest", "--openapi", str(spec), "--read-outside")
    assert run.returncode == 0, run.said


def test_provider_secrets_in_a_guide_are_scrubbed_before_it_is_stored(
    home: Path, tmp_path: Path
) -> None:
    guide = tmp_path / "deploy.md"
    lines = [f"- The deploy job uses {secret} for the nightly sync."
             for secret in PROVIDER_SECRETS.values()]
    guide.write_text("# Deploying\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    run = _cli(home, "ingest", "--docs", str(guide))
    assert run.returncode == 0, run.said
    with ApiAtlas(Settings(home=home, project="p")) as atlas:
        passages = search_docs(atlas, "deploy job nightly sync", k=5)
    text = " ".join(p.text for p in passages)
    assert "nightly sync" in text
    for kind, secret in PROVIDER_SECRETS.items():
        assert secret.rsplit(" ", 1)[-1].removeprefix("AccountKey=") not in text, kind


def test_the_project_still_answers_after_the_refusals(home: Path) -> None:
    run = _cli(home, "graph", "stats", "--json")
    assert run.returncode == 0, run.said
    assert json.loads(run.said)["nodes"]["Endpoint"] > 0
