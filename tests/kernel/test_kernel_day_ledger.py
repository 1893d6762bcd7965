"""The daily budget over two real kernels of one user (issue 32, point 6): while one kernel's request
is in flight, what it may still cost is held in the user's ledger, so the other kernel cannot send a
request that together with it could cross `max_cost_per_user_per_day`. When the first answer ends,
the hold gives way to the real cost and the other kernel can spend again. An interrupted cell
leaves no hold behind."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
from tests.budget_audit import AuditProxy, worst_moment
from tests.kernel_harness import CellResult, KernelSession, prepare_workspace, replay_kernel_env

pytestmark = [pytest.mark.timeout(300)]

# Below one request with a full answer (16,384 tokens of gpt-4o-mini: $0.0098 plus the prompt), so the
# first request's hold is the whole day and the second cannot send, whatever size the prompt is.
DAY = 0.0100
TURNS = [
    text_turn("first kernel answered", match="[one]", delay_s=6.0),
    text_turn("second kernel answered later", match="[two-again]"),
    {"text": " ".join(f"word{i}" for i in range(600)), "chunk_delay_s": 0.05, "match": "[interrupted]"},
    text_turn("after the interrupt", match="[after]"),
]


def shown(result: CellResult) -> str:
    return result.text("text/plain") + result.text("text/markdown") + result.stdout


async def a_kernel(workspace: Path, home: Path, url: str) -> KernelSession:
    prepare_workspace(workspace)
    kernel = await KernelSession(workspace, replay_kernel_env(home, url)).__aenter__()
    loaded = await kernel.execute(f"%load_ext goat_jupyter\n%goat config max_cost_per_user_per_day={DAY}")
    assert loaded.status == "ok", loaded.messages
    # litellm loads in the background for seconds; the race below must not wait on it.
    warm = await kernel.execute(
        "import goat_jupyter.agent.litellm_loader as l\nassert l.warmed.wait(120)", timeout=150
    )
    assert warm.status == "ok", warm.error
    return kernel


async def test_two_kernels_share_the_days_headroom(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ledger = home / "usage" / "daily-cost.json"
    cell = "%%goat --model openai/gpt-4o-mini\n"
    with ReplayServer(TURNS) as replay, AuditProxy(replay.url) as proxy:
        first = await a_kernel(tmp_path / "a", home, proxy.url)
        second = await a_kernel(tmp_path / "b", home, proxy.url)
        try:
            running = asyncio.ensure_future(first.execute(cell + "[one] go", timeout=120))
            while not proxy.seen:
                await asyncio.sleep(0.05)
            assert "held" in json.loads(ledger.read_text()), "the request in flight is held in the ledger"
            refused = await second.execute(cell + "[two] go", timeout=120)
            assert len(proxy.seen) == 1, "the second kernel sent nothing while the first held the headroom"
            assert shown(refused).count("Stopped at the budget") == 1, shown(refused)
            assert "today (max_cost_per_user_per_day)" in shown(refused)
            answered = await running
            assert "first kernel answered" in shown(answered)
            again = await second.execute(cell + "[two-again] go", timeout=120)
            assert "second kernel answered later" in shown(again), shown(again)

            interrupted = asyncio.ensure_future(first.execute(cell + "[interrupted] go", timeout=120))
            while len(proxy.seen) < 3:
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # part of the answer has streamed
            await first.interrupt()
            await interrupted
            assert "held" not in json.loads(ledger.read_text()), "the interrupted request's hold is gone"
            cut = proxy.seen[2]
            while cut.ended == float("inf"):  # the provider notices the closed connection at its next write
                await asyncio.sleep(0.02)
            assert cut.ended - cut.arrived < 5, "the interrupt closed the connection: no full-length answer"
            after = await second.execute(cell + "[after] go", timeout=120)
            assert "after the interrupt" in shown(after), shown(after)
        finally:
            await first.__aexit__(None, None, None)
            await second.__aexit__(None, None, None)
        seen = list(proxy.seen)
    assert worst_moment(seen) <= DAY
    spent = json.loads(ledger.read_text())
    assert list(spent) == [next(iter(spent))] and 0 < next(iter(spent.values())) <= DAY
