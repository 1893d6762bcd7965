"""The per-user usage ledger: dollars spent each day (UTC) over all of a user's kernels, for
`max_cost_per_user_per_day`. One small JSON object under GOAT_HOME, changed under a file lock and
replaced atomically, so two kernels of one user add up instead of overwriting each other.
Spend is recorded while a daily budget is in force (nothing is written without one).

Besides the days, the object holds `held`: what requests in flight may still cost (meter.py), so a
request in one kernel counts against the day while another kernel decides what it may send. A hold
whose process is gone, or that is older than any request lives, no longer counts."""

from __future__ import annotations

import datetime
import json
import os
import socket
import time
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config.files import write_atomically
from goat_jupyter.config.project import goat_home
from goat_jupyter.file_lock import locked
from goat_jupyter.text import loads_json

KEEP_DAYS = 31
HELD = "held"
STALE_HOLD_S = 6 * 3600.0  # far beyond the longest request (first-token and idle timeouts)


def ledger_path() -> Path:
    return goat_home() / "usage" / "daily-cost.json"


def today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


@dataclass(frozen=True)
class Hold:
    """One request's reservation: by which process, since when, how many dollars."""

    usd: float
    pid: int
    host: str
    since: float

    def live(self, now: float) -> bool:
        if now - self.since > STALE_HOLD_S:
            return False
        return self.host != socket.gethostname() or _process_alive(self.pid)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: it exists
        return True
    return True


@dataclass
class Book:
    """The ledger as read under its lock; `hold` and `settle` change it, written when the lock ends."""

    days: dict[str, float] = field(default_factory=lambda: dict[str, float]())
    held: dict[str, Hold] = field(default_factory=lambda: dict[str, Hold]())
    changed: bool = False

    @property
    def committed(self) -> float:
        """Today's spend plus what the requests in flight (every kernel's) may still cost."""
        return self.days.get(today(), 0.0) + sum(hold.usd for hold in self.held.values())

    def hold(self, usd: float) -> str:
        key = uuid.uuid4().hex
        self.held[key] = Hold(usd, os.getpid(), socket.gethostname(), time.time())
        self.changed = True
        return key

    def settle(self, key: str | None, cost_usd: float) -> None:
        """Drop the hold and add the real cost to today."""
        if key is not None:
            self.held.pop(key, None)
        if cost_usd:
            self.days[today()] = self.days.get(today(), 0.0) + cost_usd
        self.changed = True


def _read(path: Path) -> Book:
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Book()
    raw = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
    days = {day: float(v) for day, v in raw.items() if isinstance(v, int | float)}
    return Book(days, _holds(raw.get(HELD)))


def _holds(raw: object) -> dict[str, Hold]:
    """The holds still live; a malformed entry is dropped, not trusted."""
    if not isinstance(raw, dict):
        return {}
    now, holds = time.time(), dict[str, Hold]()
    for key, value in cast("dict[str, Any]", raw).items():
        try:
            hold = Hold(float(value["usd"]), int(value["pid"]), str(value["host"]), float(value["since"]))
        except (TypeError, KeyError, ValueError):
            continue
        if hold.live(now) and hold.usd >= 0:
            holds[key] = hold
    return holds


def _write(path: Path, book: Book) -> None:
    data: dict[str, Any] = dict(sorted(book.days.items())[-KEEP_DAYS:])
    if book.held:
        data[HELD] = {key: vars(hold) for key, hold in book.held.items()}
    write_atomically(path, json.dumps(data, indent=1) + "\n")


@contextmanager
def booking(path: Path | None = None) -> Generator[Book]:
    """The ledger under its lock (every kernel of the user waits), written back if changed."""
    path = path or ledger_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        book = _read(path)
        yield book
        if book.changed:
            _write(path, book)


def spent_today(path: Path | None = None) -> float:
    return _read(path or ledger_path()).days.get(today(), 0.0)


def record(cost_usd: float, path: Path | None = None) -> float:
    """Add `cost_usd` to today's total; returns the new total."""
    with booking(path) as book:
        book.settle(None, cost_usd)
        return book.days.get(today(), 0.0)
