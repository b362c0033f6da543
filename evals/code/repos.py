"""The real code the code-site eval reads: published packages at pinned versions, never in git.

``python -m apiatlas.evals.code.repos fetch`` downloads each package at its pinned version,
checks its digest and unpacks it under ``.eval-out/code-repos/<name>``; ``sample`` prints the
files the testers label. Two SDKs a language family, one of each API on each side of the split,
so a figure on the test side comes from code nobody here read while writing the extractor.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from apiatlas.errors import UsageError

DEFAULT_ROOT = Path(".eval-out/code-repos")
SAMPLE_SEED = 55
SAMPLE_FILES = 12
MIN_SAMPLE_LINES = 50
_CODE_SUFFIXES = (".py", ".go", ".ts", ".js", ".java")


@dataclass(frozen=True)
class CodeRepo:
    """One package: where it comes from, its digest, the folder that is ingested and its API."""

    name: str
    split: str
    language: str
    registry: str  # pypi | npm | go
    package: str
    version: str
    digest: str  # sha256 of the downloaded archive; Go: the module's h1: sum
    licence: str
    root: str  # the folder ingested, relative to the unpacked package
    spec: str  # the API's spec, relative to ../shared/data


REPOS: tuple[CodeRepo, ...] = (
    CodeRepo(
        "openai-python", "dev", "python", "pypi", "openai", "3.51.0",
        "802b7e8c6ff8cf4d59a2a163126c10ce472adf0409ac41fdaadd47c9b4ed091a",
        "Apache-2.0", "openai/resources", "openai/spec/openapi.yaml",
    ),
    CodeRepo(
        "slack-go", "dev", "go", "go", "github.com/slack-go/slack", "v0.36.0",
        "h1:YZTAijN2MWhKgpH22kxcygiRK+V9N+UW8yXlPIMpoOo=",
        "BSD-2-Clause", ".", "slack/spec/web-api/slack_web_openapi_v2.json",
    ),
    CodeRepo(
        "openai-node", "test", "typescript", "npm", "openai", "7.55.0",
        "0dfe04d620754817721c04511c6425731f1bf132699e4fe9377ca966a14a6971",
        "Apache-2.0", "src/resources", "openai/spec/openapi.yaml",
    ),
    CodeRepo(
        "slack-python", "test", "python", "pypi", "slack-sdk", "3.47.0",
        "8cfab3224d149962ef4313c1430d9ff65b8c3baf09f25988a920858ffa90aaa9",
        "MIT", "slack_sdk", "slack/spec/web-api/slack_web_openapi_v2.json",
    ),
)


def repo_named(name: str) -> CodeRepo:
    """The pinned repo called ``name``.

    Raises:
        UsageError: no such repo; the message lists the ones there are.
    """
    for repo in REPOS:
        if repo.name == name:
            return repo
    raise UsageError(f"no code repo {name!r}; there are: {', '.join(r.name for r in REPOS)}")


def source_root(repo: CodeRepo, root: Path = DEFAULT_ROOT) -> Path:
    """The folder of ``repo`` that is ingested.

    Raises:
        UsageError: it was not fetched; the message gives the command that fetches it.
    """
    folder = root / repo.name / repo.root
    if not folder.is_dir():
        raise UsageError(
            f"{folder} is missing: run `python -m apiatlas.evals.code.repos fetch` first"
        )
    return folder.resolve()


def fetch(repo: CodeRepo, root: Path = DEFAULT_ROOT) -> Path:
    """Download ``repo`` at its pinned version, check its digest and unpack it (once).

    Raises:
        UsageError: the download failed or its digest is not the pinned one.
    """
    target = root / repo.name
    stamp = target / ".fetched"
    if stamp.exists() and stamp.read_text().strip() == repo.digest:
        return target
    shutil.rmtree(target, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if repo.registry == "go":
            _fetch_go(repo, work, target)
        else:
            archive = _download(repo, work)
            actual = hashlib.sha256(archive.read_bytes()).hexdigest()
            if actual != repo.digest:
                raise UsageError(
                    f"{archive.name}: sha256 {actual} is not the pinned {repo.digest}; "
                    "the registry served another file"
                )
            _unpack(archive, target)
    (target / ".fetched").write_text(repo.digest + "\n")
    return target


def _run(command: list[str], **kwargs: object) -> str:
    try:
        done = subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise UsageError(f"`{' '.join(command)}` failed: {detail.strip()[-400:]}") from exc
    return str(done.stdout)


def _download(repo: CodeRepo, work: Path) -> Path:
    if repo.registry == "pypi":
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
              f"{repo.package}=={repo.version}", "-d", str(work)])
        return next(work.glob("*.whl"))
    _run(["npm", "pack", "--silent", f"{repo.package}@{repo.version}"], cwd=work)
    return next(work.glob("*.tgz"))


def _unpack(archive: Path, target: Path) -> None:
    target.mkdir(parents=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as whl:
            whl.extractall(target)
        return
    with tarfile.open(archive) as tgz:
        tgz.extractall(target, filter="data")
    inner = target / "package"  # npm packs everything under package/
    for child in inner.iterdir():
        child.rename(target / child.name)
    inner.rmdir()


def _fetch_go(repo: CodeRepo, work: Path, target: Path) -> None:
    env = {**os.environ, "GOPATH": str(work / "gopath"), "GOFLAGS": "-modcacherw"}
    info = json.loads(_run(["go", "mod", "download", "-json", f"{repo.package}@{repo.version}"], env=env))
    if info.get("Sum") != repo.digest:
        raise UsageError(
            f"{repo.package}@{repo.version}: sum {info.get('Sum')} is not the pinned {repo.digest}"
        )
    shutil.copytree(info["Dir"], target)


def _is_test(path: Path) -> bool:
    name = path.name
    return name.endswith(("_test.go", ".test.ts", ".test.js")) or name.startswith("test_")


def code_files(folder: Path) -> list[Path]:
    """The source files under ``folder`` that are sampled, sorted: no tests, no declarations."""
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and p.suffix in _CODE_SUFFIXES
        and not p.name.endswith(".d.ts") and not _is_test(p)
    )


def sample(repo: CodeRepo, folder: Path) -> list[str]:
    """The files the testers label: the largest file and a seeded draw among the rest.

    The largest file of an SDK is usually its client, where most calls are; the draw is over files
    of at least ``MIN_SAMPLE_LINES`` lines (short ones are mostly re-exports).
    """
    sized = [(len(p.read_text(errors="replace").splitlines()), p) for p in code_files(folder)]
    largest = max(sized)[1]
    rest = sorted(str(p.relative_to(folder)) for n, p in sized if n >= MIN_SAMPLE_LINES and p != largest)
    picked = random.Random(f"{SAMPLE_SEED}:{repo.name}").sample(rest, min(SAMPLE_FILES - 1, len(rest)))
    return sorted([str(largest.relative_to(folder)), *picked])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apiatlas.evals.code.repos")
    parser.add_argument("action", choices=("fetch", "sample"))
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    for repo in REPOS:
        if args.action == "fetch":
            print(f"{repo.name}: {fetch(repo, args.root)}")
        else:
            print(json.dumps({repo.name: sample(repo, source_root(repo, args.root))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
