"""Pure builders for the cell transcript's HTML and Markdown: cards, diffs, lists, checklists, footers."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from goat_jupyter.tools.events import RunFinished
from goat_jupyter.ui import style
from goat_jupyter.ui.nested import AgentTranscript, NestedEntry
from goat_jupyter.ui.style import CardStatus, NoticeLevel
from goat_jupyter.ui.summary import relative, result_summary
from goat_jupyter.ui.text import (
    TodoEntry,
    call_line,
    call_text,
    compact_input,
    first_line,
    footer_text,
    format_seconds,
    full_input,
    parse_todos,
    result_lines,
)

if TYPE_CHECKING:  # importing goat_jupyter.tools loads every tool; the renderer must stay cheap
    from goat_jupyter.tools.base import Attachment, ToolOutput

COLLAPSE_LINES = 12
DIFF_COLLAPSE_LINES = 40  # diffs are what the user wants to see: fold only big ones
COLLAPSE_CHARS = 2_000
MAX_LIST_ITEMS = 200
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PATH_LIST_TOOLS = frozenset({"Glob"})


@dataclass
class CardView:
    """Everything a tool card shows; the cell renderer mutates it, `card_html` draws it."""

    name: str
    title: str
    args: dict[str, Any]
    status: CardStatus = "running"
    elapsed_s: float = 0.0
    live_output: str = ""
    live_dropped_lines: int = 0
    output: ToolOutput | None = None
    nested: list[AgentTranscript] = field(default_factory=lambda: list[AgentTranscript]())
    base: str = ""  # the workspace: paths under it are shown relative
    waited_s: float = 0.0  # time spent waiting for the user's approval, not the tool's own time
    progress_title: str = ""  # what a running tool says it is doing now


def card_line_html(card: CardView) -> str:
    """`✓ Read data/sales.csv · 49 lines · 0.01s`: status, name, argument, result, own time."""
    color = style.STATUS_COLOR[card.status]
    glyph = style.STATUS_GLYPH[card.status]
    if card.status == "running":
        glyph = style.SPINNER[int(card.elapsed_s * 10) % len(style.SPINNER)]
    argument = compact_input(card.name, card.args, card.base)
    parts = [f'<span style="color:{color}">{glyph}</span> <b>{escape(card.name)}</b>']
    if argument:
        parts.append(f' <code style="{style.CARD_INPUT}">{escape(argument)}</code>')
    summary = card_summary(card)
    if summary:
        summary_color = f"color:{style.RED}" if card.status == "error" else style.NOTE
        parts.append(f' <span style="{summary_color}">· {escape(summary)}</span>')
    parts.append(f' <span style="{style.ELAPSED}">· {escape(card_times(card))}</span>')
    return "".join(parts)


def card_line_text(card: CardView) -> str:
    """`✓ Read(data/sales.csv) · 49 lines · 0.01s`: card_line_html's words on one line of text."""
    parts = [f"{style.STATUS_GLYPH[card.status]} {call_text(card.name, card.args, card.base)}"]
    summary = card_summary(card)
    if summary:
        parts.append(summary)
    parts.append(card_times(card))
    return " ⏎ ".join(" · ".join(parts).splitlines())  # a path or summary may hold a line break


def card_summary(card: CardView) -> str:
    if card.output is not None:
        return relative(result_summary(card.name, card.args, card.output), card.base)
    if card.status == "stopped":
        return "stopped"
    return card.progress_title


def card_times(card: CardView) -> str:
    """The tool's own time; the wait for the user's approval apart."""
    own = format_seconds(max(card.elapsed_s - card.waited_s, 0.0))
    if card.waited_s >= 0.5:
        return f"{own} (waited {format_seconds(card.waited_s)} for you)"
    return own


def card_html(card: CardView) -> str:
    """One line per call; the result in a closed native <details> (works in saved notebooks too)."""
    color = style.STATUS_COLOR[card.status]
    line = card_line_html(card)
    nested = "".join(nested_html(t) for t in card.nested)
    box = style.CARD.format(color=color)
    if card.output is None:
        live = live_output_html(card.live_output, card.live_dropped_lines)
        return f'<div style="{box}"><div style="{style.CARD_STATIC}">{line}</div>{live}{nested}</div>'
    body = full_argument_html(card) + card_body_html(card) + nested
    if not body:
        return f'<div style="{box}"><div style="{style.CARD_STATIC}">{line}</div></div>'
    return f'<details style="{box}"><summary style="{style.CARD_LINE}">{line}</summary>{body}</details>'


def full_argument_html(card: CardView) -> str:
    """The whole argument when the one-line form had to cut it (long commands, long paths)."""
    full = full_input(card.name, card.args, card.base)
    if full == compact_input(card.name, card.args, card.base):
        return ""
    prompt = "$ " if card.name == "Bash" else ""
    return f'<pre style="{style.PRE}">{escape(prompt + full)}</pre>'


