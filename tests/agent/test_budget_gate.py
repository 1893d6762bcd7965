"""Every model request is reserved against the budgets before it is sent (issue 32, point 6): parallel
subagents, compaction summaries, WebFetch page summaries, retries and interrupted streams share one
headroom. litellm talks over real HTTP, through an auditing proxy, to the replay server; each test
checks what the provider could have charged at any moment against the budget."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.agent import ledger
from goat_jupyter.agent.compaction import COMPACTION_MARKER
from goat_jupyter.agent.llm import LLMClient, MeteredClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.meter import Meter, session_meter
from goat_jupyter.agent.session import Session
from goat_jupyter.agent.spend import BudgetReachedError, Limits, RunSpend
from goat_jupyter.agent.turns import Usage
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import Settings
from goat_jupyter.subagents import attach_subagents
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.events import Event, Notice
from goat_jupyter.tools.runner import Executor
from goat_jupyter.web import WebService
from tests.agent_helpers import text_turn, tool_turn
from tests.budget_audit import GPT_4O_MINI, PRICES, AuditProxy, Seen, peak_in_flight, worst_moment
from tests.web_fixtures.server import LocalSite, Reply

PARENT = "PARENT-PROMPT"


@dataclass
class Rig:
    session: Session
    agent: Agent
    events: list[Event] = field(default_factory=lambda: list[Event]())

    def stops(self) -> list[str]:
        return [
            e.text
            for e in self.events
            if isinstance(e, Notice) and e.text.startswith("Stopped at the budget")
        ]


def make_rig(workspace: Path, url: str, *, retries: int = 0, **budget: Any) -> Rig:
    """An agent as the kernel builds one: subagents, WebFetch's page model and compaction all on
    the same endpoint, every one of them charged through the session's meter."""
    session = Session(workspace=workspace, settings=Settings(model=GPT_4O_MINI, **budget), persist=False)

    def llm_for(chosen: Settings) -> LLMClient:
        retry = RetryPolicy(max_retries=retries, base_delay_s=0.01)
        return LLMClient(chosen.model, retry=retry, extra={"api_base": url, "api_key": "test-key"})

    def page_client(chosen: Settings) -> MeteredClient:
        return llm_for(chosen).metered(session_meter(session))

    registry = default_registry(session=session)
    services = attach_subagents(Services(web=WebService(llm_client=page_client)), llm_for)
    events: list[Event] = []
    executor = Executor(registry, session, emit=events.append, services=services)
    agent = Agent(session, registry, executor, llm_for(session.settings), events.append)
    return Rig(session, agent, events)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A GOAT_HOME of the test's own: the daily ledger lives there."""
    folder = tmp_path / "home"
    monkeypatch.setenv("GOAT_HOME", str(folder))
    yield folder


def assert_within(seen: list[Seen], budget: float) -> None:
    assert seen, "no request was sent"
    assert all(s.max_tokens is not None for s in seen), "every request carries its cap"
    assert worst_moment(seen) <= budget + 1e-12, (worst_moment(seen), budget)


def assert_nothing_held(rig: Rig) -> None:
    spend = rig.agent.spend
    assert spend.reserved_usd == 0 and spend.reserved_tokens == 0
    assert spend.shared.reserved_usd == 0 and not spend.shared.in_flight


# --- parallel subagents -------------------------------------------------------------------------


def explore_calls(count: int) -> dict[str, Any]:
    calls = [
        {
            "name": "Agent",
            "arguments": {
                "description": f"look {i}",
                "prompt": f"CHILD-{i}: look around",
                "subagent_type": "Explore",
            },
        }
        for i in range(count)
    ]
    return {"match": PARENT, "tool_calls": calls}


def subagent_script(count: int) -> list[dict[str, Any]]:
    children = [text_turn(f"child {i} found it", match=f"CHILD-{i}:", delay_s=0.3) for i in range(count)]
    return [explore_calls(count), *children, text_turn("all six reported", match=PARENT)]


async def run_subagents(workspace: Path, count: int, budget: float) -> tuple[Rig, list[Seen]]:
    with ReplayServer(subagent_script(count)) as replay, AuditProxy(replay.url) as proxy:
        rig = make_rig(workspace, proxy.url, max_cost_per_run=budget)
        await rig.agent.run(f"{PARENT}: explore in parallel")
        return rig, list(proxy.seen)


async def test_six_parallel_subagents_share_one_headroom(tmp_path: Path) -> None:
    rig, seen = await run_subagents(tmp_path, 6, budget=0.03)
    assert_within(seen, 0.03)
    assert peak_in_flight(seen) >= 2, "requests that fit together still run together"
    children = [s for s in seen if "CHILD-" in s.text() and PARENT not in s.text()]
    assert len(children) == 6 and not rig.stops(), "each waited for headroom instead of overspending"
    assert_nothing_held(rig)


