"""A process-wide setting held while any of several overlapping bodies runs.

Some settings belong to the whole process (the BLAS libraries' thread count, Python's cyclic
garbage collector), while the work that wants them changed may overlap in several threads. The
first body to enter changes the setting, the last one to leave restores it, whichever threads
they run in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class ProcessWide:
    """Counts the bodies holding a process-wide setting.

    Args:
        change: Applies the setting and returns how to restore what was there before.
    """

    def __init__(self, change: Callable[[], Callable[[], None]]) -> None:
        self._change = change
        self._lock = threading.Lock()
        self._depth = 0
        self._restore: Callable[[], None] = _nothing

    @contextmanager
    def held(self) -> Iterator[None]:
        """Run the body with the setting applied."""
        with self._lock:
            if self._depth == 0:
                self._restore = self._change()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    restore, self._restore = self._restore, _nothing
                    restore()


def _nothing() -> None:
    """Restores nothing."""
