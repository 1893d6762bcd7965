"""Budgets: what a run, a session and a user's day may spend, checked before each model request is sent.

A request is sent only if it cannot cross a budget: its prompt is priced (or counted) before it
goes, and its answer is capped (`max_tokens`) at what the budget still pays for. A request that
cannot afford at least `MIN_ANSWER_TOKENS` of answer is not sent and the run ends at the budget.
What requests in flight may still cost is reserved (meter.py), so it counts as spent until they end.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from goat_jupyter.config.managed import load_managed
from goat_jupyter.errors import GoatError
from goat_jupyter.settings import Settings

MIN_ANSWER_TOKENS = 256  # below this an answer is rarely useful: stop instead


class BudgetReachedError(GoatError):
    """The next request would cross a budget; the message is the one line the user sees."""


@dataclass(frozen=True)
class Prices:
    """Dollars per token, from litellm's model map."""

    prompt: float
    answer: float


@dataclass
class SessionSpend:
    """What a session has spent and holds reserved, over all its runs (a background subagent of an
    earlier run spends from it too)."""

    cost_usd: float = 0.0
    reserved_usd: float = 0.0
    holds: int = 0
    # Each request in flight (meter.py): a request that cannot afford its answer waits for one to end.
    in_flight: set[asyncio.Future[None]] = field(default_factory=lambda: set[asyncio.Future[None]]())
    unpriced_noted: set[str] = field(
        default_factory=lambda: set[str]()
    )  # models said to be unpriced, once each

    @property
    def committed(self) -> float:
        return self.cost_usd + self.reserved_usd


@dataclass
class RunSpend:
    """What one `%%goat` run has spent so far, its subagents included (they share this object)."""

    session_before: float = 0.0  # what the session had spent when the run began
    cost_usd: float = 0.0
    tokens: int = 0
    unpriced: bool = False  # some request had no known price
    reserved_usd: float = 0.0  # the most the requests in flight may still cost
    reserved_tokens: int = 0
    holds: int = 0  # requests in flight with a reservation: at 0 the sums are exactly 0 again
    session: SessionSpend | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.session is None:
            self.session = SessionSpend(self.session_before + self.cost_usd)

    @property
    def shared(self) -> SessionSpend:
        assert self.session is not None  # set by __post_init__
        return self.session

    @property
    def session_cost(self) -> float:
        return self.shared.cost_usd

    @property
    def committed_usd(self) -> float:
        return self.cost_usd + self.reserved_usd

    @property
    def committed_tokens(self) -> int:
        return self.tokens + self.reserved_tokens

    def add(self, prompt_tokens: int, completion_tokens: int, cost_usd: float | None) -> None:
        self.tokens += prompt_tokens + completion_tokens
        if cost_usd is None:
            self.unpriced = True
        else:
            self.cost_usd += cost_usd
            self.shared.cost_usd += cost_usd

    def hold(self, usd: float, tokens: int) -> None:
        """Reserve what a request in flight may cost (run and session)."""
        self.reserved_usd += usd
        self.reserved_tokens += tokens
        self.holds += 1
        self.shared.reserved_usd += usd
        self.shared.holds += 1

    def unhold(self, usd: float, tokens: int) -> None:
        self.holds -= 1
        self.reserved_usd = max(0.0, self.reserved_usd - usd) if self.holds else 0.0
        self.reserved_tokens = max(0, self.reserved_tokens - tokens)
        shared = self.shared
        shared.holds -= 1
        shared.reserved_usd = max(0.0, shared.reserved_usd - usd) if shared.holds else 0.0


@dataclass(frozen=True)
class Limits:
    """The budgets in force for one run; None means no limit."""

    cost_per_run: float | None = None
    cost_per_session: float | None = None
    tokens_per_run: int | None = None
    cost_per_user_per_day: float | None = None

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            settings.max_cost_per_run,
            settings.max_cost_per_session,
            settings.max_tokens_per_run,
            settings.max_cost_per_user_per_day,
        )

    @property
    def any_cost(self) -> bool:
        costs = (self.cost_per_run, self.cost_per_session, self.cost_per_user_per_day)
        return any(cost is not None for cost in costs)

    @property
    def any(self) -> bool:
        return self.any_cost or self.tokens_per_run is not None


@dataclass(frozen=True)
class Headroom:
    """The tightest budget left: its name, what was spent against it and its limit."""

    name: str
    spent: float
    limit: float
    unit: str  # "$" or "tokens"

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.spent)

    def describe(self) -> str:
        if self.unit == "$":
            return f"{dollars(self.spent, self.limit)} of {dollars(self.limit, self.limit)}"
        return f"{self.spent:,.0f} of {self.limit:,.0f} tokens"


