"""Writing files that other processes read: whole or not at all, one version at a time."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def partial_path(path: Path) -> Path:
    """Where to write ``path`` before moving it into place (unique to this process)."""
    return path.with_name(f"{path.name}.{os.getpid()}.part")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_path(path)
    partial.write_bytes(data)
    partial.replace(path)


def sha256_of(*paths: Path) -> str:
    """sha256 of the files' bytes, one after another, read in blocks."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def keep_only(path: Path, pattern: str) -> None:
    """Remove the files of ``path``'s folder matching ``pattern`` (its older versions), but it."""
    for other in path.parent.glob(pattern):
        if other != path:
            other.unlink(missing_ok=True)


def revision_file(
    folder: Path | None, kind: str, project: str, revision: str, model: str
) -> Path | None:
    """``<folder>/<kind>-<owner>-<version>.npz``: one file per project, graph revision and
    embedding model (whose vectors another model must not read). ``None`` without a folder, or
    before the project's first revision (nothing stable to key a file on)."""
    if folder is None or not revision:
        return None
    owner = hashlib.sha256(project.encode("utf-8")).hexdigest()[:16]
    version = hashlib.sha256(f"{revision}|{model}".encode()).hexdigest()[:16]
    return folder / f"{kind}-{owner}-{version}.npz"


def load_or_build(
    path: Path | None,
    load: Callable[[Path], T],
    build: Callable[[], T],
    save: Callable[[T, Path], None],
    *,
    fresh: bool = False,
) -> T:
    """What ``path`` holds, else (or when ``fresh``) a new build, saved there in place of the
    project's older versions (see :func:`revision_file`)."""
    if path is not None and path.exists() and not fresh:
        try:
            return load(path)
        except (OSError, ValueError, KeyError):
            pass  # unreadable (a crash mid-write, another version): build it again
    found = build()
    if path is not None:
        save(found, path)
        keep_only(path, "-".join(path.name.split("-")[:2]) + "-*.npz")
    return found
