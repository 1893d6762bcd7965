"""PlainRenderer: the transcript as text in a terminal or captured stdout."""

from __future__ import annotations

import io

from goat_jupyter.tools.base import ToolOutput
from goat_jupyter.tools.events import (
    Event,
    Notice,
    RunFinished,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from goat_jupyter.ui import PlainRenderer, make_renderer

TODOS = [
    {"content": "Load the data", "status": "completed", "activeForm": "Loading the data"},
    {"content": "Plot the months", "status": "in_progress", "activeForm": "Plotting the months"},
    {"content": "Write the report", "status": "pending", "activeForm": "Writing the report"},
]


def render(events: list[Event]) -> str:
    out = io.StringIO()
    renderer = PlainRenderer(out)
    renderer.start("Find the worst months", model="gpt-4o-mini", mode="default")
    for event in events:
        renderer.handle(event)
    renderer.close()
    return out.getvalue()


def test_a_realistic_run_reads_like_a_terminal_transcript():
    listing = "\n".join(f"file{i}.csv" for i in range(14))
    events: list[Event] = [
        *(TextDelta(part) for part in ["I'll ", "list the ", "files first.", "\n\n"]),
        ToolStarted("c1", "Bash", "List files", {"command": "ls -1", "description": "List files"}),
        ToolProgress("c1", output="file0.csv\nfile1.csv\n"),
        ToolProgress("c1", output="file2.csv\n"),
        ToolFinished("c1", "Bash", ToolOutput(listing, title="List files"), 0.123),
        TurnUsage(1, 1000, 50, 0.001),
        TextDelta("Now the missing one."),
        ToolStarted("c2", "Read", "Read nope.csv", {"file_path": "/w/nope.csv"}),
        ToolFinished("c2", "Read", ToolOutput("Error: File not found: /w/nope.csv", is_error=True), 0.004),
        ToolStarted("c3", "TodoWrite", "Update todos (3 items)", {"todos": TODOS}),
        ToolFinished("c3", "TodoWrite", ToolOutput("Todos updated.", metadata={"todos": TODOS}), 0.001),
        Notice("Rate limited; retrying in 2 s", "warning"),
        TextDelta("The worst month is **March**."),
        RunFinished(3, 12_000, 345, 0.01234, 4.2, "end_turn"),
    ]
    assert render(events) == (
        "goat · model gpt-4o-mini · mode default\n"
        "\n"
        "I'll list the files first.\n"
        "\n"
        "⏺ Bash(ls -1)\n"
        "  ⎿ ✓ 0.12s  file0.csv\n"
        "     file1.csv\n"
        "     file2.csv\n"
        "     file3.csv\n"
        "     file4.csv\n"
        "     file5.csv\n"
        "     file6.csv\n"
        "     file7.csv\n"
        "     file8.csv\n"
        "     file9.csv\n"
        "     … +4 lines\n"
        "\n"
        "Now the missing one.\n"
        "\n"
        "⏺ Read(/w/nope.csv)\n"
        "  ⎿ ✗ 0.00s  Error: File not found: /w/nope.csv\n"
        "\n"
        "⏺ TodoWrite(3 items)\n"
        "  ⎿ ✓ 0.00s  ☒ Load the data\n"
        "     ◼ Plotting the months\n"
        "     ☐ Write the report\n"
        "\n"
        "⚠ Rate limited; retrying in 2 s\n"
        "\n"
        "The worst month is **March**.\n"
        "\n"
        "── Done · 3 turns · 12,345 tokens (12,000 in, 345 out) · $0.012 · 4.20s\n"
    )


def test_text_is_written_as_it_streams():
    out = io.StringIO()
    renderer = PlainRenderer(out)
    renderer.handle(TextDelta("Hel"))
    assert out.getvalue() == "Hel"
    renderer.handle(TextDelta("lo"))
    assert out.getvalue() == "Hello"


def test_concurrent_calls_repeat_their_header_when_results_interleave():
    text = render(
        [
            ToolStarted("a", "Read", "Read a", {"file_path": "/w/a"}),
            ToolStarted("b", "Read", "Read b", {"file_path": "/w/b"}),
            ToolFinished("a", "Read", ToolOutput("1\tA"), 0.01),
            ToolFinished("b", "Read", ToolOutput("1\tB"), 0.02),
        ]
    )
    assert "⏺ Read(/w/a)\n  ⎿ ✓ 0.01s  1\tA\n" in text
    assert "⏺ Read(/w/b)\n  ⎿ ✓ 0.02s  1\tB\n" in text


def test_subagent_steps_are_indented_under_the_agent_call():
    text = render(
        [
            ToolStarted("c1", "Agent", "Explore", {"description": "Explore the repo", "prompt": "look"}),
            TextDelta("Scanning\nthe ", agent_id="s1"),
            TextDelta("tree", agent_id="s1"),
            ToolStarted("s-1", "Glob", "Glob", {"pattern": "**/*.py"}, agent_id="s1"),
            ToolFinished("s-1", "Glob", ToolOutput("/w/a.py"), 0.01, agent_id="s1"),
            ToolFinished("c1", "Agent", ToolOutput("Found one file."), 1.5),
        ]
    )
    assert text.endswith(
        "⏺ Agent(Explore the repo)\n"
        "     │ [s1]\n"
        "     │ Scanning\n"
        "     │ the tree\n"
        "     │ ⏺ Glob(**/*.py) ✓ 0.01s\n"
        "  ⎿ ✓ 1.50s  Found one file.\n"
    )


def test_interleaved_subagents_are_named_whenever_their_lines_switch():
    text = render(
        [
            ToolStarted("c1", "Agent", "Left", {"description": "Left", "prompt": "go"}),
            ToolStarted("c2", "Agent", "Right", {"description": "Right", "prompt": "go"}),
            TextDelta("left one\n", agent_id="gp-1"),
            TextDelta("right one\n", agent_id="gp-2"),
            TextDelta("left two\n", agent_id="gp-1"),
        ]
    )
    assert (
        "     │ [gp-1]\n     │ left one\n     │ [gp-2]\n     │ right one\n     │ [gp-1]\n     │ left two\n"
    ) in text


def test_unfinished_calls_are_reported_as_stopped_on_close():
    text = render([ToolStarted("c1", "Bash", "Sleep", {"command": "sleep 60"}), TextDelta("")])
    assert text.endswith("⏺ Bash(sleep 60)\n  ⎿ ⊘ stopped before it finished\n")


def test_odd_event_orders_never_raise():
    text = render(
        [
            ToolProgress("ghost", output="x"),
            ToolFinished("ghost", "Mystery", ToolOutput("done"), 0.1),
            RunFinished(0, 0, 0, None, 0.0, "error"),
        ]
    )
    assert "⏺ Mystery\n  ⎿ ✓ 0.10s  done\n" in text
    assert text.endswith("── Stopped after an error · 0 turns · 0 tokens (0 in, 0 out) · 0.00s\n")


def test_auto_renderer_outside_a_kernel_is_plain():
    assert isinstance(make_renderer("auto"), PlainRenderer)
    assert isinstance(make_renderer("plain"), PlainRenderer)
