"""An ingest's objects are built with the cyclic collector paused, and it comes back as it was."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from apiatlas import collector
from apiatlas.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_comes_back_after_an_error() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the ingest failed")
    assert gc.isenabled()


def test_an_application_that_runs_without_it_keeps_it_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_ingests_give_it_back_when_the_last_one_ends() -> None:
    gc.enable()
    entered, release = threading.Event(), threading.Event()

    def other_ingest() -> None:
        with collector_paused():
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=other_ingest)
    with collector_paused():
        worker.start()
        assert entered.wait(5)
    assert not gc.isenabled()  # the other ingest is still building
    release.set()
    worker.join(5)
    assert gc.isenabled()


def test_an_application_can_keep_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector, "ENABLED", False)
    gc.enable()
    with collector_paused():
        assert gc.isenabled()
    assert gc.isenabled()
