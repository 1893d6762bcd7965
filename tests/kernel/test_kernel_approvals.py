"""Approvals, questions and plan review in a real kernel, clicked the way JupyterLab's widgets do.

jupyter_client acts as the frontend: it finds a widget's comm id in the kernel's `comm_open`
messages (target `jupyter.widget`), clicks with `{"method": "custom", "content": {"event": "click"}}`
and syncs values with `{"method": "update", "state": ...}`, holding back a second update until the
kernel acknowledges the first with an `idle` status, as ipywidgets does. One kernel serves the
module's tests; each cell starts a fresh session (`--new`) and its scripted turns match a tag.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
import pytest_asyncio
from nbclient import NotebookClient

from goat_jupyter.replay import ReplayServer
from goat_jupyter.ui.approval import FEEDBACK_PLACEHOLDER
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import (
    REPO_ROOT,
    CellResult,
    KernelSession,
    goat_kernel,
    prepare_workspace,
    replay_kernel_env,
    wait_for,
)

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

QUESTION = {
    "question": "Which colour should the chart use?",
    "header": "Colour",
    "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "calm"}],
}
TURNS = [
    tool_turn("Bash", {"command": "echo allowed > allowed.txt"}, match="[allow-once]"),
    text_turn("Done.", match="[allow-once]"),
    tool_turn("Bash", {"command": "echo no > denied.txt"}, match="[deny]"),
    text_turn("Understood.", match="[deny]"),
    tool_turn("Bash", {"command": "echo always >> always.txt"}, match="[always-1]"),
    text_turn("Saved.", match="[always-1]"),
    tool_turn("Bash", {"command": "echo always >> always.txt"}, match="[always-2]"),
    text_turn("Again.", match="[always-2]"),
    tool_turn("AskUserQuestion", {"questions": [QUESTION]}, match="[question]"),
    text_turn("Blue it is.", match="[question]"),
    tool_turn("ExitPlanMode", {"plan": "# Plan\n1. Read the data\n2. Plot it"}, match="[plan]"),
    text_turn("Starting.", match="[plan]"),
    tool_turn("Bash", {"command": "echo x > dontask.txt"}, match="[dont-ask]"),
    text_turn("Not allowed here.", match="[dont-ask]"),
    tool_turn("Bash", {"command": "echo late > interrupted.txt"}, match="[interrupt]"),
    text_turn("Still here.", match="[after-interrupt]"),
    tool_turn("Bash", {"command": "echo headless > headless.txt"}, match="[headless]"),
    text_turn("I could not run it.", match="[headless]"),
    tool_turn(
        "Edit", {"file_path": "unread.txt", "old_string": "a", "new_string": "b"}, match="[unread-edit]"
    ),
    text_turn("I need to read it first.", match="[unread-edit]"),
    tool_turn("KernelInspect", {"expression": "1+1"}, match="[inspect-scope]"),
    tool_turn(
        "KernelInspect", {"expression": "__import__('os').system('touch pwned.txt')"}, match="[inspect-scope]"
    ),
    tool_turn("KernelInspect", {"expression": "1+1"}, match="[inspect-scope]"),
    text_turn("Checked.", match="[inspect-scope]"),
    tool_turn("Bash", {"command": "npm run test -- -k x"}, match="[prefix-1]"),
    text_turn("Ran.", match="[prefix-1]"),
    tool_turn("Bash", {"command": "npm run test -- -k y"}, match="[prefix-2]"),
    text_turn("Ran again.", match="[prefix-2]"),
    tool_turn("Bash", {"command": "echo by-command > cmd.txt"}, match="[allow-cmd]"),
    tool_turn("Bash", {"command": "echo other > other.txt"}, match="[allow-cmd]"),
    text_turn("One ran, one was refused.", match="[allow-cmd]"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("approvals")
    prepare_workspace(path)
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(server: ReplayServer, workspace: Path) -> AsyncIterator[KernelSession]:
    async with goat_kernel(workspace, server.url, mode="default") as session:
        yield session


async def run_acting(kernel: KernelSession, code: str, act: Callable[[], Awaitable[None]]) -> CellResult:
    """Run a cell and act as the user while it waits; on a failed step, interrupt so nothing hangs."""
    cell = asyncio.ensure_future(kernel.execute(code, timeout=90))
    try:
        await act()
    except BaseException:
        await kernel.interrupt()
        await asyncio.wait_for(cell, 30)
        raise
    return await asyncio.wait_for(cell, 90)


def shown(result: CellResult) -> str:
    return result.text("text/plain") + result.text("text/markdown")


def tool_results(server: ReplayServer, tag: str) -> list[str]:
    """The tool results the model received in the last request of the cell tagged `tag`."""
    requests = [r for r in server.requests if tag in json.dumps(r["messages"])]
    return [str(m.get("content")) for m in requests[-1]["messages"] if m["role"] == "tool"]


async def test_allow_once_runs_the_command(kernel: KernelSession, workspace: Path) -> None:
    async def allow() -> None:
        button = await kernel.wait_widget("ButtonModel", description="Allow once")
        assert not (workspace / "allowed.txt").exists(), "nothing runs before the click"
        kernel.click(button)

    result = await run_acting(kernel, "%%goat --new\n[allow-once] write allowed.txt", allow)
    assert result.status == "ok", result.error
    assert (workspace / "allowed.txt").read_text() == "allowed\n"
    first_shown = [m["content"]["data"] for m in result.of_type("display_data")]
    assert any("application/vnd.jupyter.widget-view+json" in data for data in first_shown)
    assert "Allowed once by the user" in shown(result), "the prompt was replaced by a plain record"


async def test_deny_sends_feedback_typed_twice_and_runs_nothing(
    kernel: KernelSession, server: ReplayServer, workspace: Path
) -> None:
    async def deny() -> None:
        feedback = await kernel.wait_widget("TextModel", placeholder=FEEDBACK_PLACEHOLDER)
        # Two value changes in a row: the second is only sent once the kernel acknowledged the first.
        assert await kernel.update_widget(feedback, {"value": "n"})
        assert await kernel.update_widget(feedback, {"value": "not now, use a temp dir"})
        kernel.click(await kernel.wait_widget("ButtonModel", description="Deny"))

    result = await run_acting(kernel, "%%goat --new\n[deny] write denied.txt", deny)
    assert result.status == "ok", result.error
    assert not (workspace / "denied.txt").exists()
    [denial] = tool_results(server, "[deny]")
    assert denial.startswith("Error: ") and "denied" in denial
    assert "not now, use a temp dir" in denial
    # One record of the decision, in words for the user; the model's wording stays the model's.
    transcript = shown(result) + result.text("text/html")
    assert shown(result).count("Denied by the user") == 1 and result.text("text/html").count("Denied by") == 1
    assert "The user denied this" not in transcript and "Ask the user how to proceed" not in transcript
    assert "not now, use a temp dir" in transcript


async def test_always_allow_saves_the_rule_and_the_same_call_no_longer_asks(
    kernel: KernelSession, workspace: Path
) -> None:
    async def always() -> None:
        kernel.click(await kernel.wait_widget("ButtonModel", description="Always allow"))

    first = await run_acting(kernel, "%%goat --new\n[always-1] append", always)
    assert first.status == "ok", first.error
    settings = json.loads((workspace / ".goat" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash(echo always >> always.txt)"]
    assert settings["retry_base_delay_s"] == 0.01, "other keys are kept"

    prompts_before = len(kernel.widgets("ButtonModel", description="Always allow"))
    second = await kernel.execute("%%goat --new\n[always-2] append again", timeout=90)
    assert second.status == "ok", second.error
    assert (workspace / "always.txt").read_text() == "always\nalways\n"
    opened = [m for m in second.of_type("comm_open") if m["content"]["data"]["state"].get("description")]
    assert not opened and len(kernel.widgets("ButtonModel", description="Always allow")) == prompts_before


async def test_ask_user_question_delivers_the_clicked_option(
    kernel: KernelSession, server: ReplayServer
) -> None:
    async def choose() -> None:
        kernel.click(await kernel.wait_widget("ButtonModel", description="Blue"))

    result = await run_acting(kernel, "%%goat --new\n[question] pick a colour", choose)
    assert result.status == "ok", result.error
    [answer] = tool_results(server, "[question]")
    assert '"Which colour should the chart use?" → Blue' in answer
    assert "Blue it is." in shown(result)


async def test_exit_plan_mode_approve_switches_to_default(
    kernel: KernelSession, server: ReplayServer
) -> None:
    async def approve() -> None:
        kernel.click(await kernel.wait_widget("ButtonModel", description="Approve"))

    result = await run_acting(kernel, "%%goat --new --mode plan\n[plan] plan it", approve)
    assert result.status == "ok", result.error
    assert "# Plan" in result.text("text/markdown")
    [verdict] = tool_results(server, "[plan]")
    assert "approved" in verdict and "default" in verdict
    status = await kernel.execute("%goat status")
    assert "mode default" in status.stdout


async def test_dont_ask_mode_denies_without_asking(
    kernel: KernelSession, server: ReplayServer, workspace: Path
) -> None:
    result = await kernel.execute("%%goat --new --mode dontAsk\n[dont-ask] try it", timeout=90)
    assert result.status == "ok", result.error
    assert not result.of_type("comm_open"), "no prompt is shown in dontAsk mode"
    assert not (workspace / "dontask.txt").exists()
    [denial] = tool_results(server, "[dont-ask]")
    assert denial.startswith("Error: ")


async def test_interrupt_while_an_approval_waits_ends_the_cell(
    kernel: KernelSession, workspace: Path
) -> None:
    cell = asyncio.ensure_future(kernel.execute("%%goat --new\n[interrupt] wait for me", timeout=90))
    button = await kernel.wait_widget("ButtonModel", description="Allow once")
    await kernel.interrupt()
    result = await asyncio.wait_for(cell, 30)
    assert result.status == "error"
    assert "cancelled" in shown(result)
    closed = {m["content"]["comm_id"] for m in kernel.comm_log if m["header"]["msg_type"] == "comm_close"}
    assert button in closed
    kernel.click(button)  # a late click on the dead prompt changes nothing
    after = await kernel.execute("%%goat --new\n[after-interrupt] still there?", timeout=90)
    assert after.status == "ok", after.error
    assert "Still here." in shown(after)
    assert not (workspace / "interrupted.txt").exists()


async def test_headless_nbclient_run_denies_at_once(server: ReplayServer, tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("%load_ext goat_jupyter"),
            nbformat.v4.new_code_cell("%%goat\n[headless] write headless.txt"),
        ]
    )
    env = {**replay_kernel_env(tmp_path / "home", server.url, mode="default"), "PYTHONPATH": str(REPO_ROOT)}
    client = NotebookClient(
        notebook, timeout=90, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    await client.async_execute(env={**os.environ, **env})
    outputs = notebook.cells[1].outputs
    html = "\n".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert "nobody can answer an approval prompt" in html and "I could not run it." in _texts(outputs)
    assert not (tmp_path / "headless.txt").exists()
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    [denial] = tool_results(server, "[headless]")
    assert "denied" in denial and "permissions.allow" in denial and "--mode" in denial


VALUE_CELL = """
import asyncio, ipywidgets as w
from IPython.display import display
text = w.Text(value="a", placeholder="probe {n}")
choice = w.Dropdown(options=["a", "b", "c", "d"], value="a", description="probe {n}")
done = asyncio.get_running_loop().create_future()
button = w.Button(description="done {n}")
button.on_click(lambda _: done.set_result(None))
display(text, choice, button)
await done
print("final", text.value, choice.value)
"""


async def change_values_twice(kernel: KernelSession, n: int) -> tuple[bool, str]:
    """Type b then d into a Text and pick b then d in a Dropdown while an async cell awaits."""

    async def act() -> None:
        text = await kernel.wait_widget("TextModel", placeholder=f"probe {n}")
        choice = await kernel.wait_widget("DropdownModel", description=f"probe {n}")
        first = [
            await kernel.update_widget(text, {"value": "b"}),
            await kernel.update_widget(choice, {"index": 1}),
        ]
        second = [
            await kernel.update_widget(text, {"value": "d"}),
            await kernel.update_widget(choice, {"index": 3}),
        ]
        sent.extend(first + second)
        kernel.click(await kernel.wait_widget("ButtonModel", description=f"done {n}"))

    sent: list[bool] = []
    result = await run_acting(kernel, VALUE_CELL.format(n=n), act)
    assert result.status == "ok", result.error
    return all(sent), result.stdout.strip()


async def test_changed_text_and_dropdown_values_arrive_intact(tmp_path: Path) -> None:
    async with KernelSession(tmp_path) as kernel:
        # Without the fix the frontend never gets an idle status for the first change and holds
        # the second back: the kernel is left with the first value.
        assert await change_values_twice(kernel, 1) == (False, "final b b")
        loaded = await kernel.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.error
        assert await change_values_twice(kernel, 2) == (True, "final d d")


def _texts(outputs: list[Any]) -> str:
    return "\n".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")) for o in outputs)


async def test_a_call_that_would_fail_returns_its_error_without_asking(
    kernel: KernelSession, server: ReplayServer, workspace: Path
) -> None:
    (workspace / "unread.txt").write_text("a\n")
    widgets_before = len(kernel.widgets("ButtonModel"))
    result = await kernel.execute("%%goat --new\n[unread-edit] change unread.txt", timeout=90)
    assert result.status == "ok", result.error
    assert len(kernel.widgets("ButtonModel")) == widgets_before, "no approval was shown"
    shown_data = [m["content"]["data"] for m in result.of_type("display_data")]
    assert not any("application/vnd.jupyter.widget-view+json" in data for data in shown_data)
    [edit_result] = tool_results(server, "[unread-edit]")
    assert "has not been read" in edit_result
    transcript = shown(result) + result.text("text/html")
    assert "has not been read" in transcript and str(workspace) not in transcript, "relative paths for people"
    assert (workspace / "unread.txt").read_text() == "a\n"


def prompts_opened(kernel: KernelSession) -> int:
    """Approval prompts the kernel has shown so far (open or answered)."""
    return sum(
        1
        for m in kernel.comm_log
        if m["header"]["msg_type"] == "comm_open"
        and m["content"]["data"].get("state", {}).get("description") == "Allow once"
    )


async def test_allow_for_session_on_kernel_inspect_covers_that_expression_only(
    kernel: KernelSession, server: ReplayServer, workspace: Path
) -> None:
    before = prompts_opened(kernel)

    async def act() -> None:
        kernel.click(await kernel.wait_widget("ButtonModel", description="Allow for session"))
        await wait_for(lambda: prompts_opened(kernel) == before + 2, 60)
        kernel.click(await kernel.wait_widget("ButtonModel", description="Deny"))

    result = await run_acting(kernel, "%%goat --new\n[inspect-scope] inspect", act)
    assert result.status == "ok", result.error
    assert not (workspace / "pwned.txt").exists()
    assert prompts_opened(kernel) == before + 2, "the same expression ran again without a prompt"
    first, other, again = tool_results(server, "[inspect-scope]")
    assert "2" in first and "denied" in other and "2" in again
    assert "Allowed for this session (the rule KernelInspect(1+1))" in shown(result)


async def test_a_saved_bash_prefix_rule_lets_the_next_npm_run_test_run(
    kernel: KernelSession, server: ReplayServer, workspace: Path
) -> None:
    async def always() -> None:
        kernel.click(await kernel.wait_widget("ButtonModel", description="Always allow"))

    first = await run_acting(kernel, "%%goat --new\n[prefix-1] test", always)
    assert first.status == "ok", first.error
    settings = json.loads((workspace / ".goat" / "settings.json").read_text())
    assert "Bash(npm run test:*)" in settings["permissions"]["allow"]
    before = prompts_opened(kernel)
    second = await kernel.execute("%%goat --new\n[prefix-2] test again", timeout=90)
    assert second.status == "ok", second.error
    assert prompts_opened(kernel) == before
    [ran] = tool_results(server, "[prefix-2]")
    assert "denied" not in ran and "PERMISSION" not in ran


async def test_goat_allow_allows_for_this_session_only_what_it_names(
    kernel: KernelSession, server: ReplayServer, workspace: Path
) -> None:
    await kernel.execute("%goat reset")
    bad = await kernel.execute('%goat allow "Bash(echo x" "Write(./ok.txt)"')
    assert "Nothing was allowed" in bad.stdout, "one broken rule: none of them is added"
    listed = await kernel.execute("%goat allow")
    assert "Allowed for this session: nothing yet" in listed.stdout
    added = await kernel.execute('%goat allow "Bash(echo by-command > cmd.txt)"')
    assert "Allowed for this session: Bash(echo by-command > cmd.txt)" in added.stdout

    # The rule lets its command run unasked; another command still asks, and is denied here.
    async def deny_the_other() -> None:
        prompt = await kernel.wait_widget("ButtonModel", description="Deny")
        assert (workspace / "cmd.txt").read_text() == "by-command\n", "the allowed one ran unasked"
        kernel.click(prompt)

    result = await run_acting(kernel, "%%goat\n[allow-cmd] write", deny_the_other)
    assert result.status == "ok", result.error
    assert not (workspace / "other.txt").exists()
    results = tool_results(server, "[allow-cmd]")
    assert not results[0].startswith("Error") and results[1].startswith("Error: ")
