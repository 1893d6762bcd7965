"""CellRenderer: displays and coalesced updates, seen through a recording display sink and a real kernel."""

from __future__ import annotations

import asyncio
import logging
import os
import queue
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from goat_jupyter.tools.base import Attachment, ToolOutput
from goat_jupyter.tools.events import (
    Event,
    Notice,
    RunFinished,
    SubagentStarted,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from goat_jupyter.ui import CellRenderer, make_renderer, style
from goat_jupyter.ui.safe.markdown import NO_MATH_DIV, NO_MATH_OPEN

ROOT = Path(__file__).resolve().parents[2]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@dataclass
class Shown:
    """One display in the fake cell: what was first shown, then each update."""

    bundles: list[Any]
    raw: bool
    display_id: bool
    metadata: list[dict[str, Any] | None] = field(default_factory=lambda: list[dict[str, Any] | None]())

    @property
    def final(self) -> Any:
        return self.bundles[-1]

    @property
    def transcript(self) -> str | None:
        """The text a transcript export prints for this display now (None: not one of goat's blocks)."""
        last = self.metadata[-1] if self.metadata else None
        return None if last is None else last["goat"]["transcript"]


@dataclass
class RecordingDisplay:
    """Stands in for IPython's display: records displays and their updates in order."""

    shown: list[Shown] = field(default_factory=lambda: list[Shown]())
    updates: int = 0
    fail_updates: bool = False

    def __call__(
        self,
        obj: Any,
        /,
        *,
        raw: bool = False,
        display_id: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> RecordedHandle:
        self.shown.append(Shown([obj], raw, display_id, [metadata]))
        return RecordedHandle(self, self.shown[-1])

    def kinds(self) -> list[str]:
        """What stays visible: a status line hidden at the end leaves an empty output."""
        return [kind_of(s.final) for s in self.shown if s.final != {"text/plain": ""}]


@dataclass
class RecordedHandle:
    sink: RecordingDisplay
    target: Shown

    def update(self, obj: Any, /, *, raw: bool = False, metadata: dict[str, Any] | None = None) -> None:
        if self.sink.fail_updates:
            raise RuntimeError("the frontend went away")
        assert raw
        self.target.bundles.append(obj)
        self.target.metadata.append(metadata)
        self.sink.updates += 1


@dataclass
class FakeClock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def kind_of(bundle: Any) -> str:
    if not isinstance(bundle, dict):
        return "widget"
    if "text/markdown" in bundle:
        return "text"
    plain: str = bundle["text/plain"]
    if plain.startswith("goat ·"):
        return "header"
    if plain.startswith("⏺"):
        return "card"
    if plain.startswith("Done ·"):
        return "footer"
    return "other"


def run(events: list[Event], *, step: float = 0.01) -> RecordingDisplay:
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("prompt", model="gpt-4o-mini", mode="default")
    for event in events:
        clock.now += step
        renderer.handle(event)
    renderer.close()
    return sink


def test_blocks_appear_in_event_order_and_text_after_a_card_is_a_new_block():
    sink = run(
        [
            TextDelta("Let me look."),
            ToolStarted("c1", "Bash", "List", {"command": "ls"}),
            ToolFinished("c1", "Bash", ToolOutput("a.csv"), 0.1),
            TextDelta("\n\n"),
            TextDelta("Found a.csv."),
            Notice("Retrying", "warning"),
            RunFinished(2, 100, 20, None, 1.0, "end_turn"),
        ]
    )
    assert sink.kinds() == ["header", "text", "card", "text", "other", "footer"]
    assert all(s.raw and s.display_id for s in sink.shown)
    assert sink.shown[1].final["text/markdown"] == NO_MATH_OPEN + "Let me look."
    assert sink.shown[3].final["text/markdown"] == NO_MATH_OPEN + "Found a.csv."
    assert "⚠ Retrying" in sink.shown[4].final["text/html"]


def test_many_deltas_make_few_updates_and_the_final_text_is_complete():
    words = [f"word{i} " for i in range(1000)]
    sink = run([TextDelta(w) for w in words], step=0.001)  # 1000 deltas over one second
    assert len(sink.shown) == 2
    assert 10 <= sink.updates <= 21
    assert sink.shown[1].final["text/markdown"] == NO_MATH_OPEN + "".join(words)
    assert sink.shown[1].final["text/plain"] == "".join(words)


def test_without_a_loop_updates_inside_the_interval_wait_for_close():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    for i in range(100):
        renderer.handle(TextDelta(f"{i},"))
    assert sink.updates == 0 and sink.shown[0].final["text/plain"] == "0,"
    renderer.close()
    assert sink.updates == 1
    assert sink.shown[0].final["text/plain"] == "".join(f"{i}," for i in range(100))


async def test_with_a_running_loop_the_pending_update_is_sent_by_a_timer():
    sink = RecordingDisplay()
    renderer = CellRenderer(sink, FakeClock())
    for i in range(100):
        renderer.handle(TextDelta(f"{i},"))
    assert sink.updates == 0
    await asyncio.sleep(0.2)  # the flush timer (due after the 50 ms interval) has run by now
    assert sink.updates == 1
    assert sink.shown[0].final["text/plain"] == "".join(f"{i}," for i in range(100))
    renderer.close()
    assert sink.updates == 1


def test_bash_output_streams_into_its_card_coalesced_and_tail_capped():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.handle(ToolStarted("c1", "Bash", "Count", {"command": "seq 300"}))
    for i in range(300):
        renderer.handle(ToolProgress("c1", output=f"{i}\n"))
    assert sink.updates == 0
    clock.now += 0.06
    renderer.handle(ToolProgress("c1", title="Counting"))
    live = sink.shown[0].final
    assert sink.updates == 1
    assert "Counting" in live["text/html"] and "… 100 earlier lines not shown" in live["text/html"]
    assert "\n299\n" in live["text/html"] and ">99\n" not in live["text/html"]
    assert style.STATUS_COLOR["running"] in live["text/html"]
    renderer.handle(ToolFinished("c1", "Bash", ToolOutput("0\n1\n…\n299", title="Count"), 1.25))
    final = sink.shown[0].final
    assert (
        "✓" in final["text/html"]
        and "1.25s" in final["text/html"]
        and "earlier lines" not in final["text/html"]
    )
    assert final["text/plain"].startswith("⏺ Bash(seq 300)\n  ⎿ ✓ 1.25s · exit 0, 4 lines\n     0\n")


def test_model_text_and_tool_output_are_escaped():
    attack = "<script>alert(1)</script>"
    sink = run(
        [
            TextDelta(f"Look: {attack}"),
            ToolStarted("c1", "Bash", f"Run {attack}", {"command": f"echo '{attack}'"}),
            ToolFinished("c1", "Bash", ToolOutput(attack), 0.1),
        ]
    )
    text, card = sink.shown[1].final, sink.shown[2].final
    assert text["text/markdown"] == NO_MATH_OPEN + "Look: &lt;script>alert(1)&lt;/script>"
    assert text["text/plain"] == f"Look: {attack}"
    assert "<script" not in card["text/html"]
    assert card["text/html"].count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2  # argument + output


def test_edit_card_shows_a_coloured_diff():
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-x = 1\n+x = 2"
    output = ToolOutput("Updated /w/f.py", metadata={"diff": diff})
    sink = run(
        [
            ToolStarted(
                "c1", "Edit", "Edit f.py", {"file_path": "/w/f.py", "old_string": "1", "new_string": "2"}
            ),
            ToolFinished("c1", "Edit", output, 0.02),
        ]
    )
    card = sink.shown[1].final["text/html"]
    assert f'<span style="{style.DIFF_DEL}">-x = 1</span>' in card
    assert f'<span style="{style.DIFF_ADD}">+x = 2</span>' in card
    assert "/w/f.py" in card


def test_images_are_shown_inline_as_data_uris():
    output = ToolOutput("Image /w/p.png", attachments=[Attachment("image/png", PNG, "a pixel")])
    sink = run(
        [
            ToolStarted("c1", "Read", "Read p.png", {"file_path": "/w/p.png"}),
            ToolFinished("c1", "Read", output, 0.01),
        ]
    )
    assert f'<img src="data:image/png;base64,{PNG}"' in sink.shown[1].final["text/html"]


def test_todowrite_shows_a_checklist():
    todos = [
        {"content": "Load", "status": "completed", "activeForm": "Loading"},
        {"content": "Plot", "status": "in_progress", "activeForm": "Plotting"},
        {"content": "Report", "status": "pending", "activeForm": "Reporting"},
    ]
    sink = run(
        [
            ToolStarted("c1", "TodoWrite", "Update todos (3 items)", {"todos": todos}),
            ToolFinished("c1", "TodoWrite", ToolOutput("Todos updated.", metadata={"todos": todos}), 0.0),
        ]
    )
    card = sink.shown[1].final
    assert "☑" in card["text/html"] and "◼" in card["text/html"] and "☐ Report" in card["text/html"]
    assert f'<span style="{style.TODO_ACTIVE}">Plotting</span>' in card["text/html"]
    assert "☒ Load" in card["text/plain"]


def test_footer_reports_turns_tokens_cost_and_time():
    sink = run([TurnUsage(1, 900, 100, 0.002), RunFinished(4, 12_000, 345, 0.01234, 65.0, "max_turns")])
    footer = sink.shown[-1].final["text/html"]
    assert "4 turns" in footer and "12,345 tokens" in footer and "$0.012" in footer and "1m 05s" in footer
    assert "max turns" in footer


def edit(call_id: str, mode: str, cell_id: str, number: int | None, *, error: bool = False) -> ToolFinished:
    meta: dict[str, Any] = {"cell_id": cell_id, "edit_mode": mode, "cell_type": "code"}
    if number is not None:
        meta["cell_number"] = number
    return ToolFinished(call_id, "NotebookEdit", ToolOutput("done", metadata=meta, is_error=error), 0.0)


def test_footer_links_to_the_cells_the_run_made():
    hostile = '"><script>x</script>'
    events: list[Event] = [
        edit("a", "insert", "id-new", 3),
        edit("b", "replace", "id-old", 1),
        edit("c", "replace", "id-new", 3),  # changed again: still "inserted", listed once
        edit("d", "insert", "id-gone", 4),
        edit("e", "delete", "id-gone", None),  # deleted later in the run: not listed
        edit("f", "replace", "id-failed", 5, error=True),
        edit("g", "insert", hostile, None),
        ToolFinished("h", "Write", ToolOutput("ok", metadata={"cell_id": "id-write"}), 0.0),
        RunFinished(1, 10, 5, None, 1.0, "end_turn"),
    ]
    footer = sink_footer(events)
    assert footer["text/plain"].endswith(f" · inserted cell 3 · changed cell 1 · inserted cell {hostile}")
    html = footer["text/html"]
    assert '<a href="#goat-cell=id-new" data-goat-cell="id-new"' in html and ">cell 3</a>" in html
    assert 'data-goat-cell="id-old"' in html and "id-gone" not in html and "id-failed" not in html
    assert "<script>" not in html and "id-write" not in html


def test_a_run_that_wrote_no_cell_has_no_links():
    footer = sink_footer([RunFinished(1, 10, 5, None, 1.0, "end_turn")])
    assert "goat-cell" not in footer["text/html"] and " · inserted" not in footer["text/plain"]


def sink_footer(events: list[Event]) -> Any:
    return run(events).shown[-1].final


def test_errors_are_red_and_unfinished_cards_end_as_stopped():
    sink = run(
        [
            ToolFinished(
                "x", "Nope", ToolOutput("Error: There is no tool named 'Nope'.", is_error=True), 0.0
            ),
            ToolStarted("c2", "Bash", "Sleep", {"command": "sleep 60"}),
        ]
    )
    failed, stopped = sink.shown[1].final, sink.shown[2].final
    assert style.PRE_ERROR in failed["text/html"] and "✗" in failed["text/html"]
    assert "⊘" in stopped["text/html"] and "stopped after" in stopped["text/plain"]


def test_subagent_events_nest_inside_the_agent_card():
    sink = run(
        [
            ToolStarted("c1", "Agent", "Explore", {"description": "Explore", "prompt": "go"}),
            SubagentStarted("c1", agent_id="sub-1"),
            TextDelta("Scanning <dirs>", agent_id="sub-1"),
            ToolStarted("s1", "Glob", "Glob", {"pattern": "*.py"}, agent_id="sub-1"),
            ToolFinished("s1", "Glob", ToolOutput("/w/a.py"), 0.01, agent_id="sub-1"),
            ToolFinished("c1", "Agent", ToolOutput("One file."), 2.0),
            TextDelta("orphan step", agent_id="sub-2"),
        ]
    )
    assert sink.kinds() == ["header", "card", "other"]
    card = sink.shown[1].final["text/html"]
    assert "<details><summary" in card and "Subagent sub-1 · 1 tool calls" in card
    assert "Scanning &lt;dirs&gt;" in card
    # The subagent's call reads like the parent's own rows: name, argument, result, time.
    glob_row = next(row for row in card.split("<div>") if "<b>Glob</b>" in row)
    assert "*.py" in glob_row and "0.01s" in glob_row and "Glob(" not in glob_row, glob_row
    assert "Subagent sub-2" in sink.shown[2].final["text/html"]


def test_subagent_rows_name_files_relative_to_the_workspace(tmp_path: Path) -> None:
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.base = str(tmp_path)
    renderer.start("prompt", model="m", mode="default")
    for event in [
        ToolStarted("c1", "Agent", "Explore", {"description": "Explore", "prompt": "go"}),
        SubagentStarted("c1", agent_id="sub-1"),
        ToolStarted("s1", "Read", "Read", {"file_path": str(tmp_path / "data" / "a.csv")}, agent_id="sub-1"),
        ToolFinished("s1", "Read", ToolOutput("x\ny\n", is_error=True), 0.02, agent_id="sub-1"),
        ToolFinished("c1", "Agent", ToolOutput("Done."), 1.0),
    ]:
        renderer.handle(event)
    renderer.close()
    card = sink.shown[1].final["text/html"]
    assert "data/a.csv" in card and str(tmp_path) not in card


def test_parallel_subagents_each_nest_in_their_own_agent_card():
    sink = run(
        [
            ToolStarted("c1", "Agent", "Left", {"description": "Left", "prompt": "go"}),
            ToolStarted("c2", "Agent", "Right", {"description": "Right", "prompt": "go"}),
            SubagentStarted("c1", agent_id="gp-1"),
            SubagentStarted("c2", agent_id="gp-2"),
            TextDelta("left text", agent_id="gp-1"),
            TextDelta("right text", agent_id="gp-2"),
            ToolFinished("c2", "Agent", ToolOutput("right done"), 1.0),
            ToolFinished("c1", "Agent", ToolOutput("left done"), 1.5),
        ]
    )
    assert sink.kinds() == ["header", "card", "card"]
    left, right = sink.shown[1].final["text/html"], sink.shown[2].final["text/html"]
    assert "Subagent gp-1" in left and "left text" in left and "right text" not in left
    assert "Subagent gp-2" in right and "right text" in right and "left text" not in right


def test_a_failing_display_never_breaks_the_run(caplog: pytest.LogCaptureFixture):
    sink, clock = RecordingDisplay(fail_updates=True), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.handle(TextDelta("a"))
    clock.now += 1
    with caplog.at_level(logging.ERROR):
        renderer.handle(TextDelta("b"))
        renderer.close()
    assert "could not be updated" in caplog.text
    renderer.handle(TextDelta("c"))  # still usable


def test_widgets_are_placed_in_transcript_order():
    sink = RecordingDisplay()
    renderer = CellRenderer(sink, FakeClock())
    renderer.handle(TextDelta("Before"))
    widget = object()
    renderer.show(widget)
    renderer.handle(TextDelta("After"))
    renderer.close()
    assert sink.kinds() == ["text", "widget", "text"]
    assert sink.shown[1].final is widget and not sink.shown[1].raw


def test_cell_renderer_on_request():
    assert isinstance(make_renderer("cell"), CellRenderer)


KERNEL_CODE = """
import asyncio
from goat_jupyter.tools.events import RunFinished, TextDelta
from goat_jupyter.ui import make_renderer
renderer = make_renderer("auto")
print(type(renderer).__name__)
renderer.start("p", model="m", mode="default")
for i in range(200):
    renderer.handle(TextDelta(f"w{i} "))
    await asyncio.sleep(0.002)
renderer.handle(RunFinished(1, 10, 5, None, 0.5, "end_turn"))
renderer.close()
"""


def test_in_a_real_kernel_updates_reach_the_cell_coalesced():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env)
    try:
        msg_id = client.execute(KERNEL_CODE)
        messages = collect_iopub(client, msg_id)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    stdout = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    assert stdout.strip() == "CellRenderer", [m for m in messages if m["msg_type"] == "error"]
    displays = [m["content"] for m in messages if m["msg_type"] == "display_data"]
    assert [kind_of(d["data"]) for d in displays] == ["header", "text", "footer"]
    text_id = displays[1]["transient"]["display_id"]
    updates = [m["content"] for m in messages if m["msg_type"] == "update_display_data"]
    assert updates and all(u["transient"]["display_id"] == text_id for u in updates)
    assert len(updates) < 100
    assert updates[-1]["data"]["text/plain"] == "".join(f"w{i} " for i in range(200))


def collect_iopub(client: Any, msg_id: str) -> list[dict[str, Any]]:
    """Every iopub message the execution produced, until the kernel reports idle for it."""
    messages: list[dict[str, Any]] = []
    while True:
        try:
            message = client.get_iopub_msg(timeout=60)
        except queue.Empty:
            raise AssertionError(f"kernel went quiet; got {messages}") from None
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return messages
        messages.append(message)


async def test_status_line_shows_while_quiet_and_goes_when_something_arrives():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("prompt", model="m", mode="default")
    clock.now += 3  # the model has not answered for 3 s
    for _ in range(100):
        if any("Stop to interrupt" in str(s.final.get("text/plain", "")) for s in sink.shown):
            break
        await asyncio.sleep(0.05)
    [status] = [s for s in sink.shown if "Stop to interrupt" in str(s.final.get("text/plain", ""))]
    assert "Working · 3s" in status.final["text/plain"] and "■ Stop to interrupt" in status.final["text/html"]
    renderer.handle(TextDelta("Here is the answer."))
    assert status.final == {"text/plain": ""}, "the status line goes when the answer starts"
    renderer.handle(RunFinished(1, 10, 5, None, 3.0, "end_turn"))
    renderer.close()
    assert all("Stop to interrupt" not in str(s.final) for s in sink.shown)


async def test_status_line_shows_the_spend_against_the_budget():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("prompt", model="m", mode="default")
    renderer.handle(TurnUsage(1, 900, 20, 0.12, budget="$0.12 of $0.50 budget"))
    clock.now += 3
    for _ in range(100):
        if any("Stop to interrupt" in str(s.final.get("text/plain", "")) for s in sink.shown):
            break
        await asyncio.sleep(0.05)
    [status] = [s for s in sink.shown if "Stop to interrupt" in str(s.final.get("text/plain", ""))]
    assert "$0.12 of $0.50 budget · ■ Stop to interrupt" in status.final["text/plain"]
    renderer.handle(RunFinished(1, 900, 20, 0.12, 3.0, "budget"))
    renderer.close()


async def quiet_status(renderer: CellRenderer, sink: RecordingDisplay, clock: FakeClock) -> Shown:
    """Let 3 quiet seconds pass and return the status line that shows."""
    clock.now += 3
    for _ in range(100):
        if any("Stop to interrupt" in str(s.final.get("text/plain", "")) for s in sink.shown):
            break
        await asyncio.sleep(0.05)
    [status] = [s for s in sink.shown if "Stop to interrupt" in str(s.final.get("text/plain", ""))]
    return status


async def test_status_line_shows_the_tokens_and_cost_so_far_in_plain_text():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("prompt", model="m", mode="default")
    renderer.handle(TurnUsage(1, 1_200, 34, 0.0123))
    status = await quiet_status(renderer, sink, clock)
    assert "Working · 3s · 1,234 tokens · $0.012 · ■ Stop to interrupt" in status.final["text/plain"]
    assert "1,234 tokens · $0.012 ·" in status.final["text/html"], "a dollar sign stays a dollar sign"

    renderer.handle(TextDelta("x" * 400))  # a second turn streams: ~100 tokens not yet reported
    renderer.handle(TurnUsage(2, 1_300, 100, 0.01, agent_id="helper"))  # a subagent's turn counts too
    renderer.handle(TextDelta("y" * 40))
    status = await quiet_status(renderer, sink, clock)
    assert "· ~2,644 tokens · $0.022 ·" in status.final["text/plain"], status.final["text/plain"]
    renderer.handle(RunFinished(2, 2_500, 134, 0.0223, 6.0, "end_turn"))
    renderer.close()


async def test_status_line_leaves_out_a_cost_it_does_not_know():
    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("prompt", model="m", mode="default")
    renderer.handle(TurnUsage(1, 500, 20, 0.5))
    renderer.handle(TurnUsage(2, 500, 20, None))  # an unpriced turn: the sum is unknown from here on
    renderer.handle(TurnUsage(3, 500, 20, 0.5))
    status = await quiet_status(renderer, sink, clock)
    assert "Working · 3s · 1,560 tokens · ■ Stop to interrupt" in status.final["text/plain"]
    assert "$" not in status.final["text/plain"]
    renderer.close()


def test_todo_write_updates_one_checklist_in_place():
    def todos(*statuses: str) -> ToolOutput:
        items = [
            {"content": f"step {i}", "status": st, "activeForm": f"doing {i}"}
            for i, st in enumerate(statuses)
        ]
        return ToolOutput("ok", metadata={"todos": items})

    sink = run(
        [
            ToolStarted("t1", "TodoWrite", "TodoWrite", {"todos": []}),
            ToolFinished("t1", "TodoWrite", todos("in_progress", "pending"), 0.01),
            TextDelta("working"),
            ToolStarted("t2", "TodoWrite", "TodoWrite", {"todos": []}),
            ToolFinished("t2", "TodoWrite", todos("completed", "in_progress"), 0.01),
        ]
    )
    checklists = [
        s for s in sink.shown if "step 0" in str(s.final.get("text/plain", "")) or "doing 0" in str(s.final)
    ]
    assert len(checklists) == 1
    assert checklists[0].final["text/plain"] == "☒ step 0\n◼ doing 1"


def test_a_finished_call_is_one_line_with_its_details_folded_and_the_wait_apart():
    sink = run(
        [
            ToolStarted("c1", "Read", "Read", {"file_path": f"{os.getcwd()}/data/sales.csv"}),
            ToolFinished(
                "c1",
                "Read",
                ToolOutput(
                    "1\ta\n2\tb\n\n(call Read with offset=3)", summary="lines 1-2 of 9", display="1\ta\n2\tb"
                ),
                12.5,
                waited_s=12.4,
            ),
        ]
    )
    [card] = [s.final for s in sink.shown if kind_of(s.final) == "card"]
    html = card["text/html"]
    assert html.removeprefix(NO_MATH_DIV).startswith("<details") and "<details open" not in html
    assert "data/sales.csv" in html and os.getcwd() not in html
    assert "lines 1-2 of 9" in html and "waited 12.4s for you" in html and "0.10s" in html
    assert "offset" not in html and "offset" not in card["text/plain"]


def test_a_failed_run_says_what_to_check_above_the_footer():
    from goat_jupyter.ui.failure import explain, failure_bundle

    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.start("prompt", model="openai/gpt-4o", mode="default")
    renderer.handle(RunFinished(1, 10, 0, None, 1.0, "error"))
    error = (
        "LLMError: The model call failed: AuthenticationError: litellm.AuthenticationError: bad key "
        + "x" * 300
    )
    renderer.add_bundle(failure_bundle(explain(error, "openai/gpt-4o"), error))
    renderer.close()
    texts = [str(s.final.get("text/plain", "")) for s in sink.shown]
    assert texts[-1].startswith("Stopped after an error"), "the footer comes last"
    failure = sink.shown[-2].final
    assert failure["text/plain"].startswith(
        "✗ The provider rejected the API key for openai/gpt-4o: check OPENAI_API_KEY"
    )
    assert "%goat config model=" in failure["text/html"] and "<details>" in failure["text/html"]
    assert error in failure["text/plain"], "the full text is kept (folded in HTML)"


def test_a_run_is_live_from_its_first_output_and_the_line_leaves_no_trace() -> None:
    from goat_jupyter.tools.events import Activity

    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock)
    renderer.begin()
    [first] = sink.shown
    assert "Starting · 0s · ■ Stop to interrupt" in first.final["text/plain"]
    clock.now += 2.0
    renderer.start("prompt", model="gpt-4o-mini", mode="default")
    assert first.final["text/plain"].startswith("goat · model gpt-4o-mini"), (
        "the header takes the first place"
    )
    assert "Working · 2s" in sink.shown[-1].final["text/plain"], "the line moved below the header at once"
    renderer.handle(Activity("Starting the model client (first run in this kernel)"))
    assert (
        sink.shown[-1]
        .final["text/plain"]
        .startswith("Starting the model client (first run in this kernel) · 2s")
    )
    renderer.handle(Activity("a subagent's wait", agent_id="sub-1"))
    assert "subagent" not in str(sink.shown[-1].final)
    renderer.handle(TextDelta("Hello."))
    renderer.handle(RunFinished(1, 10, 2, None, 2.0, "end_turn"))
    renderer.close()
    saved = "\n".join(str(s.final.get("text/plain", "")) for s in sink.shown)
    assert "Starting the model client" not in saved and "Stop to interrupt" not in saved
    assert sink.kinds() == ["header", "text", "footer"]


