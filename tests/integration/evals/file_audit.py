"""Which files Python opens while a block runs, and which of them belong to a test set: a fit
may never read one.

One audit hook, registered on import (hooks cannot be removed); it records only inside
:func:`opened_files`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files

_OPENED: list[str] = []
_AUDITING: list[bool] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _AUDITING and event == "open" and isinstance(args[0], (str, Path)):
        _OPENED.append(str(Path(str(args[0])).resolve()))


sys.addaudithook(_audit)


@contextmanager
def opened_files() -> Iterator[list[str]]:
    """The resolved paths opened inside the block (filled in as it runs)."""
    _OPENED.clear()
    _AUDITING.append(True)
    try:
        yield _OPENED
    finally:
        _AUDITING.clear()


def reads_of_test_sets(opened: Iterable[str], test_folder: Path) -> list[str]:
    """The ``opened`` paths that are a dataset of ``test_folder`` or lie beside one of its
    sources (the folder of each spec and guide it names)."""
    files = dataset_files(test_folder)
    datasets = {str(f.resolve()) for f in files}
    roots = {str(Path(s).resolve().parent) for f in files
             for s in [*load_dataset(f).sources.openapi, *load_dataset(f).sources.docs]}
    assert datasets and roots, f"no test datasets with sources in {test_folder}"
    return sorted(p for p in opened if p in datasets or any(p.startswith(r) for r in roots))
