"""The pure builders behind the transcript: HTML cards, diffs, lists, checklists and their text twins."""

from __future__ import annotations

import re

from goat_jupyter.tools.base import Attachment, ToolOutput
from goat_jupyter.tools.events import Notice, RunFinished, TextDelta, ToolFinished, ToolStarted
from goat_jupyter.ui import style
from goat_jupyter.ui.html import (
    MAX_LIST_ITEMS,
    CardView,
    card_html,
    card_text,
    collapsible_pre,
    diff_html,
    footer_html,
    images_html,
    is_path_list,
    nested_html,
    notice_html,
    path_list_html,
    todo_html,
)
from goat_jupyter.ui.nested import MAX_ENTRIES, AgentTranscript, apply_nested
from goat_jupyter.ui.text import (
    LIVE_TAIL_LINES,
    compact_input,
    footer_text,
    format_seconds,
    keep_tail,
    parse_todos,
    result_lines,
    todo_lines,
)

TODOS = [
    {"content": "Load the data", "status": "completed", "activeForm": "Loading the data"},
    {"content": "Plot <worst> months", "status": "in_progress", "activeForm": "Plotting <worst> months"},
    {"content": "Write the report", "status": "pending", "activeForm": "Writing the report"},
]


def test_compact_input_shows_the_main_argument_of_known_tools():
    assert compact_input("Bash", {"command": "ls -la", "description": "List"}) == "ls -la"
    assert compact_input("Read", {"file_path": "/w/a.txt", "limit": 5}) == "/w/a.txt"
    assert compact_input("Grep", {"pattern": "def main", "path": "/w"}) == "def main"
    assert compact_input("Glob", {"pattern": "**/*.py"}) == "**/*.py"
    assert compact_input("WebFetch", {"url": "https://example.com"}) == "https://example.com"
    assert compact_input("TodoWrite", {"todos": TODOS}) == "3 items"
    assert compact_input("Bash", {"command": "cd /w\nmake"}) == "cd /w ⏎ make"


def test_compact_input_falls_back_to_short_json():
    # No raw JSON for people: other tools' arguments read as `key: value` pairs.
    assert compact_input("Config", {"setting": "model", "value": "x"}) == "setting: model, value: x"
    assert compact_input("TodoRead", {}) == ""
    long = compact_input("Mystery", {"blob": "x" * 1000})
    assert len(long) == 160 and long.endswith("…")


def test_format_seconds_scales_its_precision():
    assert format_seconds(0.1234) == "0.12s"
    assert format_seconds(12.34) == "12.3s"
    assert format_seconds(125) == "2m 05s"
    assert format_seconds(None) == ""


def test_footer_names_turns_tokens_cost_and_time():
    done = RunFinished(3, 12_000, 345, 0.01234, 4.2, "end_turn")
    assert footer_text(done) == "Done · 3 turns · 12,345 tokens (12,000 in, 345 out) · $0.012 · 4.20s"
    unknown_cost = RunFinished(1, 10, 5, None, 0.5, "interrupted")
    assert footer_text(unknown_cost) == "Interrupted · 1 turn · 15 tokens (10 in, 5 out) · 0.50s"
    assert "12,345 tokens" in footer_html(done)


def test_diff_lines_are_coloured_by_kind_and_escaped():
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n-x = '<old>'\n+x = '<new>'\n same"
    rendered = diff_html(diff)
    assert f'<span style="{style.DIFF_DEL}">-x = &#x27;&lt;old&gt;&#x27;</span>' in rendered
    assert f'<span style="{style.DIFF_ADD}">+x = &#x27;&lt;new&gt;&#x27;</span>' in rendered
    assert f'<span style="{style.DIFF_HUNK}">@@ -1,2 +1,2 @@</span>' in rendered
    assert f'<span style="{style.DIFF_FILE}">+++ b/f.py</span>' in rendered
    assert f'<span style="{style.DIFF_SAME}"> same</span>' in rendered
    assert "<new>" not in rendered


def test_todo_checklist_marks_each_status():
    todos = parse_todos(TODOS)
    rendered = todo_html(todos)
    assert f'☑ <span style="{style.TODO_DONE}">Load the data</span>' in rendered
    assert f'◼ <span style="{style.TODO_ACTIVE}">Plotting &lt;worst&gt; months</span>' in rendered
    assert "☐ Write the report" in rendered
    assert todo_lines(todos) == ["☒ Load the data", "◼ Plotting <worst> months", "☐ Write the report"]


def test_parse_todos_skips_malformed_items():
    raw = [
        {"content": "ok", "status": "pending"},
        "junk",
        {"status": "pending"},
        {"content": 3, "status": "x"},
    ]
    assert [(t.content, t.active_form) for t in parse_todos(raw)] == [("ok", "ok")]
    assert parse_todos("not a list") == []


def test_images_become_data_uri_img_elements():
    rendered = images_html([Attachment("image/png", "iVBORw0KGgo=", 'a "chart"')])
    assert rendered.startswith('<img src="data:image/png;base64,iVBORw0KGgo=" alt="a &quot;chart&quot;"')
    other = images_html([Attachment("application/pdf", "JVBERi0=", "report")])
    assert "<img" not in other and "[application/pdf attachment] report" in other


