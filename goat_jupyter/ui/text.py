"""Plain-text pieces of the transcript, shared by PlainRenderer and the cell's text/plain fallbacks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from goat_jupyter.events import RunFinished
from goat_jupyter.ui import style
from goat_jupyter.ui.style import CardStatus, NoticeLevel

if TYPE_CHECKING:  # importing goat_jupyter.tools loads every tool; the renderer must stay cheap
    from goat_jupyter.tools.base import ToolOutput

MAX_INPUT_CHARS = 160
RESULT_LINES = 10
LIVE_TAIL_LINES = 200
LIVE_TAIL_CHARS = 64_000
# The argument that says what a call does, per tool; other tools show their arguments as short JSON.
MAIN_ARGUMENT = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "NotebookEdit": "notebook_path",
    "Grep": "pattern",
    "Glob": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "LS": "path",
    "Delete": "path",
    "KernelInspect": "expression",
    "Agent": "description",
}
STOP_REASONS = {
    "end_turn": "Done",
    "max_turns": "Stopped: max turns reached",
    "interrupted": "Interrupted",
    "error": "Stopped after an error",
}


@dataclass(frozen=True)
class TodoEntry:
    content: str
    status: str  # pending | in_progress | completed
    active_form: str


def compact_input(name: str, args: dict[str, Any]) -> str:
    """One short line naming what a call works on: the main argument, else compact JSON."""
    if not args:
        return ""
    key = MAIN_ARGUMENT.get(name)
    value = args.get(key) if key else None
    todos = args.get("todos")
    if name == "TodoWrite" and isinstance(todos, list):
        text = f"{len(cast(list[object], todos))} items"
    elif isinstance(value, str) and value:
        text = " ".join(value.split()) if name != "Bash" else value.strip().replace("\n", " ⏎ ")
    else:
        text = json.dumps(args, ensure_ascii=False, default=str, separators=(", ", ": "))
    return shorten(text, MAX_INPUT_CHARS)


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line, cut to `limit` characters."""
    return next((shorten(line, limit) for line in text.splitlines() if line.strip()), "")


def shorten(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest:02d}s"


def format_cost(cost_usd: float) -> str:
    return f"${cost_usd:.4f}" if cost_usd < 1 else f"${cost_usd:.2f}"


def footer_text(event: RunFinished) -> str:
    """`Done · 3 turns · 1,234 tokens (1,000 in, 234 out) · $0.0012 · 4.20s`."""
    total = event.prompt_tokens + event.completion_tokens
    parts = [
        STOP_REASONS.get(event.stop_reason, event.stop_reason),
        f"{event.turns} turn{'s' if event.turns != 1 else ''}",
        f"{total:,} tokens ({event.prompt_tokens:,} in, {event.completion_tokens:,} out)",
    ]
    cached = event.extra.get("cached_tokens")
    if isinstance(cached, int) and cached:
        parts.append(f"{cached:,} cached")
    if event.cost_usd is not None:
        parts.append(format_cost(event.cost_usd))
    parts.append(format_seconds(event.elapsed_s))
    return " · ".join(parts)


def header_text(model: str, mode: str) -> str:
    return f"goat · model {model} · mode {mode}"


def notice_text(text: str, level: NoticeLevel) -> str:
    return f"{style.NOTICE_GLYPH[level]} {text}"


def notice_level(level: str) -> NoticeLevel:
    return level if level in ("info", "warning", "error") else "info"


def call_line(name: str, args: dict[str, Any]) -> str:
    """`⏺ Bash(ls -la)`: the line that announces a tool call."""
    argument = compact_input(name, args)
    return f"⏺ {name}({argument})" if argument else f"⏺ {name}"


def parse_todos(value: object) -> list[TodoEntry]:
    """TodoWrite's metadata["todos"] (dicts with content/status/activeForm); malformed items skipped."""
    if not isinstance(value, list):
        return []
    todos: list[TodoEntry] = []
    for raw in cast(list[object], value):
        if not isinstance(raw, dict):
            continue
        item = cast(dict[str, object], raw)
        content, status, active = item.get("content"), item.get("status"), item.get("activeForm")
        if isinstance(content, str) and isinstance(status, str):
            todos.append(
                TodoEntry(content, status, active if isinstance(active, str) and active else content)
            )
    return todos


def todo_lines(todos: list[TodoEntry]) -> list[str]:
    marks = {"completed": "☒", "in_progress": "◼"}
    return [
        f"{marks.get(t.status, '☐')} {t.active_form if t.status == 'in_progress' else t.content}"
        for t in todos
    ]


def result_lines(
    name: str, output: ToolOutput, elapsed_s: float | None, max_lines: int = RESULT_LINES
) -> list[str]:
    """`  ⎿ ✓ 0.12s  first line`, then up to `max_lines` lines of the result and a `… +N lines` note."""
    status: CardStatus = "error" if output.is_error else "ok"
    todos = parse_todos(output.metadata.get("todos")) if name == "TodoWrite" and not output.is_error else []
    body = todo_lines(todos) if todos else [shorten(line, 200) for line in output.content.splitlines()]
    body += [f"[{a.mime_type} attachment] {a.description}".strip() for a in output.attachments]
    shown = body[:max_lines]
    if len(body) > max_lines:
        shown.append(f"… +{len(body) - max_lines} lines")
    head = f"  ⎿ {style.STATUS_GLYPH[status]} {format_seconds(elapsed_s)}"
    if not shown:
        return [head]
    return [f"{head}  {shown[0]}", *(f"     {line}" for line in shown[1:])]


def keep_tail(text: str, dropped_lines: int, chunk: str) -> tuple[str, int]:
    """Append streamed output, keeping only the last LIVE_TAIL_LINES lines; count what fell off."""
    text += chunk
    if len(text) > LIVE_TAIL_CHARS:
        cut = text[: len(text) - LIVE_TAIL_CHARS]
        dropped_lines += cut.count("\n")
        text = text[len(text) - LIVE_TAIL_CHARS :]
    excess = text.count("\n") - LIVE_TAIL_LINES
    if excess > 0:
        parts = text.split("\n", excess)
        dropped_lines += excess
        text = parts[-1]
    return text, dropped_lines
