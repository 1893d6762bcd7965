"""Inline CSS and glyphs for the cell transcript (inline only: saved notebooks render without a kernel)."""

from __future__ import annotations

from typing import Literal

CardStatus = Literal["running", "ok", "error", "stopped"]
NoticeLevel = Literal["info", "warning", "error"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATUS_GLYPH: dict[CardStatus, str] = {"running": "⠋", "ok": "✓", "error": "✗", "stopped": "⊘"}

GREEN = "#1a7f37"
RED = "#cf222e"
AMBER = "#9a6700"
BLUE = "#0969da"
GREY = "#6e7781"
STATUS_COLOR: dict[CardStatus, str] = {"running": BLUE, "ok": GREEN, "error": RED, "stopped": AMBER}
NOTICE_COLOR: dict[NoticeLevel, str] = {"info": GREY, "warning": AMBER, "error": RED}
NOTICE_GLYPH: dict[NoticeLevel, str] = {"info": "ℹ", "warning": "⚠", "error": "✗"}

MONO = "font-family:var(--jp-code-font-family,monospace);font-size:0.85em"
CARD = (
    "border:1px solid rgba(128,128,128,0.35);border-left:4px solid {color};border-radius:4px;"
    "padding:4px 8px;margin:4px 0"
)
CARD_HEADER = "display:block;line-height:1.5"
CARD_INPUT = MONO + ";color:inherit;opacity:0.85;white-space:pre-wrap;word-break:break-all"
ELAPSED = "float:right;color:" + GREY + ";font-size:0.85em"
PRE = (
    MONO
    + ";margin:4px 0;padding:4px 6px;white-space:pre-wrap;word-break:break-word;background:rgba(128,128,128,0.08)"
)
PRE_ERROR = PRE + ";color:" + RED
# column-reverse keeps a scrolled box pinned to its newest (bottom) line while output streams in.
LIVE_BOX = "display:flex;flex-direction:column-reverse;max-height:24em;overflow-y:auto"
SUMMARY = "cursor:pointer;color:" + GREY + ";" + MONO
NOTE = "color:" + GREY + ";font-size:0.85em"
DIFF_ADD = "display:block;background:rgba(46,160,67,0.18);color:" + GREEN
DIFF_DEL = "display:block;background:rgba(248,81,73,0.18);color:" + RED
DIFF_HUNK = "display:block;color:" + BLUE
DIFF_FILE = "display:block;color:" + GREY + ";font-weight:bold"
DIFF_SAME = "display:block"
LIST = "margin:2px 0;padding-left:1.5em;" + MONO
TODO_LIST = "list-style:none;margin:2px 0;padding-left:0.5em"
TODO_DONE = "color:" + GREY + ";text-decoration:line-through"
TODO_ACTIVE = "font-weight:bold;color:" + BLUE
IMAGE = "max-width:100%;max-height:480px;display:block;margin:4px 0"
HEADER = "color:" + GREY + ";font-size:0.85em;margin:2px 0"
FOOTER = (
    "color:"
    + GREY
    + ";font-size:0.85em;border-top:1px solid rgba(128,128,128,0.35);margin-top:6px;padding-top:3px"
)
NESTED = "margin:4px 0 2px 0.5em;border-left:2px solid rgba(128,128,128,0.35);padding-left:8px"
NESTED_TEXT = "white-space:pre-wrap;margin:2px 0"
RECORD = "border-left:3px solid {color};padding-left:6px;margin:2px 0;font-size:0.85em"