@pytest.mark.parametrize("split_by_notice", [False, True])
def test_a_retried_attempts_text_is_taken_back_and_earlier_turns_stay(split_by_notice: bool) -> None:
    from goat_jupyter.tools.events import TextRetracted

    sink, clock = RecordingDisplay(), FakeClock()
    renderer = CellRenderer(sink, clock, interval_s=0)
    renderer.start("prompt", model="m", mode="default")
    renderer.handle(TextDelta("Earlier turn."))
    renderer.handle(TurnUsage(1, 10, 3, None))
    renderer.handle(TextDelta("\n\nLet me "))
    if split_by_notice:
        renderer.handle(Notice("No response from the model for 40 s…", "warning"))
    renderer.handle(TextDelta("think"))
    renderer.handle(TextRetracted(len("\n\nLet me think") + 50))  # more than was shown: capped
    renderer.handle(TextDelta("Let me think. Done."))
    renderer.close()
    markdown = "".join(str(s.final.get("text/markdown", "")) for s in sink.shown)
    assert markdown.count("Let me") == 1 and "Earlier turn." in markdown and "Done." in markdown


def test_a_refusal_by_design_reads_as_information_not_a_red_failure() -> None:
    """Issue 33 point 13: tutor style declining to write into a student's cell is not an error."""
    from goat_jupyter.errors import DeclinedError, PermissionDeniedError
    from goat_jupyter.tools.runner import error_output

    declined = error_output(DeclinedError("Not changed: cell 2 was written by the student."))
    failed = error_output(PermissionDeniedError("Not allowed."))
    assert declined.declined and declined.is_error and not failed.declined
    args = {"notebook_path": "l.ipynb", "cell_id": "cell-1", "new_source": "x"}
    sink = run(
        [
            ToolStarted("c1", "NotebookEdit", "Edit cell 2", args),
            ToolFinished("c1", "NotebookEdit", declined, 0.01),
            ToolStarted("c2", "NotebookEdit", "Edit cell 2", args),
            ToolFinished("c2", "NotebookEdit", failed, 0.01),
        ]
    )
    calm, red = sink.shown[1].final, sink.shown[2].final
    assert "ℹ" in calm["text/html"] and style.RED not in calm["text/html"]
    assert style.PRE_ERROR not in calm["text/html"] and "written by the student" in calm["text/html"]
    assert "✗" in red["text/html"] and style.RED in red["text/html"]
    assert "ℹ" in calm["text/plain"] and "✗" not in calm["text/plain"]
