"""A clock the tests move forward by hand (memories are stamped with its time)."""

from __future__ import annotations

from datetime import datetime, timedelta


class Clock:
    """Returns ``now`` when called; :meth:`advance` moves it."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now
