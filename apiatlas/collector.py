"""Python's cyclic garbage collector paused while an ingest builds its objects.

An ingest builds a few hundred thousand small dicts, lists and models (the parsed spec, its
flattened schemas, the graph's nodes and edges) that all live until it ends. Every 700 new
objects the collector runs, and every so often it walks all of them again, finding nothing to
free: on Square (316 endpoints, 22k graph nodes) it cost 2-5 s of a 33-38 s first ingest on the
2-core machine, the same peak memory either way (``evals/README``, "Ingest and the garbage
collector"). Reference counting still frees everything that is not in a cycle.

:func:`collector_paused` is counted like :func:`apiatlas.rag.retrieval.threads.one_blas_thread`:
overlapping ingests in several threads pause it once and give it back once, in the state the
application left it (an application that runs with the collector off keeps it off).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with the cyclic garbage collector off, then restore it as it was."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
