"""A question's numeric work on one BLAS thread.

Answering a question multiplies a few matrices of endpoint and document vectors (up to some
thousands of rows of 384) by the question's vector, between stretches of Python. OpenBLAS splits
each product over every core, and its threads then spin, busy-waiting for more work, on the core
the rest of the answer could use. On this 2-core machine, cold `ask` on Adobe Commerce took a
median of 16-17 ms with one BLAS thread against 19-20 ms without, and 20-22 ms against 40-41 ms
beside a busy process (CHANGELOG.md, 2026-11-26, "A question's threads").

:func:`one_blas_thread` limits the BLAS libraries numpy loaded to one thread while any question
is being answered, and gives back the previous limits when the last one ends. The limit is
process-wide (BLAS libraries keep one setting), so it is counted: overlapping questions in
several threads set it once and restore it once. An application that manages BLAS threads
itself sets :data:`ENABLED` to ``False``, and questions then leave them alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from apiatlas.process_wide import ProcessWide

ENABLED = True
"""Whether questions limit BLAS to one thread (``make bench`` measures both)."""


def _one_thread() -> Callable[[], None]:
    limiter = _uncontested(lambda: _blas().limit(limits=1, user_api="blas"))
    return lambda: _uncontested(limiter.restore_original_limits)


_ONE_THREAD = ProcessWide(_one_thread)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with every loaded BLAS library limited to one thread (when
    :data:`ENABLED`)."""
    if not ENABLED:
        yield
        return
    with _ONE_THREAD.held():
        yield


def _uncontested(change: Callable[[], Any]) -> Any:
    """``change`` the limits from whichever thread runs this.

    threadpoolctl lets only one thread, the first to set OpenBLAS's limit, change it until that
    thread clears its claim; a question may begin in one thread and the last one end in
    another. The claim is cleared before the change (so this thread's change takes effect) and
    after it (so no thread keeps it, and the application's own limits still work).
    """
    from threadpoolctl import OpenBLASController

    OpenBLASController.clear_controlling_thread(force=True)
    try:
        return change()
    finally:
        OpenBLASController.clear_controlling_thread(force=True)


def _blas() -> Any:
    """A thread-pool controller of the libraries loaded now, made each time the limit is set
    (about 0.3 ms): a library the application loaded after the first question (scipy's own
    OpenBLAS, say) is limited too. A controller made once kept only the first ones, and a
    question then ran on every core of the later ones."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
