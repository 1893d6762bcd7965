"""Inline CSS and glyphs for the cell transcript (inline only: saved notebooks render without a kernel).

Colours come from JupyterLab's theme variables, so the light and dark themes both work; the hex
after each variable is the fallback where they are undefined (GitHub, nbconvert's Markdown). Status
colours are mixed with the text colour, which darkens them on light themes and lightens them on
dark ones: that keeps them readable (WCAG AA) in both. Diff lines keep the normal text colour on
a tinted background. Glyphs are from blocks DejaVu and Noto both cover (no emoji).
"""

from __future__ import annotations

from typing import Literal

CardStatus = Literal["running", "ok", "error", "stopped", "declined"]
NoticeLevel = Literal["info", "warning", "error"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATUS_GLYPH: dict[CardStatus, str] = {
    "running": "⠋",
    "ok": "✓",
    "error": "✗",
    "stopped": "⊘",
    "declined": "ℹ",
}

TEXT = "var(--jp-content-font-color1,#1f2328)"


def readable(variable: str, fallback: str) -> str:
    """A theme colour mixed with the text colour: readable on light and dark backgrounds."""
    return f"color-mix(in srgb,var({variable},{fallback}) 70%,{TEXT})"


def tint(variable: str, fallback: str, percent: int = 16) -> str:
    """A see-through wash of a theme colour, for backgrounds under normal text."""
    return f"color-mix(in srgb,var({variable},{fallback}) {percent}%,transparent)"


GREEN = readable("--jp-success-color1", "#1a7f37")
RED = readable("--jp-error-color1", "#cf222e")
AMBER = readable("--jp-warn-color1", "#9a6700")
BLUE = readable("--jp-brand-color1", "#0969da")
GREY = "var(--jp-content-font-color2,#59636e)"
BORDER = "var(--jp-border-color2,rgba(128,128,128,0.35))"
STATUS_COLOR: dict[CardStatus, str] = {
    "running": BLUE,
    "ok": GREEN,
    "error": RED,
    "stopped": AMBER,
    "declined": GREY,
}
NOTICE_COLOR: dict[NoticeLevel, str] = {"info": GREY, "warning": AMBER, "error": RED}
NOTICE_GLYPH: dict[NoticeLevel, str] = {"info": "ℹ", "warning": "⚠", "error": "✗"}

MONO = "font-family:var(--jp-code-font-family,monospace);font-size:0.85em"
CARD = "margin:1px 0;padding:0 4px;border-left:3px solid {color};max-width:100%;box-sizing:border-box"
CARD_LINE = "cursor:pointer;line-height:1.6;overflow-wrap:anywhere"
CARD_STATIC = "line-height:1.6;overflow-wrap:anywhere"
CARD_INPUT = MONO + ";color:inherit;white-space:pre-wrap;overflow-wrap:anywhere"
ELAPSED = "color:" + GREY + ";font-size:0.85em;white-space:nowrap"
PRE = (
    MONO + ";margin:4px 0;padding:4px 6px;white-space:pre-wrap;overflow-wrap:anywhere;"
    "background:" + tint("--jp-layout-color3", "#808080", 12) + ";color:" + TEXT
)
PRE_ERROR = PRE + ";border-left:2px solid " + RED
# column-reverse keeps a scrolled box pinned to its newest (bottom) line while output streams in.
LIVE_BOX = "display:flex;flex-direction:column-reverse;max-height:16em;overflow-y:auto"
SUMMARY = "cursor:pointer;color:" + GREY + ";" + MONO
NOTE = "color:" + GREY + ";font-size:0.85em"
DIFF_ADD = "display:block;background:" + tint("--jp-success-color1", "#2da44e") + ";color:" + TEXT
DIFF_DEL = "display:block;background:" + tint("--jp-error-color1", "#cf222e") + ";color:" + TEXT
DIFF_HUNK = "display:block;color:" + GREY
DIFF_FILE = "display:block;color:" + GREY + ";font-weight:bold"
DIFF_SAME = "display:block;color:" + TEXT
LIST = "margin:2px 0;padding-left:1.5em;" + MONO
TODO_LIST = "list-style:none;margin:2px 0;padding-left:0.5em"
TODO_DONE = "color:" + GREY + ";text-decoration:line-through"
TODO_ACTIVE = "font-weight:bold"
IMAGE = "max-width:100%;max-height:480px;display:block;margin:4px 0"
HEADER = "color:" + GREY + ";font-size:0.85em;margin:2px 0"
FOOTER = (
    "color:" + GREY + ";font-size:0.85em;border-top:1px solid " + BORDER + ";margin-top:6px;padding-top:3px"
)
STATUS_LINE = "color:" + GREY + ";font-size:0.85em;margin:4px 0"
NESTED = "margin:4px 0 2px 0.5em;border-left:2px solid " + BORDER + ";padding-left:8px"
NESTED_TEXT = "white-space:pre-wrap;margin:2px 0"
RECORD = "border-left:3px solid {color};padding-left:6px;margin:2px 0;font-size:0.85em;overflow-wrap:anywhere"


def finished_status(is_error: bool, declined: bool) -> CardStatus:
    """How a finished call shows: a refusal by design is information, not a red failure."""
    if declined:
        return "declined"
    return "error" if is_error else "ok"