def test_short_output_is_shown_and_long_output_is_folded():
    assert collapsible_pre("one\ntwo") == f'<pre style="{style.PRE}">one\ntwo</pre>'
    long = "\n".join(f"row {i}" for i in range(50))
    folded = collapsible_pre(long)
    assert folded.startswith("<details><summary") and "<details open" not in folded
    assert "row 0</span> … (50 lines)</summary>" in folded
    assert "row 49" in folded
    assert style.RED in collapsible_pre("Error: boom", error=True)


def test_path_lists_are_bulleted_escaped_and_capped():
    listing = path_list_html("/w/a.py\n/w/<b>.py\n")
    assert "<li>/w/a.py</li><li>/w/&lt;b&gt;.py</li>" in listing
    many = path_list_html("\n".join(f"/w/{i}.py" for i in range(MAX_LIST_ITEMS + 5)))
    assert "<li>… +5 more</li>" in many and many.startswith("<details>")
    assert is_path_list("Glob", {}) and is_path_list("Grep", {"pattern": "x"})
    assert not is_path_list("Grep", {"pattern": "x", "output_mode": "content"})


def test_card_escapes_model_text_everywhere():
    card = CardView("Bash", "Run <script>alert(1)</script>", {"command": "echo '<script>x</script>'"})
    card.status = "ok"
    card.output = ToolOutput("<script>alert(2)</script>")
    rendered = card_html(card)
    assert "<script>" not in rendered
    assert "alert(1)" not in rendered  # the title repeats the argument: the one line shows the argument only
    assert "echo &#x27;&lt;script&gt;x&lt;/script&gt;&#x27;" in rendered
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in rendered


def test_card_states_show_status_elapsed_and_output():
    card = CardView("Bash", "Build", {"command": "make"}, elapsed_s=1.5, live_output="compiling\n")
    running = card_html(card)
    assert style.STATUS_COLOR["running"] in running and "1.50s" in running and "compiling" in running
    assert "running… 1.50s" in card_text(card)
    card.status, card.output = "error", ToolOutput("Error: exit code 2", is_error=True)
    failed = card_html(card)
    assert "✗" in failed and style.PRE_ERROR in failed and "compiling" not in failed
    assert card_text(card).splitlines() == [
        "⏺ Bash(make)",
        "  ⎿ ✗ 1.50s · exit code 2",
        "     Error: exit code 2",
    ]


def test_result_lines_keep_ten_lines_and_count_the_rest():
    output = ToolOutput("\n".join(f"line {i}" for i in range(25)))
    lines = result_lines("Bash", output, 0.12)
    assert lines[0] == "  ⎿ ✓ 0.12s  line 0"
    assert lines[9] == "     line 9" and lines[10] == "     … +15 lines" and len(lines) == 11
    assert result_lines("Write", ToolOutput(""), 0.5) == ["  ⎿ ✓ 0.50s"]


def test_keep_tail_keeps_the_last_lines_and_counts_dropped_ones():
    text, dropped = "", 0
    for i in range(LIVE_TAIL_LINES + 50):
        text, dropped = keep_tail(text, dropped, f"line {i}\n")
    assert dropped == 50
    assert text.splitlines()[0] == "line 50" and text.splitlines()[-1] == f"line {LIVE_TAIL_LINES + 49}"


def test_notice_is_coloured_by_level_and_escaped():
    rendered = notice_html("Retry <soon>", "warning")
    assert style.AMBER in rendered and "⚠ Retry &lt;soon&gt;" in rendered


def test_subagent_transcript_folds_events_into_bounded_entries():
    transcript = AgentTranscript("sub-1")
    apply_nested(transcript, TextDelta("Looking ", "sub-1"))
    apply_nested(transcript, TextDelta("<around>", "sub-1"))
    apply_nested(transcript, ToolStarted("c1", "Glob", "Glob", {"pattern": "*.py"}, "sub-1"))
    apply_nested(
        transcript, ToolFinished("c1", "Glob", ToolOutput("Error: bad", is_error=True), 0.2, "sub-1")
    )
    apply_nested(transcript, Notice("slow", agent_id="sub-1"))
    assert [(e.kind, e.text, e.status) for e in transcript.entries] == [
        ("text", "Looking <around>", "ok"),
        ("tool", "Glob(*.py) — Error: bad", "error"),
        ("notice", "slow", "ok"),
    ]
    rendered = nested_html(transcript)
    assert rendered.startswith("<details><summary") and "Subagent sub-1 · 1 tool calls" in rendered
    assert "Looking &lt;around&gt;" in rendered
    for i in range(MAX_ENTRIES + 3):
        apply_nested(transcript, Notice(f"n{i}", agent_id="sub-1"))
    assert len(transcript.entries) == MAX_ENTRIES and transcript.dropped == 6
    assert re.search(r"… 6 earlier steps", nested_html(transcript))
