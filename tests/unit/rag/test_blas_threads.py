"""A question's numeric work runs on one BLAS thread, and the previous limit comes back after."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from apiatlas.rag.agent.graph import _timed
from apiatlas.rag.runtime import threads

assert np.ones(2) @ np.ones(2) == 2.0  # numpy's BLAS is loaded before the controller looks


def blas_threads() -> set[int]:
    return {int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"}


def test_a_question_runs_on_one_blas_thread_and_gives_the_limit_back() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == {2}
        with threads.one_blas_thread():
            assert blas_threads() == {1}
        assert blas_threads() == {2}


def test_overlapping_questions_give_the_limit_back_when_the_last_one_ends() -> None:
    entered, release = threading.Event(), threading.Event()

    def other_question() -> None:
        with threads.one_blas_thread():
            entered.set()
            release.wait(5)

    with threadpool_limits(limits=2, user_api="blas"):
        worker = threading.Thread(target=other_question)
        with threads.one_blas_thread():
            worker.start()
            assert entered.wait(5)
        assert blas_threads() == {1}  # this question ended, the other one still runs
        release.set()
        worker.join(5)
        assert blas_threads() == {2}


def test_an_application_that_manages_blas_itself_can_turn_it_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "ENABLED", False)
    with threadpool_limits(limits=2, user_api="blas"), threads.one_blas_thread():
        assert blas_threads() == {2}


def test_every_agent_node_runs_on_one_blas_thread() -> None:
    seen: list[set[int]] = []

    def body(state: Any, runtime: Any) -> dict[str, Any]:
        seen.append(blas_threads())
        return {}

    with threadpool_limits(limits=2, user_api="blas"):
        update = _timed("analyse", body)({}, None)  # type: ignore[arg-type]
        assert blas_threads() == {2}
    assert seen == [{1}] and update["route"] == ["analyse"]


def test_a_blas_library_loaded_after_the_first_question_is_limited_too() -> None:
    with threads.one_blas_thread():
        pass  # a first question, before the library below is loaded
    import scipy.linalg  # scipy ships an OpenBLAS of its own

    assert scipy.linalg.det(np.eye(2)) == 1.0
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == {2}
        with threads.one_blas_thread():
            assert blas_threads() == {1}
        assert blas_threads() == {2}