async def test_subagents_that_cannot_fit_stop_at_the_budget_with_one_line(tmp_path: Path) -> None:
    rig, seen = await run_subagents(tmp_path, 6, budget=0.0015)
    assert_within(seen, 0.0015)
    children = [s for s in seen if "CHILD-" in s.text() and PARENT not in s.text()]
    assert 1 <= len(children) < 6, "the budget paid for some children, not all"
    assert rig.stops() and all("max_cost_per_run" in line for line in rig.stops())
    assert_nothing_held(rig)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(1, 6), budget=st.floats(0.004, 0.06))
async def test_any_budget_and_fan_out_stays_within(tmp_path: Path, count: int, budget: float) -> None:
    workspace = tmp_path / f"w{count}-{budget:.5f}"
    workspace.mkdir(exist_ok=True)
    rig, seen = await run_subagents(workspace, count, budget)
    if seen:
        assert_within(seen, budget)
    assert_nothing_held(rig)


# --- compaction ---------------------------------------------------------------------------------


def long_history(session: Session, turns: int = 12) -> None:
    body = " ".join(f"observation{j}" for j in range(600))
    for i in range(turns):
        session.append({"role": "user", "content": f"question {i}?"})
        session.append({"role": "assistant", "content": f"Answer {i}: {body}"})


async def test_compaction_summary_is_reserved_and_capped(tmp_path: Path) -> None:
    summary = text_turn("## Goal\nSummarised.", match=COMPACTION_MARKER)
    with ReplayServer([summary, text_turn("after compaction")]) as replay, AuditProxy(replay.url) as proxy:
        rig = make_rig(tmp_path, proxy.url, max_cost_per_run=0.02, context_window=16_000)
        long_history(rig.session)
        result = await rig.agent.run("go on")
        seen = list(proxy.seen)
    summaries = [s for s in seen if COMPACTION_MARKER in s.text()]
    assert len(summaries) == 1 and result.text == "after compaction"
    assert_within(seen, 0.02)
    assert rig.agent.spend.cost_usd == pytest.approx(sum(s.billed() for s in seen))  # the summary counts


async def test_compaction_the_budget_cannot_pay_for_is_not_sent(tmp_path: Path) -> None:
    with ReplayServer([text_turn("never")]) as replay, AuditProxy(replay.url) as proxy:
        rig = make_rig(tmp_path, proxy.url, max_cost_per_run=0.0005, context_window=16_000)
        long_history(rig.session)
        result = await rig.agent.run("go on")
        assert not proxy.seen
    notices = [e.text for e in rig.events if isinstance(e, Notice)]
    assert notices[0] == "Compacting the conversation…", "the summary was what the budget refused"
    assert result.stop_reason == "budget" and len(rig.stops()) == 1


# --- WebFetch page summaries --------------------------------------------------------------------

PAGE = (
    "<html><body><h1>bisect</h1>" + "<p>insort keeps a list sorted.</p>" * 3000 + "</body></html>"
).encode()  # ~20k tokens


async def test_page_summaries_are_reserved_against_the_run(tmp_path: Path) -> None:
    with LocalSite({f"/p{i}.html": Reply(body=PAGE) for i in range(4)}) as site:
        fetches = [
            {"name": "WebFetch", "arguments": {"url": site.url(f"/p{i}.html"), "prompt": f"PAGE-Q{i}"}}
            for i in range(4)
        ]
        turns = [
            {"match": PARENT, "tool_calls": fetches},
            *[text_turn(f"page {i} says insort", match=f"PAGE-Q{i}", delay_s=0.2) for i in range(4)],
            text_turn("done reading", match=PARENT),
        ]
        with ReplayServer(turns) as replay, AuditProxy(replay.url) as proxy:
            rig = make_rig(tmp_path, proxy.url, max_cost_per_run=0.03, permission_mode="bypassPermissions")
            await rig.agent.run(f"{PARENT}: read the pages")
            seen = list(proxy.seen)
    summaries = [s for s in seen if "Request about this page" in s.text()]
    assert summaries, "the page model was asked"
    assert_within(seen, 0.03)
    assert rig.agent.spend.cost_usd == pytest.approx(sum(s.billed() for s in seen))
    assert_nothing_held(rig)


async def test_a_page_summary_the_budget_cannot_pay_for_is_not_sent(tmp_path: Path) -> None:
    with LocalSite({"/p.html": Reply(body=PAGE)}) as site:
        fetch = tool_turn("WebFetch", {"url": site.url("/p.html"), "prompt": "PAGE-Q"}, match=PARENT)
        with ReplayServer([fetch, text_turn("ok", match=PARENT)]) as replay, AuditProxy(replay.url) as proxy:
            rig = make_rig(tmp_path, proxy.url, max_cost_per_run=0.0025, permission_mode="bypassPermissions")
            await rig.agent.run(f"{PARENT}: read it")
            seen = list(proxy.seen)
    assert not [s for s in seen if "Request about this page" in s.text()]
    assert_within(seen, 0.0025)
    results = [m["content"] for m in rig.session.messages if m["role"] == "tool"]
    assert "Stopped at the budget" in results[0] and "max_cost_per_run" in results[0]


