"""Plain-text pieces of the transcript, shared by PlainRenderer and the cell's text/plain fallbacks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from goat_jupyter.tools.events import RunFinished
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
    "replayed": "Replayed, no model asked",
    "replay_stopped": "Replay stopped",
}
REPLAY_STOPS = frozenset({"replayed", "replay_stopped"})  # no tokens to count: no model was asked


@dataclass(frozen=True)
class TodoEntry:
    content: str
    status: str  # pending | in_progress | completed
    active_form: str


PATH_ARGUMENTS = frozenset({"file_path", "notebook_path", "path"})


def compact_input(name: str, args: dict[str, Any], base: str = "") -> str:
    """One short line naming what a call works on, for people: the main argument, never JSON."""
    if not args:
        return ""
    return shorten(_human_input(name, args, base), MAX_INPUT_CHARS)


def full_input(name: str, args: dict[str, Any], base: str = "") -> str:
    """The same line uncut (long commands wrap in the details instead of ending in "…")."""
    return _human_input(name, args, base) if args else ""


def _human_input(name: str, args: dict[str, Any], base: str) -> str:
    key = MAIN_ARGUMENT.get(name)
    value = args.get(key) if key else None
    if name == "TodoWrite" and isinstance(args.get("todos"), list):
        return f"{len(cast(list[object], args['todos']))} items"
    if name == "AskUserQuestion" and isinstance(args.get("questions"), list):
        items = cast(list[object], args["questions"])
        return " / ".join(
            str(cast(dict[str, object], q).get("question", "")) for q in items if isinstance(q, dict)
        )
    if name == "ExitPlanMode":
        return first_line(str(args.get("plan", "")), MAX_INPUT_CHARS).lstrip("# ")
    if name == "RunCell":
        from goat_jupyter.live import address_label

        return address_label(str(args.get("cell_id", "")))
    if isinstance(value, str) and value:
        if key in PATH_ARGUMENTS:
            return _relative_path(value, base)
        return " ".join(value.split()) if name != "Bash" else value.strip().replace("\n", " ⏎ ")
    return ", ".join(f"{k}: {_short_value(v, base)}" for k, v in args.items())


def _relative_path(value: str, base: str) -> str:
    prefix = base.rstrip("/") + "/"
    return value[len(prefix) :] if base and value.startswith(prefix) else value


def _short_value(value: object, base: str) -> str:
    if isinstance(value, str):
        return _relative_path(" ".join(value.split()), base)
    if isinstance(value, list):
        return f"[{len(cast(list[object], value))} items]"
    if isinstance(value, dict):
        return "{…}"
    return str(value)


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
    """`$1.23`, `$0.012`, `$0.00042`: small costs keep two significant digits."""
    if cost_usd >= 1 or cost_usd <= 0:
        return f"${cost_usd:.2f}"
    digits = max(2, 1 - math.floor(math.log10(cost_usd)))
    return f"${cost_usd:.{digits}f}"


def footer_text(event: RunFinished) -> str:
    """`Done · 3 turns · 1,234 tokens (1,000 in, 234 out) · $0.0012 · 4.20s`."""
    total = event.prompt_tokens + event.completion_tokens
    parts = [
        STOP_REASONS.get(event.stop_reason, event.stop_reason),
        f"{event.turns} turn{'s' if event.turns != 1 else ''}",
        f"{total:,} tokens ({event.prompt_tokens:,} in, {event.completion_tokens:,} out)",
    ]
    if event.stop_reason in REPLAY_STOPS:
        return " · ".join([*parts[:2], format_seconds(event.elapsed_s)])
    subagents = event.extra.get("subagent_tokens")
    if isinstance(subagents, int) and subagents:
        parts[-1] += f", {subagents:,} by subagents"
    cached = event.extra.get("cached_tokens")
    if isinstance(cached, int) and cached:
        parts.append(f"{cached:,} cached")
    if event.cost_usd is not None:
        parts.append(format_cost(event.cost_usd))
    parts.append(format_seconds(event.elapsed_s))
    return " · ".join(parts)


STOP_HINT = "■ Stop to interrupt"
FOOTER_RULE = "──"  # starts the footer line in text transcripts


def status_text(
    elapsed_s: float,
    tokens: int,
    budget: str = "",
    label: str = "Working",
    *,
    cost_usd: float | None = None,
    estimated: bool = True,
) -> str:
    """`Working · 12s · 3,456 tokens · $0.012 · ■ Stop to interrupt`: the run so far, in plain text (the
    spend against a budget, when there is one, in place of the cost); `~` when part is an estimate."""
    parts = [label, f"{elapsed_s:.0f}s"]
    if tokens:
        parts.append(f"{'~' if estimated else ''}{tokens:,} tokens")
    if budget:
        parts.append(budget)
    elif cost_usd:
        parts.append(format_cost(cost_usd))
    parts.append(STOP_HINT)
    return " · ".join(parts)


def header_text(model: str, mode: str, style: str = "default") -> str:
    shown = "" if style == "default" else f" · style {style}"
    return f"goat · model {model} · mode {mode}{shown}"


def notice_text(text: str, level: NoticeLevel) -> str:
    return f"{style.NOTICE_GLYPH[level]} {text}"


def notice_level(level: str) -> NoticeLevel:
    return level if level in ("info", "warning", "error") else "info"


def call_line(name: str, args: dict[str, Any], base: str = "") -> str:
    """`⏺ Bash(ls -la)`: the line that announces a tool call."""
    return f"⏺ {call_text(name, args, base)}"


def call_text(name: str, args: dict[str, Any], base: str = "") -> str:
    """`Bash(ls -la)`: the tool and what it works on."""
    argument = compact_input(name, args, base)
    return f"{name}({argument})" if argument else name


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
    name: str, output: ToolOutput, elapsed_s: float | None, max_lines: int = RESULT_LINES, summary: str = ""
) -> list[str]:
    """`  └ ✓ 0.12s · 49 lines`, then up to `max_lines` lines of the result and a `… +N lines` note."""
    status: CardStatus = style.finished_status(output.is_error, output.declined)
    todos = parse_todos(output.metadata.get("todos")) if name == "TodoWrite" and not output.is_error else []
    text = output.content if output.display is None else output.display
    body = todo_lines(todos) if todos else [shorten(line, 200) for line in text.splitlines()]
    body += [f"[{a.mime_type} attachment] {a.description}".strip() for a in output.attachments]
    shown = body[:max_lines]
    if len(body) > max_lines:
        shown.append(f"… +{len(body) - max_lines} lines")
    head = f"  ⎿ {style.STATUS_GLYPH[status]} {format_seconds(elapsed_s)}"
    if summary:
        return [f"{head} · {summary}", *(f"     {line}" for line in shown)]
    if not shown:
        return [f"{head} · {output.summary}" if output.summary else head]
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
