"""Where ``apiatlas serve`` answers its questions: in threads of its own process, or, with
``--workers N``, in a pool of N processes behind it.

Both give the app the same two coroutines, :meth:`Answerer.ask` and :meth:`Answerer.stats`,
returning the JSON of ``apiatlas ask --json`` and ``apiatlas graph stats --json``, encoded
where the answer was made (pydantic's encoder: the server's own process only sends it).

- :class:`InThreads` (one process) runs each question in one of the app's threads, beside the
  others where their work releases the GIL (waiting on Neo4j or PostgreSQL, the model, numpy,
  SQLite).
- :class:`InProcesses` (``--workers N``) keeps N processes, each with its own warm atlas, and
  hands every question to the next free one. The server's process takes every connection itself.
  uvicorn's own workers would share the listening socket instead, and the first to wake takes
  every connection waiting: in ``make bench`` four keep-alive clients landed 4 to 0 or 3 to 1 on
  two workers in most rounds, so one core answered while the other idled. Handed out question by
  question, the load is shared whatever the connections.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from datetime import datetime
from multiprocessing.util import Finalize
from typing import Any, Protocol

import anyio

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import ApiAtlasError, UnknownName, UsageError

QUESTION_THREADS = 8
"""Questions one process answers at once in threads; more wait for a thread (within the time
limit)."""
WARM_UP_QUESTION = "warm up"
STARTUP_TIMEOUT_S = 300.0
"""Seconds a worker process may take to open its project and answer the warm-up question."""
STOP_TIMEOUT_S = 10.0
"""Seconds the worker processes get to finish and close their stores when the server stops."""

Json = bytes
"""A JSON document, UTF-8."""


class Answerer(Protocol):
    """Answers a server's questions (the app awaits these, within its time limit)."""

    async def ask(self, question: str, *, project: str, api: str | None, k: int | None,
                  agent_type: str | None, at: datetime | None,
                  min_confidence: float | None = None) -> Json:
        """The JSON of ``apiatlas ask --json``."""
        ...

    async def stats(self, project: str) -> Json:
        """The JSON of ``apiatlas graph stats --json`` for ``project``."""
        ...


def warm(atlas: ApiAtlas, project: str) -> None:
    """Load the model, compile the agent and build the project's caches with one question,
    in this thread, so that no request pays for them and concurrent first questions find them
    built. A project not ingested yet has nothing to warm: its requests say so, each with the
    projects that exist, until an ingest makes it."""
    try:
        atlas.ask(WARM_UP_QUESTION, project=project)
    except UnknownName:
        atlas.embeddings.embed_query(WARM_UP_QUESTION)


class InThreads:
    """Questions answered by ``atlas`` in threads of this process (opened, warmed and closed by
    the caller)."""

    def __init__(self, atlas: ApiAtlas) -> None:
        self._atlas = atlas
        self._limiter: anyio.CapacityLimiter | None = None

    async def ask(self, question: str, **context: Any) -> Json:
        return await self._run(
            lambda: self._atlas.ask(question, **context).model_dump_json().encode()
        )

    async def stats(self, project: str) -> Json:
        return await self._run(lambda: self._atlas.stats(project).model_dump_json().encode())

    async def _run(self, work: Callable[[], Json]) -> Json:
        # Made in the event loop (anyio needs one); a cancelled wait leaves the thread to finish.
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(QUESTION_THREADS)
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True,
                                              limiter=self._limiter)


class InProcesses:
    """Questions answered by a pool of ``processes`` worker processes, each opening and warming
    its own atlas from ``settings`` (for ``project``) before the pool is returned.

    Raises:
        ApiAtlasError: A worker could not open the project, or did not within
            :data:`STARTUP_TIMEOUT_S` (its message says which).
    """

    def __init__(self, settings: Settings, project: str, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        ready = context.Queue()
        self._pool = context.Pool(processes, initializer=_open, initargs=(settings, project, ready))
        try:
            for _ in range(processes):
                try:
                    failure = ready.get(timeout=STARTUP_TIMEOUT_S)
                except queue.Empty:
                    raise ApiAtlasError(
                        f"a worker process did not open project {project!r} within "
                        f"{STARTUP_TIMEOUT_S:g} s; try fewer --workers on a busy machine"
                    ) from None
                if failure is not None:
                    raise ApiAtlasError(f"a worker process could not start: {failure}")
        except BaseException:
            self._pool.terminate()
            self._pool.join()
            raise
        finally:
            ready.close()

    async def ask(self, question: str, **context: Any) -> Json:
        return await self._run(_ask, question, context)

    async def stats(self, project: str) -> Json:
        return await self._run(_stats, project)

    def close(self) -> None:
        """Let the workers finish their questions and close their stores, then stop them (those
        still busy after :data:`STOP_TIMEOUT_S` are terminated)."""
        self._pool.close()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while multiprocessing.active_children() and time.monotonic() < deadline:
            time.sleep(0.05)
        if multiprocessing.active_children():
            self._pool.terminate()
        self._pool.join()

    async def _run(self, call: Callable[..., _Outcome], *args: Any) -> Json:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Outcome] = loop.create_future()

        def settle(outcome: _Outcome | None, error: BaseException | None) -> None:
            if future.done():  # the request gave up waiting (its time limit)
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(outcome)  # type: ignore[arg-type]

        self._pool.apply_async(
            call, args,
            callback=lambda outcome: loop.call_soon_threadsafe(settle, outcome, None),
            error_callback=lambda error: loop.call_soon_threadsafe(settle, None, error),
        )  # fmt: skip
        kind, value = await future
        if kind == "usage":
            raise UsageError(value)
        if kind == "failed":
            raise ApiAtlasError(value)
        return value  # type: ignore[no-any-return]


_Outcome = tuple[str, Any]
"""``("ok", JSON)``, or ``("usage" | "failed", message)`` for an apiatlas error: its message
crosses the process boundary and the app answers it as it would in one process (400 or 503).
Any other exception is a bug, pickled across as it is (a 500)."""

_atlas: ApiAtlas | None = None
"""The worker process's atlas (set by :func:`_open`)."""


def _open(settings: Settings, project: str, ready: Any) -> None:
    """A worker's start: open and warm the atlas, then report ``None`` on ``ready`` (or what
    went wrong: raising here would make the pool start the process again and again)."""
    global _atlas
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent.sentinel,), daemon=True).start()
    try:
        atlas = ApiAtlas(settings)
        Finalize(atlas, atlas.close, exitpriority=10)  # when the pool stops this process
        warm(atlas, project)
        _atlas = atlas
    except Exception as e:  # reported to the server, which stops with it
        ready.put(str(e) if isinstance(e, ApiAtlasError) else f"{type(e).__name__}: {e}")
        return
    ready.put(None)


def _end_with(sentinel: int) -> None:
    """End this worker once the server's process has ended, however it ended: killed, it stops
    no worker, and the pool's pipes stay open in the other workers, so nothing else would."""
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _ask(question: str, context: dict[str, Any]) -> _Outcome:
    return _answered(lambda atlas: atlas.ask(question, **context).model_dump_json().encode())


def _stats(project: str) -> _Outcome:
    return _answered(lambda atlas: atlas.stats(project).model_dump_json().encode())


def _answered(work: Callable[[ApiAtlas], Json]) -> _Outcome:
    if _atlas is None:
        return "failed", "this worker process could not open the project: see the server log"
    try:
        return "ok", work(_atlas)
    except UsageError as e:
        return "usage", str(e)
    except ApiAtlasError as e:
        return "failed", str(e)
