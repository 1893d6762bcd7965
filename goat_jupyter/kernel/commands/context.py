"""`%goat context` (a bar chart of the next request against the window) and `%goat compact`."""

from __future__ import annotations

import asyncio
import html
import threading
from typing import Any

from goat_jupyter.agent.context import Breakdown, Budget, breakdown
from goat_jupyter.agent.context_keeper import ContextKeeper, kilo
from goat_jupyter.agent.llm import llm_client_for
from goat_jupyter.agent.meter import session_meter
from goat_jupyter.agent.session import Session
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.tools.events import Event, Notice

BAR_COLORS = ("#6b7280", "#8b5cf6", "#2563eb", "#059669", "#d97706")
TEXT_BAR_WIDTH = 40


def keeper_for(goat: GoatRuntime, emit: Any = None) -> ContextKeeper:
    settings = goat.session.settings
    return ContextKeeper(
        goat.session,
        goat.registry,
        goat.services,
        llm_client_for(settings),
        emit or _print_event,
        summarizer=llm_client_for(settings, settings.small_model or settings.model),
        meter=session_meter(goat.session, in_run=False),
    )


def _print_event(event: Event) -> None:
    if isinstance(event, Notice):
        print(event.text)


def context_status_line(session: Session) -> str:
    state, usage = session.context, session.usage
    share = f"{usage.cached_tokens / usage.prompt_tokens:.0%}" if usage.prompt_tokens else "0%"
    return (
        f"context: last request {state.last_request_tokens:,} tokens (peak {state.peak_request_tokens:,})  "
        f"compactions {state.compactions}  cached input {usage.cached_tokens:,} tokens ({share} of input)"
    )


def text_chart(parts: Breakdown, budget: Budget) -> str:
    lines = [f"Context: {parts.total:,} of {budget.window:,} tokens ({parts.total / budget.window:.0%})"]
    for label, tokens in parts.rows():
        bar = "█" * round(TEXT_BAR_WIDTH * tokens / budget.window)
        lines.append(f"  {label:<17}{tokens:>9,}  {bar}")
    lines.append(f"  Free{budget.window - parts.total:>22,}")
    lines.append(
        f"Compacts automatically above {budget.threshold:,} tokens "
        f"({budget.usable:,} usable after {budget.window - budget.usable:,} reserved for the answer)."
    )
    return "\n".join(lines)


def html_chart(parts: Breakdown, budget: Budget) -> str:
    """One stacked bar (share of the window per part) and a legend; plain HTML, no scripts."""
    segments = "".join(
        f'<div title="{html.escape(label)}: {tokens:,}" style="width:{100 * tokens / budget.window:.2f}%;'
        f'background:{color}"></div>'
        for (label, tokens), color in zip(parts.rows(), BAR_COLORS, strict=True)
    )
    mark = 100 * budget.threshold / budget.window
    legend = "".join(
        f'<span style="margin-right:12px"><span style="display:inline-block;width:10px;height:10px;'
        f'background:{color};margin-right:4px"></span>{html.escape(label)} {kilo(tokens)}</span>'
        for (label, tokens), color in zip(parts.rows(), BAR_COLORS, strict=True)
    )
    return (
        f'<div class="goat-context" style="font:12px sans-serif">'
        f"<div>Context: {parts.total:,} of {budget.window:,} tokens ({parts.total / budget.window:.0%})</div>"
        f'<div style="position:relative;display:flex;height:14px;background:#e5e7eb;margin:4px 0">{segments}'
        f'<div title="compaction threshold" style="position:absolute;left:{mark:.2f}%;top:0;bottom:0;'
        f'border-left:2px dashed #dc2626"></div></div><div>{legend}</div></div>'
    )


def show_context(goat: GoatRuntime) -> None:
    keeper = keeper_for(goat)
    request = keeper.request()
    parts = breakdown(request.messages, request.tools)
    budget = keeper.budget()
    text = text_chart(parts, budget)
    try:
        from IPython.display import display  # pyright: ignore[reportUnknownVariableType]

        display({"text/html": html_chart(parts, budget), "text/plain": text}, raw=True)
    except ImportError:  # plain Python: the text chart only
        print(text)
    print(context_status_line(goat.session))


async def compact_in_cell(goat: GoatRuntime, focus: str) -> None:
    """`%goat compact` as an await: a live line while the small model answers; Stop cancels it."""
    from goat_jupyter.ui import make_renderer

    renderer = make_renderer("auto")
    renderer.begin("Compacting the conversation")
    keeper = keeper_for(goat, emit=renderer.handle)
    try:
        done = await keeper.compact(focus, keep_tokens=0)
    except asyncio.CancelledError:
        renderer.close()
        raise
    except Exception as exc:  # shown to the user; the conversation is unchanged
        renderer.handle(Notice(f"Compaction failed: {exc}", "error"))
    else:
        if not done:
            renderer.handle(Notice(NOTHING_TO_COMPACT, "info"))
    renderer.close()


NOTHING_TO_COMPACT = "Nothing to compact yet: the conversation is only the newest turn."


def compact_now(goat: GoatRuntime, focus: str) -> None:
    """Compact on a thread with its own loop, for `%goat compact` called from code (not a cell line)."""
    keeper = keeper_for(goat)
    outcome: list[bool | BaseException] = []

    def work() -> None:
        try:
            outcome.append(asyncio.run(keeper.compact(focus, keep_tokens=0)))
        except BaseException as exc:  # shown to the user below
            outcome.append(exc)

    thread = threading.Thread(target=work, name="goat-compact", daemon=True)
    thread.start()
    thread.join()
    result = outcome[0] if outcome else False
    if isinstance(result, BaseException):
        print(f"Compaction failed: {result}")
    elif not result:
        print(NOTHING_TO_COMPACT)