def card_text(card: CardView) -> str:
    """The card's text/plain twin: the call line, then the result (or the live tail while running)."""
    lines = [call_line(card.name, card.args, card.base)]
    if card.output is not None:
        result = result_lines(card.name, card.output, card.elapsed_s, summary=card_summary(card))
        lines += [relative(line, card.base) for line in result]
    elif card.status == "stopped":
        lines.append(f"  ⎿ {style.STATUS_GLYPH['stopped']} stopped after {format_seconds(card.elapsed_s)}")
    else:
        lines.append(f"  ⎿ running… {format_seconds(card.elapsed_s)}")
        lines += [f"     {line}" for line in card.live_output.splitlines()[-5:]]
    for transcript in card.nested:
        lines.append(f"     subagent {transcript.agent_id}: {transcript.tool_calls} tool calls")
    return "\n".join(lines)


def card_body_html(card: CardView) -> str:
    """The output part of a card: live tail while running, then the kind-specific final rendering."""
    output = card.output
    if output is None:
        return live_output_html(card.live_output, card.live_dropped_lines)
    return result_html(card.name, card.args, output, card.base) + images_html(output.attachments)


def result_html(name: str, args: dict[str, Any], output: ToolOutput, base: str = "") -> str:
    """Errors as text, diffs coloured, todo lists as checklists, path lists as lists, the rest as text.

    The card itself is folded, so what is inside shows in full (up to the tool's own bound)."""
    text = relative(output.content if output.display is None else output.display, base)
    if output.is_error:
        return pre_html(text, error=not output.declined)
    diff = output.metadata.get("diff")
    if isinstance(diff, str) and diff.strip():
        return diff_html(relative(diff, base))
    todos = parse_todos(output.metadata.get("todos")) if name == "TodoWrite" else []
    if todos:
        return todo_html(todos)
    if is_path_list(name, args):
        return path_list_html(text)
    return pre_html(text)


def pre_html(text: str, *, error: bool = False) -> str:
    if not text:
        return ""
    return f'<pre style="{style.PRE_ERROR if error else style.PRE}">{escape(text)}</pre>'


def is_path_list(name: str, args: dict[str, Any]) -> bool:
    """Glob results and Grep's default files_with_matches mode are newline-separated paths."""
    if name == "Grep":
        return args.get("output_mode", "files_with_matches") == "files_with_matches"
    return name in PATH_LIST_TOOLS


def live_output_html(text: str, dropped_lines: int) -> str:
    """The tail of streamed output in a box that stays scrolled to its newest line."""
    if not text and not dropped_lines:
        return ""
    note = (
        f'<div style="{style.NOTE}">… {dropped_lines} earlier lines not shown</div>' if dropped_lines else ""
    )
    return f'{note}<div style="{style.LIVE_BOX}"><pre style="{style.PRE}">{escape(text)}</pre></div>'


def collapsible_pre(text: str, *, error: bool = False) -> str:
    """Text in a <pre>, folded into a closed <details> with a one-line summary when long."""
    if not text:
        return ""
    pre = f'<pre style="{style.PRE_ERROR if error else style.PRE}">{escape(text)}</pre>'
    count = text.count("\n") + 1
    color = f' style="color:{style.RED}"' if error else ""
    summary = f"<span{color}>{escape(first_line(text, 100))}</span> … ({count} lines)"
    return collapsible(pre, summary=summary, size=text, summary_is_html=True)


def collapsible(
    inner: str,
    *,
    summary: str,
    size: str,
    lines: int = COLLAPSE_LINES,
    summary_is_html: bool = False,
) -> str:
    """`inner` as is when `size` is short, else inside a closed <details> element."""
    if size.count("\n") < lines and len(size) <= COLLAPSE_CHARS:
        return inner
    label = summary if summary_is_html else escape(summary)
    return f'<details><summary style="{style.SUMMARY}">{label}</summary>{inner}</details>'


def diff_html(diff: str) -> str:
    """A unified diff with added lines green, removed lines red, hunk headers blue."""
    rows: list[str] = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            css = style.DIFF_FILE
        elif line.startswith("+"):
            css = style.DIFF_ADD
        elif line.startswith("-"):
            css = style.DIFF_DEL
        elif line.startswith("@@"):
            css = style.DIFF_HUNK
        else:
            css = style.DIFF_SAME
        rows.append(f'<span style="{css}">{escape(line) or " "}</span>')
    return f'<pre style="{style.PRE}">{"".join(rows)}</pre>'


