"""Writing files that other processes read: whole or not at all, one version at a time."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from apiatlas.errors import LoaderError

T = TypeVar("T")
_READ_BLOCK = 1 << 20


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


def read_bounded(path: Path, limit: int, error: type[LoaderError] = LoaderError) -> bytes:
    """The bytes of the regular file ``path``, read in blocks and never more than ``limit``.

    Every local input (spec documents, the files they reference, documentation pages) is read
    here. A FIFO, a device or a socket is refused before it is opened (opening a FIFO waits for a
    writer; ``/dev/zero`` never ends), and the size is checked while reading, not from the file's
    metadata, which a growing file or a ``/proc`` file does not tell truthfully.

    Args:
        path: The file.
        limit: The most bytes accepted.
        error: The error type raised (``SpecError`` for specs), naming ``path``.

    Raises:
        LoaderError: ``error``, when the file is missing, unreadable, not a regular file or
            larger than ``limit``.
    """
    source = str(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise error(
                f"not a regular file (a {_kind(mode)}): pass a file, a directory or an http(s) "
                "URL.",
                source=source,
            )
        chunks: list[bytes] = []
        size = 0
        with open(path, "rb") as f:
            while block := f.read(min(_READ_BLOCK, limit + 1 - size)):
                chunks.append(block)
                size += len(block)
                if size > limit:
                    raise error(
                        f"the file is over the {limit:,}-byte limit (reading stopped there): it is "
                        "probably not what you meant to load; split or trim it.",
                        source=source,
                    )
    except FileNotFoundError as e:
        raise error("file not found: check the path.", source=source) from e
    except OSError as e:
        message = f"cannot read the file ({e.strerror}): check permissions."
        raise error(message, source=source) from e
    return b"".join(chunks)


def _kind(mode: int) -> str:
    """What a file that is not regular is, in words."""
    for test, name in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO or pipe"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"
