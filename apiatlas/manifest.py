"""What the last ingest of a project read, so that ingesting the same unchanged files again can
return at once instead of parsing, diffing and hashing everything.

The record holds a key for the ingest's inputs and settings (locations, API name, backends,
embedding model, card size) and for the code that stores them, the SHA-256 of every local file it read (each spec's root and
``$ref``'d documents, and every file under a location that is a directory), the project's graph
revision once the ingest was done, and its report. An ingest may skip only when the key, every
file's hash, every directory's listing and the graph revision all match; anything else (a URL or
a crawl among the inputs, another ingest into the project since, a file that cannot be read)
means a full ingest, which then leaves a new record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from apiatlas.files import sha256_of, write_atomic

VERSION = 1


class IngestRecord(BaseModel):
    """The last complete ingest of one set of inputs into a project."""

    version: int = VERSION
    key: str
    listing: list[str] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict)
    revision: str
    report: dict[str, Any] = Field(default_factory=dict)


def inputs_key(
    openapi: Sequence[str | Path], docs: Sequence[str | Path], settings: Iterable[object]
) -> str | None:
    """A key for an ingest's inputs and the settings that shape what it stores, or ``None``
    when an input is not a local path (a URL's content cannot be checked without fetching)."""
    groups: list[list[str]] = []
    for locations in (openapi, docs):
        if any("://" in str(location) for location in locations):
            return None
        groups.append([str(Path(location).expanduser().resolve()) for location in locations])
    text = json.dumps([groups, [str(s) for s in settings], code_fingerprint()])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def code_fingerprint() -> str:
    """SHA-256 of the code that shapes what an ingest stores (the facade, the loaders, the graph
    builders, the vector indexing): a record made by other code never vouches for the stores."""
    import apiatlas
    import apiatlas.graph
    import apiatlas.loaders
    import apiatlas.rag

    digest = hashlib.sha256()
    top = Path(apiatlas.__file__ or "").parent
    files = [(top, path) for path in sorted(top.glob("*.py"))]  # the facade: atlas.py
    for package in (apiatlas.loaders, apiatlas.graph, apiatlas.rag):
        root = Path(package.__file__ or "").parent
        files += [(root, path) for path in sorted(root.rglob("*.py"))]
    for root, path in files:
        digest.update(f"{root.name}/{path.relative_to(root).as_posix()}".encode("utf-8"))
        digest.update(path.read_bytes())
    return digest.hexdigest()


def listing(locations: Sequence[str | Path]) -> list[str]:
    """Every file under the directory locations (hidden folders skipped), in a stable order;
    a file added or removed there changes what an ingest reads."""
    found: list[str] = []
    for location in locations:
        root = Path(location).expanduser().resolve()
        if root.is_dir():
            found.extend(
                str(p) for p in sorted(root.rglob("*"))
                if p.is_file() and not any(x.startswith(".") for x in p.relative_to(root).parts)
            )
    return found


def file_hashes(paths: Iterable[str]) -> dict[str, str] | None:
    """SHA-256 of each file, or ``None`` when one cannot be read or is no longer a regular
    file (a FIFO or a device put in its place is never opened)."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            if not Path(path).is_file():
                return None
            out[path] = sha256_of(Path(path))
        except OSError:
            return None
    return out


class Manifest:
    """The ingest records of a home, one file per project under ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, project: str) -> Path:
        return self.folder / f"{hashlib.sha256(project.encode('utf-8')).hexdigest()[:16]}.json"

    def unchanged(self, project: str, key: str, locations: Sequence[str | Path],
                  revision: str) -> IngestRecord | None:
        """The record of the last ingest when these inputs, files and graph are all as it
        left them; ``None`` when anything differs or there is no readable record."""
        try:
            record = IngestRecord.model_validate_json(self._path(project).read_bytes())
        except (OSError, ValidationError, ValueError):
            return None
        if record.version != VERSION or record.key != key or record.revision != revision:
            return None
        if not revision or listing(locations) != record.listing:
            return None
        if file_hashes(record.files) != record.files:
            return None
        return record

    def save(self, project: str, record: IngestRecord) -> None:
        """Keep ``record`` as the project's last complete ingest."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self._path(project), record.model_dump_json().encode("utf-8"))

    def forget(self, project: str) -> None:
        """Drop the project's record: the next ingest does all its work."""
        self._path(project).unlink(missing_ok=True)
