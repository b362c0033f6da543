"""Which files Python opens while a block runs: a fit may never read a test set.

One audit hook, registered on import (hooks cannot be removed); it records only inside
:func:`opened_files`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
