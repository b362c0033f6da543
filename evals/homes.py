"""Persistent, ingested homes for datasets, reused across training and calibration runs.

``apiatlas eval`` ingests every dataset into a fresh home; training reads the same dev datasets
many times, so it keeps one home per dataset under a root and re-ingests into it. An ingest of
unchanged sources changes nothing and embeds nothing, so a second run costs seconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from langchain_core.embeddings import Embeddings

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.evals.dataset import Dataset

_MARKER = ".apiatlas-dataset-home"


@contextmanager
def dataset_atlas(dataset: Dataset, root: Path, embeddings: Embeddings) -> Iterator[ApiAtlas]:
    """The atlas of ``dataset`` in ``root/<name>``, its sources ingested (a no-op when unchanged).

    Raises:
        UsageError: ``root/<name>`` exists but was not made here.
    """
    home = root / dataset.name
    if home.exists() and not (home / _MARKER).exists():
        raise UsageError(f"{home} exists and was not made for a dataset: choose another root")
    home.mkdir(parents=True, exist_ok=True)
    (home / _MARKER).write_text("a dataset home written by apiatlas training\n")
    with ApiAtlas(Settings(home=home, project=dataset.name), embeddings=embeddings) as atlas:
        atlas.ingest(
            openapi=dataset.sources.openapi, docs=dataset.sources.docs, project=dataset.name
        )
        yield atlas


def dataset_files(folder: Path, names: Sequence[str] = ()) -> list[Path]:
    """The dataset files of ``folder`` (``names`` picks some by stem), sorted by name."""
    files = sorted(folder.glob("*.yaml"))
    if names:
        files = [f for f in files if f.stem in names]
    return files
