"""The gate every model request passes (issue 32): before it is sent, the most it may cost (its prompt
plus `max_tokens` of answer) is reserved against each budget in force; when it ends (answered,
failed, cancelled, before a retry) the reservation gives way to what it really cost. Concurrent
requests (parallel subagents, a page summary, a compaction) so share one headroom, and the daily
ledger counts what every kernel of the user has in flight.

`LLMClient.complete` (llm.py) takes a Meter and is the only caller of litellm's completion API
(tests/test_architecture.py checks that), so no request path can go around it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator
from dataclasses import dataclass

from goat_jupyter.agent import ledger
from goat_jupyter.agent.litellm_loader import model_limits, token_prices
from goat_jupyter.agent.session import Session
from goat_jupyter.agent.spend import BudgetReachedError, Limits, Prices, RunSpend, answer_cap
from goat_jupyter.agent.turns import Usage
from goat_jupyter.config.managed import load_managed


def _ignore(_text: str) -> None:
    return None


@dataclass(eq=False)
class Reservation:
    """One request's hold on the budgets; `settle` ends it exactly once."""

    spend: RunSpend
    prompt_tokens: int
    cap: int | None  # the request's max_tokens (None: no budget bounds it)
    usd: float = 0.0
    tokens: int = 0
    day_hold: str | None = None  # its hold in the daily ledger
    day_ledger: bool = False  # a daily budget was in force when it was made
    done: asyncio.Future[None] | None = None
    settled: bool = False

    def settle(self, usage: Usage) -> None:
        """Give back the reservation and charge what the request really cost."""
        if self.settled:
            return
        self.settled = True
        self.spend.unhold(self.usd, self.tokens)
        self.spend.add(usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)
        if self.day_hold is not None or (self.day_ledger and usage.cost_usd):
            with ledger.booking() as book:
                book.settle(self.day_hold, usage.cost_usd or 0.0)
        if self.done is not None:
            self.spend.shared.in_flight.discard(self.done)
            if not self.done.done():
                self.done.set_result(None)


@dataclass
class Meter:
    """What a request is charged to: a run's spend (shared with its subagents and the session's
    other runs) under the limits in force when it is sent."""

    spend: RunSpend
    limits: Callable[[], Limits] = Limits
    warn: Callable[[str], None] = _ignore  # says once per run that a model has no price

    async def reserve(self, model: str, prompt_tokens: int, max_tokens: int | None) -> Reservation:
        """A reservation for one request; waits while requests in flight hold the headroom it needs,
        raises BudgetReachedError when none does."""
        if refused := load_managed().refusal("model", model):
            raise BudgetReachedError(refused)
        while True:
            try:
                reservation = self._try(model, prompt_tokens, max_tokens)
            except BudgetReachedError:
                if not await self._wait_for_one():
                    raise
                continue
            self._track(reservation)
            return reservation

    def _try(self, model: str, prompt_tokens: int, max_tokens: int | None) -> Reservation:
        limits = self.limits()
        if not limits.any:
            self.spend.hold(0.0, 0)  # settle gives every reservation back, this one too
            return Reservation(self.spend, prompt_tokens, max_tokens)
        prices = self._prices(model, limits)
        with _day_book(limits) as book:
            day = book.committed if book is not None else 0.0
            session = self.spend.shared.committed
            cap = answer_cap(limits, self.spend, session, prompt_tokens, prices, day)
            cap = _tightest(cap, max_tokens, model_limits(model)[1])
            usd = _worst_cost(prompt_tokens, cap, prices)
            tokens = prompt_tokens + (cap or 0) if limits.tokens_per_run is not None else 0
            hold = book.hold(usd) if book is not None and usd > 0 else None
        self.spend.hold(usd, tokens)
        return Reservation(self.spend, prompt_tokens, cap, usd, tokens, hold, book is not None)

    def _prices(self, model: str, limits: Limits) -> Prices | None:
        prices = token_prices(model) if limits.any_cost else None
        noted = self.spend.shared.unpriced_noted
        if limits.any_cost and prices is None and model not in noted:
            noted.add(model)  # once per session, not in every cell
            self.warn(_unknown_cost(model, limits))
        return Prices(*prices) if prices is not None else None

    def _track(self, reservation: Reservation) -> None:
        if reservation.usd or reservation.tokens:
            in_flight = self.spend.shared.in_flight
            reservation.done = asyncio.get_running_loop().create_future()
            in_flight.add(reservation.done)

    async def _wait_for_one(self) -> bool:
        """Wait until one of the session's requests in flight ends; False when none is in flight."""
        loop = asyncio.get_running_loop()
        pending = [done for done in self.spend.shared.in_flight if done.get_loop() is loop]
        if not pending:
            return False
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        return True


@contextlib.contextmanager
def _day_book(limits: Limits) -> Generator[ledger.Book | None]:
    """The daily ledger under its lock while a daily budget is in force (every kernel then waits)."""
    if limits.cost_per_user_per_day is None:
        yield None
        return
    with ledger.booking() as book:
        yield book


def _tightest(*caps: int | None) -> int | None:
    known = [cap for cap in caps if cap is not None]
    return min(known) if known else None


def _worst_cost(prompt_tokens: int, cap: int | None, prices: Prices | None) -> float:
    if prices is None:
        return 0.0
    return prompt_tokens * prices.prompt + (cap or 0) * prices.answer


def _unknown_cost(model: str, limits: Limits) -> str:
    tokens = "max_tokens_per_run applies" if limits.tokens_per_run is not None else "set max_tokens_per_run"
    return f"The cost of {model} is unknown (litellm has no price for it): the cost budget cannot apply; {tokens}."


def session_meter(session: Session, *, in_run: bool = True) -> Meter:
    """A meter for a request outside an agent's turns: a WebFetch page summary is charged to the
    running cell (`in_run`), `%goat compact` between cells to the session and the day only."""
    spend = session.run_spend if in_run and session.run_spend is not None else session.new_run_spend()
    return Meter(spend, lambda: Limits.of(session.settings))
