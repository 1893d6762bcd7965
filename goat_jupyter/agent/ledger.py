"""The per-user usage ledger: dollars spent each day (UTC) over all of a user's kernels, for
`max_cost_per_user_per_day`. One small JSON object under GOAT_HOME, changed under a file lock and
replaced atomically, so two kernels of one user add up instead of overwriting each other.
Spend is recorded while a daily budget is in force (nothing is written without one)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config.files import write_atomically
from goat_jupyter.config.project import goat_home
from goat_jupyter.file_lock import locked
from goat_jupyter.text import loads_json

KEEP_DAYS = 31


def ledger_path() -> Path:
    return goat_home() / "usage" / "daily-cost.json"


def today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _read(path: Path) -> dict[str, float]:
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    days = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
    return {day: float(v) for day, v in days.items() if isinstance(v, int | float)}


def spent_today(path: Path | None = None) -> float:
    return _read(path or ledger_path()).get(today(), 0.0)


def record(cost_usd: float, path: Path | None = None) -> float:
    """Add `cost_usd` to today's total; returns the new total."""
    path = path or ledger_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        days = _read(path)
        day = today()
        days[day] = days.get(day, 0.0) + cost_usd
        kept = dict(sorted(days.items())[-KEEP_DAYS:])
        write_atomically(path, json.dumps(kept, indent=1) + "\n")
    return days[day]