def dollars(amount: float, scale: float) -> str:
    """Cents for budgets from 10 cents up; four decimals below, so a small spend is not $0.00."""
    return f"${amount:.2f}" if scale >= 0.1 else f"${amount:.4f}"


def cost_headroom(
    limits: Limits, run: RunSpend, session_cost: float, day_cost: float = 0.0
) -> Headroom | None:
    """The cost budget with the least left (the run's, the session's or the user's day)."""
    rooms = [
        Headroom("max_cost_per_user_per_day", day_cost, limits.cost_per_user_per_day, "$")
        if limits.cost_per_user_per_day is not None
        else None,
        Headroom("max_cost_per_run", run.committed_usd, limits.cost_per_run, "$")
        if limits.cost_per_run is not None
        else None,
        Headroom("max_cost_per_session", session_cost, limits.cost_per_session, "$")
        if limits.cost_per_session is not None
        else None,
    ]
    found = [room for room in rooms if room is not None]
    return min(found, key=lambda room: room.left) if found else None


def answer_cap(
    limits: Limits,
    run: RunSpend,
    session_cost: float,
    prompt_tokens: int,
    prices: Prices | None,
    day_cost: float = 0.0,
) -> int | None:
    """The most answer tokens the next request may ask for; None: no budget applies.

    Raises BudgetReachedError when not even MIN_ANSWER_TOKENS fit.
    """
    caps: list[int] = []
    if limits.tokens_per_run is not None:
        room = Headroom("max_tokens_per_run", run.committed_tokens, limits.tokens_per_run, "tokens")
        caps.append(_check(room, math.floor(room.left) - prompt_tokens))
    cost_room = cost_headroom(limits, run, session_cost, day_cost)
    if cost_room is not None and prices is not None:
        left = cost_room.left - prompt_tokens * prices.prompt
        affordable = math.floor(left / prices.answer) if prices.answer > 0 else 1 << 30
        caps.append(_check(cost_room, affordable))
    return min(caps) if caps else None


def _check(room: Headroom, answer_tokens: int) -> int:
    if answer_tokens < MIN_ANSWER_TOKENS:
        raise BudgetReachedError(stop_line(room))
    return answer_tokens


def stop_line(room: Headroom) -> str:
    if room.name == "max_cost_per_user_per_day":
        return _day_stop_line(room)
    more = room.limit * 2 or 1
    if room.unit == "$":
        more_text = dollars(more, more)[1:]
        option = "" if room.name == "max_cost_per_session" else f"%%goat --max-cost {more_text} or "
    else:
        more_text = f"{more:.0f}"
        option = f"%%goat --max-tokens {more_text} or "
    how = f"raise it with {option}%goat config {room.name}={more_text}"
    return f"Stopped at the budget: {room.describe()} ({room.name}) · {how}"


def _day_stop_line(room: Headroom) -> str:
    policy = load_managed()
    if room.name in policy.ceilings:
        how = f"set by {policy.reason}; it starts again at 00:00 UTC"
    else:
        more = dollars(room.limit * 2 or 1, room.limit * 2 or 1)[1:]
        how = f"it starts again at 00:00 UTC, or raise it with %goat config {room.name}={more}"
    return f"Stopped at the budget: {room.describe()} today ({room.name}) · {how}"


def live_budget(limits: Limits, run: RunSpend) -> str:
    """The tightest budget for the live status line ("" when none applies)."""
    rooms: list[Headroom] = []
    if (room := cost_headroom(limits, run, run.session_cost)) is not None and not run.unpriced:
        rooms.append(room)
    if limits.tokens_per_run is not None:
        rooms.append(Headroom("max_tokens_per_run", run.tokens, limits.tokens_per_run, "tokens"))
    if not rooms:
        return ""
    tightest = min(rooms, key=lambda room: room.left / room.limit if room.limit else 0.0)
    return f"{tightest.describe()} budget"


def budget_status(
    limits: Limits, run: RunSpend | None, session_cost: float | None, day_cost: float = 0.0
) -> str:
    """One line for `%goat status` and the live status: spend against each budget in force."""
    parts: list[str] = []
    spent_run = run or RunSpend()
    if (limit := limits.cost_per_run) is not None:
        parts.append(f"last run {dollars(spent_run.cost_usd, limit)} of {dollars(limit, limit)}")
    if (limit := limits.cost_per_session) is not None:
        shown = "unknown" if session_cost is None else dollars(session_cost, limit)
        parts.append(f"session {shown} of {dollars(limit, limit)}")
    if limits.tokens_per_run is not None:
        parts.append(f"last run {spent_run.tokens:,} of {limits.tokens_per_run:,} tokens")
    if (limit := limits.cost_per_user_per_day) is not None:
        parts.append(f"today {dollars(day_cost, limit)} of {dollars(limit, limit)}")
    return "budget: " + (" · ".join(parts) if parts else "none")
