"""Tester-labelled code sites: the files a tester read in one pinned repo, and every call in them.

A label file (``evals/datasets/code/<split>/<repo>.yaml``) names its repo, the files labelled
(relative to the repo's ingested folder) and, in those files, each site: ``file``, ``line`` (where
the call expression begins), ``endpoint`` (``METHOD /path`` in the spec, ``null`` for a call to the
API that its spec lacks, ``dynamic`` when the code does not say), ``style`` (``http`` when the
call names the path or API method, ``sdk`` when an SDK method stands for it); and decoys, places
that look like calls but are not.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from apiatlas.errors import UsageError

LABELS = Path(__file__).resolve().parent.parent / "datasets" / "code"
_REPOSITORY = LABELS.parents[2]
DYNAMIC = "dynamic"


class LabelledSite(BaseModel):
    file: str
    line: int
    endpoint: str | None
    style: Literal["http", "sdk"]
    method: str | None = None
    api: str | None = None
    code: str = ""
    verb_mismatch: bool = False

    @property
    def spec_endpoint(self) -> str | None:
        """The spec's endpoint, or ``None`` for a call the spec lacks or the code leaves open."""
        return None if self.endpoint in (None, DYNAMIC) else self.endpoint


class Decoy(BaseModel):
    file: str
    line: int
    why: str = ""


class RepoLabels(BaseModel):
    repo: str
    files: list[str]
    sites: list[LabelledSite] = Field(default_factory=list)
    decoys: list[Decoy] = Field(default_factory=list)
    split: str = ""


def load_labels(path: Path) -> RepoLabels:
    """One label file, its split from its folder.

    Raises:
        UsageError: not a label file; the message names it and what is wrong.
    """
    try:
        raw = yaml.safe_load(path.read_text())
        labels = RepoLabels.model_validate(raw)
    except (OSError, yaml.YAMLError, ValidationError) as error:
        raise UsageError(f"{path}: not a code label file ({error})") from error
    outside = sorted({s.file for s in labels.sites} - set(labels.files))
    if outside:
        raise UsageError(f"{path}: sites in files not listed under files: {', '.join(outside)}")
    return labels.model_copy(update={"split": path.parent.name})


def is_label_file(path: Path) -> bool:
    """Whether ``path`` is a code label file (it lies under ``datasets/code``)."""
    return path.resolve().is_relative_to(LABELS)


def label_files(splits: tuple[str, ...] = ("dev", "test")) -> list[Path]:
    """The label files of ``splits``, by split then name."""
    return [p for split in splits for p in sorted((LABELS / split).glob("*.yaml"))]


def shared_data_root() -> Path:
    """``../shared/data`` beside the repository (``$APIATLAS_SHARED_DATA`` overrides it).

    Raises:
        UsageError: it is not there.
    """
    root = Path(os.environ.get("APIATLAS_SHARED_DATA", _REPOSITORY.parent / "shared" / "data"))
    if not root.is_dir():
        raise UsageError(f"{root} is missing: the code eval reads the specs from ../shared/data")
    return root.resolve()
