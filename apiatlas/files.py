"""Writing files that other processes read: whole or not at all, one version at a time."""

from __future__ import annotations

import os
from pathlib import Path


def partial_path(path: Path) -> Path:
    """Where to write ``path`` before moving it into place (unique to this process)."""
    return path.with_name(f"{path.name}.{os.getpid()}.part")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_path(path)
    partial.write_bytes(data)
    partial.replace(path)


def keep_only(path: Path, pattern: str) -> None:
    """Remove the files of ``path``'s folder matching ``pattern`` (its older versions), but it."""
    for other in path.parent.glob(pattern):
        if other != path:
            other.unlink(missing_ok=True)