# --- retries and interrupts ---------------------------------------------------------------------


async def test_retries_after_a_5xx_are_reserved_again(tmp_path: Path) -> None:
    failing = {"error": {"status": 500, "message": "upstream broke"}}
    cut = {"text": "partial answer " * 40, "cut_stream": True}
    with ReplayServer([failing, cut, text_turn("third time")]) as replay, AuditProxy(replay.url) as proxy:
        rig = make_rig(tmp_path, proxy.url, retries=3, max_cost_per_run=0.02)
        result = await rig.agent.run("answer")
        seen = list(proxy.seen)
    assert result.text == "third time" and len(seen) == 3
    assert_within(seen, 0.02)
    assert rig.agent.spend.cost_usd > seen[2].billed(), "the cut-off stream was charged what it streamed"
    assert_nothing_held(rig)


async def test_an_interrupt_mid_stream_releases_the_reservation(tmp_path: Path, home: Path) -> None:
    slow = {"text": " ".join(f"word{i}" for i in range(400)), "chunk_delay_s": 0.05, "match": "first cell"}
    second = text_turn("second cell ran", match="second cell")
    with ReplayServer([slow, second]) as replay, AuditProxy(replay.url) as proxy:
        rig = make_rig(tmp_path, proxy.url, max_cost_per_run=0.012, max_cost_per_user_per_day=0.02)
        task = asyncio.ensure_future(rig.agent.run("first cell"))
        while not proxy.seen or rig.agent.spend.reserved_usd == 0:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # some of the answer has streamed
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert_nothing_held(rig)
        assert ledger.HELD not in json.loads(ledger.ledger_path().read_text())
        charged = rig.agent.spend.cost_usd
        assert charged > 0, "what streamed before the interrupt is charged"
        while proxy.seen[0].ended == float("inf"):
            await asyncio.sleep(0.02)
        again = await rig.agent.run("second cell")
        seen = list(proxy.seen)
    assert again.text == "second cell ran"
    assert ledger.spent_today() == pytest.approx(charged + seen[1].billed())
    assert_within(seen, 0.02)


# --- the daily ledger ---------------------------------------------------------------------------


async def test_a_hold_of_a_dead_process_does_not_count(tmp_path: Path, home: Path) -> None:
    with ledger.booking() as book:
        book.held["gone"] = ledger.Hold(5.0, 2**22 + 12345, socket.gethostname(), 0.0 + 1e12)
        book.held["old"] = ledger.Hold(5.0, os.getpid(), socket.gethostname(), 0.0)
        book.changed = True
    with ledger.booking() as book:
        assert book.committed == 0.0  # neither a dead process's hold nor a stale one
    ledger.ledger_path().write_text(json.dumps({ledger.today(): 0.001, "held": {"x": {"usd": "lots"}}}))
    with ReplayServer([text_turn("fine")]) as replay:
        rig = make_rig(tmp_path, replay.url, max_cost_per_user_per_day=0.02)
        assert (await rig.agent.run("hi")).text == "fine"


# --- the meter alone, under many concurrent requests ---------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    limit=st.floats(0.0005, 0.05),
    requests=st.lists(
        st.tuples(st.integers(0, 40_000), st.floats(0, 1), st.floats(0, 0.02)), min_size=1, max_size=12
    ),
)
async def test_reserved_and_spent_never_pass_the_limit(
    limit: float, requests: list[tuple[int, float, float]]
) -> None:
    """Requests of random size reserve at once, end after random delays using a random share of
    their cap: at every moment spent + reserved stays within the limit, and nothing stays held."""
    spend = RunSpend()
    meter = Meter(spend, lambda: Limits(cost_per_run=limit))
    peaks: list[float] = []

    async def one(prompt: int, used: float, delay: float) -> None:
        try:
            reservation = await meter.reserve(GPT_4O_MINI, prompt, None)
        except BudgetReachedError:
            return
        peaks.append(spend.cost_usd + spend.reserved_usd)
        await asyncio.sleep(delay)
        answer = int((reservation.cap or 0) * used)
        reservation.settle(Usage(prompt, answer, prompt * PRICES.prompt + answer * PRICES.answer))

    await asyncio.gather(*(one(*request) for request in requests))
    assert all(peak <= limit + 1e-12 for peak in peaks)
    assert spend.cost_usd <= limit + 1e-12
    assert spend.reserved_usd == 0 and spend.holds == 0 and not spend.shared.in_flight