def path_list_html(content: str) -> str:
    """Newline-separated results as a bulleted list, folded when long."""
    items = [line for line in content.splitlines() if line.strip()]
    if not items:
        return ""
    shown = "".join(f"<li>{escape(item)}</li>" for item in items[:MAX_LIST_ITEMS])
    more = f"<li>… +{len(items) - MAX_LIST_ITEMS} more</li>" if len(items) > MAX_LIST_ITEMS else ""
    listing = f'<ul style="{style.LIST}">{shown}{more}</ul>'
    return collapsible(listing, summary=f"{len(items)} results", size="\n".join(items))


def todo_html(todos: list[TodoEntry]) -> str:
    """The todo list as a checklist: done items struck through, active ones bold with their activeForm."""
    rows: list[str] = []
    for todo in todos:
        if todo.status == "completed":
            rows.append(f'<li>☑ <span style="{style.TODO_DONE}">{escape(todo.content)}</span></li>')
        elif todo.status == "in_progress":
            rows.append(f'<li>◼ <span style="{style.TODO_ACTIVE}">{escape(todo.active_form)}</span></li>')
        else:
            rows.append(f"<li>☐ {escape(todo.content)}</li>")
    return f'<ul style="{style.TODO_LIST}">{"".join(rows)}</ul>'


def images_html(attachments: list[Attachment]) -> str:
    """Image attachments inline as data-URI <img> elements; other kinds named in a note."""
    parts: list[str] = []
    for item in attachments:
        if item.mime_type in IMAGE_TYPES:
            src = escape(f"data:{item.mime_type};base64,{item.data}")
            parts.append(f'<img src="{src}" alt="{escape(item.description)}" style="{style.IMAGE}">')
        else:
            label = escape(f"[{item.mime_type} attachment] {item.description}".strip())
            parts.append(f'<div style="{style.NOTE}">{label}</div>')
    return "".join(parts)


def nested_html(transcript: AgentTranscript) -> str:
    """A subagent's steps as indented entries in a closed <details> block."""
    rows: list[str] = []
    if transcript.dropped:
        rows.append(f'<div style="{style.NOTE}">… {transcript.dropped} earlier steps</div>')
    for entry in transcript.entries:
        if entry.kind == "text":
            rows.append(f'<div style="{style.NESTED_TEXT}">{escape(entry.text)}</div>')
            continue
        rows.append(nested_row_html(entry))
    summary = escape(f"Subagent {transcript.agent_id} · {transcript.tool_calls} tool calls")
    return f'<details><summary style="{style.SUMMARY}">{summary}</summary><div style="{style.NESTED}">{"".join(rows)}</div></details>'


def nested_row_html(entry: NestedEntry) -> str:
    """A subagent's step as one compact row, the way the parent's own calls read."""
    is_tool = entry.kind == "tool"
    color = style.STATUS_COLOR[entry.status] if is_tool else style.GREY
    glyph = style.STATUS_GLYPH[entry.status] if is_tool else style.NOTICE_GLYPH["info"]
    elapsed = (
        f' <span style="{style.NOTE}">· {format_seconds(entry.elapsed_s)}</span>' if entry.elapsed_s else ""
    )
    if not entry.name:
        return f'<div><span style="color:{color}">{glyph}</span> <code>{escape(entry.text)}</code>{elapsed}</div>'
    argument = f' <code style="{style.CARD_INPUT}">{escape(entry.argument)}</code>' if entry.argument else ""
    summary_color = f"color:{style.RED}" if entry.status == "error" else style.NOTE
    summary = f' <span style="{summary_color}">· {escape(entry.summary)}</span>' if entry.summary else ""
    return f'<div><span style="color:{color}">{glyph}</span> <b>{escape(entry.name)}</b>{argument}{summary}{elapsed}</div>'


def notice_html(text: str, level: NoticeLevel) -> str:
    color = style.NOTICE_COLOR[level]
    return f'<div style="color:{color};margin:2px 0">{style.NOTICE_GLYPH[level]} {escape(text)}</div>'


def status_html(text: str, elapsed_s: float) -> str:
    """The live status line: a spinner frame that moves with the clock, then the text."""
    frame = style.SPINNER[int(elapsed_s * 2) % len(style.SPINNER)]
    return (
        f'<div style="{style.STATUS_LINE}" class="goat-status">'
        f'<span style="color:{style.BLUE}">{frame}</span> {escape(text)}</div>'
    )


def header_html(model: str, mode: str, output_style: str = "default") -> str:
    shown = "" if output_style == "default" else f" · style <code>{escape(output_style)}</code>"
    return (
        f'<div style="{style.HEADER}">goat · model <code>{escape(model)}</code> · mode '
        f"<code>{escape(mode)}</code>{shown}</div>"
    )


def footer_html(event: RunFinished, made_html: str = "") -> str:
    """The run's totals, then `made_html` (links to the cells it wrote: ui/made_cells.py)."""
    return f'<div style="{style.FOOTER}">{escape(footer_text(event))}{made_html}</div>'
