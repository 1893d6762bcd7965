"""The first %%goat run in a fresh kernel, right after `%load_ext` (issue 33 point 9): a missing key is
said before the model library has even loaded, and the live line keeps moving while it loads.

Times are measured in the kernel (message header dates and the loader's `imported_at`, one clock)
and printed; the assertions are about order and gaps, not about how fast this machine is."""

from __future__ import annotations

import datetime
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
from tests.kernel_harness import KernelSession, Message, prepare_workspace, replay_kernel_env

pytestmark = pytest.mark.timeout(240)
LOADED_AT = "from goat_jupyter.agent import litellm_loader as _l\n_l.warmed.wait(180)\nprint(_l.imported_at)"


def sent_at(msg: Message) -> float:
    """The kernel's clock when it sent `msg` (seconds since the epoch)."""
    date: Any = msg["header"]["date"]
    if isinstance(date, str):
        date = datetime.datetime.fromisoformat(date)
    return date.timestamp()


def shown(msg: Message) -> str:
    data = msg["content"].get("data") or {}
    return str(data.get("text/plain", "")) + str(msg["content"].get("text", ""))


async def imported_at(kernel: KernelSession) -> float:
    done = await kernel.execute(LOADED_AT, timeout=200)
    assert done.status == "ok", done.error
    return float(done.stdout.strip())


async def test_a_missing_key_is_said_before_the_model_library_is_loaded(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    env = replay_kernel_env(tmp_path / "home", "http://127.0.0.1:9")
    env["OPENAI_API_KEY"] = ""
    async with KernelSession(tmp_path, env) as kernel:
        started = await kernel.execute("%load_ext goat_jupyter")
        run = await kernel.execute("%%goat\nhello")
        said = [m for m in run.messages if "No API key for openai/replay" in shown(m)]
        assert said, run.text()
        library = await imported_at(kernel)
    after_load_ext = sent_at(said[0]) - sent_at(started.messages[0])
    print(
        f"missing-key sentence {after_load_ext:.2f} s after %load_ext; the model library loaded "
        f"{library - sent_at(said[0]):.2f} s after the sentence"
    )
    assert sent_at(said[0]) < library, "the sentence waited for the model library"
    assert "litellm" not in run.text()


async def test_the_live_line_keeps_moving_while_the_model_library_loads(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    with ReplayServer([text_turn("Hello from the first run.")]) as server:
        async with KernelSession(tmp_path, replay_kernel_env(tmp_path / "home", server.url)) as kernel:
            started = await kernel.execute("%load_ext goat_jupyter")
            run = await kernel.execute("%%goat\nhello", timeout=200)
            assert run.status == "ok", run.error
            library = await imported_at(kernel)
    assert "Hello from the first run." in run.text() + run.text("text/markdown")
    updates = [sent_at(m) for m in run.of_type("display_data", "update_display_data")]
    begin = sent_at(started.messages[0])
    during = [t for t in updates if t <= library]
    moments = [*during, min([t for t in updates if t > library], default=library)]  # and the next one
    gaps = [b - a for a, b in itertools.pairwise(moments)]
    print(
        json.dumps(
            {
                "library_loaded_s_after_load_ext": round(library - begin, 2),
                "updates_during_load": len(during),
                "longest_gap_s": round(max(gaps, default=0.0), 2),
            }
        )
    )
    lines = [shown(m) for m in run.of_type("display_data", "update_display_data")]
    assert not any("litellm" in line for line in lines), "a word the user does not need"
    assert len(during) >= 3, "the live line did not move while the model library loaded"
    assert max(gaps) < 2.5, f"the live line froze for {max(gaps):.1f} s"
