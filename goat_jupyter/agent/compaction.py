"""Compaction: the small model summarises the older turns; the recent turns stay verbatim."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.agent.context import Message, content_tokens, message_tokens, text_tokens
from goat_jupyter.agent.llm import LLMClient, Meter

COMPACTION_MARKER = "<goat-compaction-request>"
SUMMARY_OPEN = "<conversation-summary>"
SUMMARY_INTRO = (
    "The earlier part of this conversation was compacted to save context. "
    "This summary replaces it; the turns after it are verbatim.\n\n"
)
PER_MESSAGE_CHARS = 2_000
SUMMARY_INSTRUCTIONS = """Write a handover summary of the conversation above so that another \
assistant can continue the work without it. Use exactly these Markdown sections:
## Goal
## Decisions made
## Files and cells touched
## Current state
## Open todos
## What the user asked not to do
Be specific (paths, variable names, numbers, errors). Keep it under 600 words."""


@dataclass(frozen=True)
class Compacted:
    messages: list[Message]
    summary: Message
    kept: int  # how many of the newest original messages stay verbatim


def cut_point(messages: Sequence[Message], keep_tokens: int) -> int:
    """Where the verbatim tail starts: never at a tool result, so calls keep their results.

    The tail holds at most `keep_tokens` when it can; otherwise just the newest turn. 0 means there
    is nothing older to summarise.
    """
    seen = 0
    best = 0
    for index in range(len(messages) - 1, 0, -1):
        seen += message_tokens(messages[index])
        if messages[index].get("role") != "tool":
            if seen > keep_tokens and best:
                break
            best = index
            if seen > keep_tokens:
                break
    return best


def _render(message: Message) -> str:
    role = str(message.get("role"))
    images = content_tokens(message.get("content"))[1]
    body = _text_of(message.get("content"))
    if len(body) > PER_MESSAGE_CHARS:
        body = body[: PER_MESSAGE_CHARS // 2] + "\n[…]\n" + body[-PER_MESSAGE_CHARS // 2 :]
    calls = [
        f"[called {c['function']['name']}({c['function'].get('arguments', '')[:300]})]"
        for c in cast(list[dict[str, Any]], message.get("tool_calls") or [])
    ]
    extra = f" [{images // 1000 or 1} image(s)]" if images else ""
    return f"{role}: {body}{extra}" + ("\n" + "\n".join(calls) if calls else "")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = cast(list[Any], content)
        return "\n".join(str(cast(dict[str, Any], p).get("text", "")) for p in parts if isinstance(p, dict))
    return ""


def transcript(messages: Sequence[Message], budget_tokens: int) -> str:
    """The older turns as plain text, newest kept when they do not all fit the summariser."""
    lines = [_render(m) for m in messages]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += text_tokens(line)
        if used > budget_tokens and kept:
            kept.append("[… earlier turns omitted …]")
            break
        kept.append(line)
    return "\n\n".join(reversed(kept))


def summary_request(older: Sequence[Message], focus: str, budget_tokens: int) -> list[Message]:
    ask = SUMMARY_INSTRUCTIONS + (f"\nFocus especially on: {focus}" if focus.strip() else "")
    return [
        {"role": "system", "content": "You write precise handover summaries of agent conversations."},
        {
            "role": "user",
            "content": f"{COMPACTION_MARKER}\n<conversation>\n{transcript(older, budget_tokens)}\n</conversation>\n\n{ask}",
        },
    ]


def summary_message(summary: str) -> Message:
    return {
        "role": "user",
        "content": f"{SUMMARY_OPEN}\n{SUMMARY_INTRO}{summary.strip()}\n</conversation-summary>",
    }


async def compact(
    messages: Sequence[Message],
    summarizer: LLMClient,
    *,
    meter: Meter,
    keep_tokens: int,
    summarizer_budget: int,
    focus: str = "",
) -> Compacted | None:
    """Summarise everything before the verbatim tail; None when there is nothing to summarise."""
    cut = cut_point(messages, keep_tokens)
    if cut <= 0:
        return None
    request = summary_request(messages[:cut], focus, summarizer_budget)
    turn = await summarizer.complete(request, None, lambda _text: None, lambda _message: None, meter=meter)
    text = turn.text.strip() or "(the summariser returned nothing)"
    summary = summary_message(text)
    tail = list(messages[cut:])
    return Compacted([summary, *tail], summary, len(tail))


def is_summary(message: Message) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(SUMMARY_OPEN)


def dumps(message: Message) -> str:
    return json.dumps(message, ensure_ascii=False, sort_keys=True)
