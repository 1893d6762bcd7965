"""CellRenderer: the agent's transcript as rich, updatable displays in the running notebook cell."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any, Protocol, cast

from goat_jupyter.citations import OutputIndex
from goat_jupyter.tools.events import (
    Activity,
    Event,
    Notice,
    RunFinished,
    SubagentStarted,
    TextDelta,
    TextRetracted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from goat_jupyter.ui import style
from goat_jupyter.ui.html import (
    CardView,
    card_html,
    card_line_text,
    card_text,
    footer_html,
    header_html,
    nested_html,
    notice_html,
    status_html,
    todo_html,
)
from goat_jupyter.ui.made_cells import MadeCells
from goat_jupyter.ui.nested import AgentTranscript, NestedEvent, apply_nested
from goat_jupyter.ui.safe.cited import cited_answer
from goat_jupyter.ui.safe.markdown import StreamedMarkdown, no_math
from goat_jupyter.ui.summary import relative
from goat_jupyter.ui.text import (
    FOOTER_RULE,
    TodoEntry,
    footer_text,
    header_text,
    keep_tail,
    notice_level,
    notice_text,
    parse_todos,
    status_text,
    todo_lines,
)

FLUSH_INTERVAL_S = 0.05  # at most ~20 updates a second per cell
TICK_S = 0.5  # the status line and running cards' clocks move this often
QUIET_S = 1.0  # the status line shows once nothing else moved for this long
MimeBundle = dict[str, str]
Metadata = dict[str, Any]
_log = logging.getLogger(__name__)


class DisplayHandleLike(Protocol):
    def update(self, obj: Any, /, *, raw: bool = False, metadata: Metadata | None = None) -> None: ...


class DisplayFunction(Protocol):
    """IPython.display.display's calling convention, as far as the renderer uses it."""

    def __call__(
        self, obj: Any, /, *, raw: bool = False, display_id: bool = False, metadata: Metadata | None = None
    ) -> DisplayHandleLike | None: ...


def ipython_display(
    obj: Any, /, *, raw: bool = False, display_id: bool = False, metadata: Metadata | None = None
) -> DisplayHandleLike | None:
    """IPython's display, imported on first use so importing the renderer stays cheap."""
    from IPython.display import display  # pyright: ignore[reportUnknownVariableType]

    return cast("DisplayHandleLike | None", display(obj, raw=raw, display_id=display_id, metadata=metadata))


def transcript_metadata(text: str) -> Metadata:
    """The output's line(s) in a text transcript (`jupyter nbconvert --to goat`); "" leaves it out."""
    return {"goat": {"transcript": text}}


class _Block(ABC):
    """One display in the cell; `bundle` is its current content."""

    handle: DisplayHandleLike | None = None

    @abstractmethod
    def bundle(self, now: float) -> MimeBundle:
        """The mime bundle this block shows now."""

    def transcript(self, bundle: MimeBundle) -> str:
        """What a text transcript shows of this block: its text/plain unless the block says less."""
        return bundle.get("text/plain", "")

    def show(self, display: DisplayFunction, now: float) -> None:
        bundle = self.bundle(now)
        metadata = transcript_metadata(self.transcript(bundle))
        self.handle = display(no_math(bundle), raw=True, display_id=True, metadata=metadata)

    def redraw(self, now: float) -> None:
        if self.handle is not None:
            bundle = self.bundle(now)
            metadata = transcript_metadata(self.transcript(bundle))
            self.handle.update(no_math(bundle), raw=True, metadata=metadata)


class _StaticBlock(_Block):
    def __init__(self, html: str, text: str, transcript: str | None = None) -> None:
        self._bundle = {"text/html": html, "text/plain": text}
        self._transcript = text if transcript is None else transcript

    def bundle(self, now: float) -> MimeBundle:
        return self._bundle

    def transcript(self, bundle: MimeBundle) -> str:
        return self._transcript


class _TextBlock(_Block):
    def __init__(self, text: str, mark: str = "") -> None:
        self._parts = [text]  # joined only when drawn: deltas arrive far more often than updates
        self._cited: tuple[str, str, str] | None = None  # (text, Markdown, plain) with citations marked
        self._mark = mark  # a small line above the text (a replayed answer says so), not in text/plain
        self._markdown = StreamedMarkdown()
        self._final = False  # no more text comes: draw the Markdown of exactly this text
        self._behind = False  # the last drawing showed an earlier text's Markdown

    def complete(self) -> None:
        """No more text comes: from now on draw the Markdown of exactly this text."""
        self._final = True

    def settle(self, now: float) -> None:
        """Redraw if the last drawing showed an earlier text's Markdown."""
        self.complete()
        if self._behind:
            self.redraw(now)

    def append(self, text: str) -> None:
        self._parts.append(text)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def cite(self, index: OutputIndex) -> None:
        """From now on draw the text with its citations checked against `index`."""
        text = self.text
        self._cited = (text, *cited_answer(text, index))

    def drop_tail(self, chars: int) -> int:
        """Remove up to `chars` characters from the end; how many were removed."""
        text = "".join(self._parts)
        kept = max(len(text) - chars, 0)
        self._parts = [text[:kept]]
        return len(text) - kept

    def bundle(self, now: float) -> MimeBundle:
        text = "".join(self._parts)
        self._parts = [text]
        mark = f"<sub>{escape(self._mark)}</sub>\n\n" if self._mark else ""
        if self._cited is not None and self._cited[0] == text:
            return {"text/markdown": mark + self._cited[1], "text/plain": self._cited[2]}
        markdown, current = self._markdown.render(text, final=self._final)
        self._behind = not current
        return {"text/markdown": mark + markdown, "text/plain": text}


class _CardBlock(_Block):
    def __init__(self, card: CardView, started_at: float) -> None:
        self.card = card
        self.started_at = started_at
        self.hidden = False  # a call the user denied: the approval's record stands in its place

    def bundle(self, now: float) -> MimeBundle:
        if self.hidden:
            return {"text/plain": ""}
        if self.card.status == "running":
            self.card.elapsed_s = max(now - self.started_at, 0.0)
        return {"text/html": card_html(self.card), "text/plain": card_text(self.card)}

    def transcript(self, bundle: MimeBundle) -> str:
        return card_line_text(self.card)


class _TodoBlock(_Block):
    """The one checklist of the run; every TodoWrite updates it in place."""

    def __init__(self) -> None:
        self.todos: list[TodoEntry] = []

    def bundle(self, now: float) -> MimeBundle:
        return {"text/html": todo_html(self.todos), "text/plain": "\n".join(todo_lines(self.todos))}


@dataclass
class _Spent:
    """The run's tokens and cost so far: the turns the provider reported, plus an estimate of the text
    streamed since the last report (about 4 characters a token)."""

    tokens: int = 0
    cost_usd: float | None = 0.0  # None once a turn's cost is unknown
    chars_reported: int = 0  # streamed characters already counted in a report

    def add(self, turn: TurnUsage, streamed_chars: int) -> None:
        self.tokens += turn.prompt_tokens + turn.completion_tokens
        self.cost_usd = (
            None if self.cost_usd is None or turn.cost_usd is None else self.cost_usd + turn.cost_usd
        )
        self.chars_reported = streamed_chars

    def so_far(self, streamed_chars: int) -> tuple[int, bool]:
        """(tokens, whether part of it is estimated)."""
        unreported = max(streamed_chars - self.chars_reported, 0) // 4
        return self.tokens + unreported, unreported > 0 or not self.tokens


class _StatusBlock(_Block):
    """`⠙ Working · 12s · 3,456 tokens · $0.012 · ■ Stop to interrupt`, at the bottom while quiet."""

    def __init__(
        self,
        started_at: float,
        spent: Callable[[], tuple[int, bool, float | None]],
        budget: Callable[[], str],
        label: Callable[[], str],
    ) -> None:
        self.started_at = started_at
        self.spent = spent
        self.budget = budget
        self.label = label
        self.hidden = False

    def bundle(self, now: float) -> MimeBundle:
        if self.hidden:
            return {"text/plain": ""}
        tokens, estimated, cost = self.spent()
        text = status_text(
            now - self.started_at, tokens, self.budget(), self.label(), cost_usd=cost, estimated=estimated
        )
        return {"text/html": status_html(text, now - self.started_at), "text/plain": text}

    def transcript(self, bundle: MimeBundle) -> str:
        return ""  # a live clock: nothing a transcript read later should keep


class _AgentBlock(_Block):
    """A subagent transcript with no running Agent card to live in."""

    def __init__(self, agent: AgentTranscript) -> None:
        self.agent = agent

    def bundle(self, now: float) -> MimeBundle:
        return {"text/html": nested_html(self.agent), "text/plain": f"subagent {self.agent.agent_id}"}

    def transcript(self, bundle: MimeBundle) -> str:
        return f"subagent {self.agent.agent_id} · {self.agent.tool_calls} tool calls"


class CellRenderer:
    """Renders events as displays in event order; streamed text and output are coalesced to ~20 Hz."""

    def __init__(
        self,
        display: DisplayFunction = ipython_display,
        clock: Callable[[], float] = time.monotonic,
        *,
        interval_s: float = FLUSH_INTERVAL_S,
    ) -> None:
        self._display = display
        self._clock = clock
        self._interval_s = interval_s
        self._text: _TextBlock | None = None
        self._texts: list[_TextBlock] = []  # every text block, newest last (a retry takes text back)
        self._attempt_chars = 0  # text shown since the last model turn ended (what a retry may take back)
        self._held_space = ""  # whitespace waiting for a new text block's first visible character
        self._cards: dict[str, _CardBlock] = {}
        self._agents: dict[str, tuple[AgentTranscript, _Block]] = {}
        self._dirty: dict[int, _Block] = {}
        self._last_flush = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self.base = os.getcwd()  # the kernel's workspace: paths under it are shown relative
        self._todo: _TodoBlock | None = None
        self._todo_calls: set[str] = set()
        self._status: _StatusBlock | None = None
        self._budget = ""  # the spend against the run's budget, from the latest TurnUsage
        self._spent = _Spent()
        self._started_at = clock()
        self._last_event = clock()
        self._streamed_chars = 0
        self._waiting_user = False
        self._ticker: asyncio.TimerHandle | None = None
        self._footer: _StaticBlock | None = None
        self._made = MadeCells()
        self._sub_usage = SubagentUsage()
        self._activity = "Working"  # the status line's first words
        self._begun = False
        self.text_mark = ""  # shown small above each answer text (e.g. "↻ replayed · gpt-4o")

    def begin(self, activity: str = "Starting") -> None:
        """The live status line at once, before anything else is known (the first run imports for seconds)."""
        self._begun = True
        self._started_at = self._last_event = self._clock()
        self._activity = activity
        self._guard(self._show_status)
        self._arm_ticker()

    def start(self, prompt: str, *, model: str, mode: str, style: str = "default") -> None:
        if not self._begun:
            self._started_at = self._clock()
        self._last_event = self._clock()
        self._activity = "Working"
        self._guard(
            lambda: self._show_header(
                _StaticBlock(header_html(model, mode, style), header_text(model, mode, style))
            )
        )
        if self._ticker is None:
            self._arm_ticker()

    def _show_header(self, header: _StaticBlock) -> None:
        """The header on top: in place of the line `begin` showed, which moves below it."""
        begun, self._status = self._status, None
        if begun is None or begun.handle is None:
            self._add(header)
            return
        self._dirty.pop(id(begun), None)
        header.handle = begun.handle
        header.handle.update(header.bundle(self._clock()), raw=True)
        self._show_status()

    def handle(self, event: Event) -> None:
        self._guard(lambda: self._dispatch(event))

    def close(self) -> None:
        """Mark cards that never finished as stopped, push every pending update, then the footer."""
        self._guard(self._finish)

    def answer_texts(self) -> list[str]:
        """The run's own text blocks as they stand (a subagent's text is not among them)."""
        return [block.text for block in self._texts]

    def cite(self, index: OutputIndex) -> None:
        """Mark each answer text's citations as checked against the notebook (drawn at once)."""
        for block in self._texts:
            block.cite(index)
            self._dirty[id(block)] = block
        self._guard(self._flush)

    def add_bundle(self, bundle: MimeBundle) -> None:
        """A block of the caller's own (an error report) below everything so far."""
        self._guard(
            lambda: self._add(_StaticBlock(bundle.get("text/html", ""), bundle.get("text/plain", "")))
        )

    def show(self, obj: Any) -> DisplayHandleLike | None:
        """Display a widget (approvals, questions) in transcript order; later text goes below it."""
        self._hide_status()
        self._flush()
        self._text = None
        self._waiting_user = True  # no "waiting for the model" line under a question to the user
        return self._display(obj, display_id=True)

    def _guard(self, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception:  # rendering must never break the agent run
            _log.exception("goat: the cell transcript could not be updated")

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, Activity):
            if event.agent_id is None:
                self._activity = event.label
                self._show_status()
                self._flush()  # rare and worth seeing at once
            return
        self._last_event = self._clock()
        self._waiting_user = False
        self._activity = "Working"
        if isinstance(event, TextDelta):
            self._streamed_chars += len(event.text)
        if isinstance(event, TurnUsage):
            self._on_usage(event)
        if isinstance(event, ToolFinished):
            self._made.note(event)
        if not isinstance(event, RunFinished) and event.agent_id is not None:
            self._on_nested(event)
            return
        match event:
            case TextDelta():
                self._on_text(event.text)
            case TextRetracted():
                self._on_retracted(event.chars)
            case ToolStarted() if event.name == "TodoWrite":
                self._todo_calls.add(event.call_id)
            case ToolFinished() if event.call_id in self._todo_calls and not event.output.is_error:
                self._on_todos(event.output)
            case ToolStarted():
                self._start_card(event.call_id, event.name, event.title, event.args)
            case ToolProgress():
                self._on_progress(event)
            case ToolFinished():
                self._on_finished(event)
            case Notice():
                level, text = notice_level(event.level), relative(event.text, self.base)
                shown = "" if event.transient else None  # a transient notice stays out of the transcript
                self._add(_StaticBlock(notice_html(text, level), notice_text(text, level), shown))
            case RunFinished():  # shown last, at close: an error reported after the run goes above it
                event = with_subagents(event, self._sub_usage)
                text = footer_text(event) + self._made.text()
                footer = footer_html(event, self._made.html())
                self._footer = _StaticBlock(footer, text, f"{FOOTER_RULE} {text}")
            case _:  # TurnUsage: the footer reports the totals
                pass

    def _on_usage(self, event: TurnUsage) -> None:
        self._spent.add(event, self._streamed_chars)
        if event.agent_id is not None:
            self._sub_usage.add(event)
        else:
            self._attempt_chars = 0
        if event.budget:
            self._budget = event.budget

    def _on_text(self, text: str) -> None:
        if self._text is not None:
            self._text.append(text)
            self._attempt_chars += len(text)
            self._touch(self._text)
            return
        held = self._held_space + text
        if not held.strip():
            self._held_space = held
            return
        self._held_space = ""
        self._text = _TextBlock(held.lstrip("\n"), self.text_mark)
        self._attempt_chars += len(held.lstrip("\n"))
        self._texts.append(self._text)
        self._add(self._text)

    def _on_retracted(self, chars: int) -> None:
        """A stalled attempt's text goes: the retry streams the answer again (no doubled text)."""
        self._held_space = ""
        chars, self._attempt_chars = min(chars, self._attempt_chars), 0
        for block in reversed(self._texts):  # a notice may have split the attempt's text in two
            if chars <= 0:
                break
            chars -= block.drop_tail(chars)
            self._touch(block)

    def _on_todos(self, output: Any) -> None:
        todos = parse_todos(output.metadata.get("todos"))
        if self._todo is None:
            self._todo = _TodoBlock()
            self._todo.todos = todos
            self._add(self._todo)
            return
        self._todo.todos = todos
        self._touch(self._todo)

    def _start_card(self, call_id: str, name: str, title: str, args: dict[str, Any]) -> _CardBlock:
        block = _CardBlock(CardView(name, title or name, args, base=self.base), self._clock())
        self._cards[call_id] = block
        self._add(block)
        return block

    def _on_progress(self, event: ToolProgress) -> None:
        block = self._cards.get(event.call_id)
        if block is None:
            return
        card = block.card
        if event.title:
            card.title = card.progress_title = event.title
        if event.output:
            card.live_output, card.live_dropped_lines = keep_tail(
                card.live_output, card.live_dropped_lines, event.output
            )
        self._touch(block)

    def _on_finished(self, event: ToolFinished) -> None:
        block = self._cards.get(event.call_id) or self._start_card(event.call_id, event.name, "", {})
        card = block.card
        card.output = event.output
        card.status = style.finished_status(event.output.is_error, event.output.declined)
        card.elapsed_s = event.elapsed_s
        card.waited_s = event.waited_s
        card.title = event.output.title or card.title
        card.live_output = ""
        block.hidden = event.output.metadata.get("denied_by") == "user"
        self._touch(block)
        self._flush()

    def _on_nested(self, event: NestedEvent) -> None:
        agent_id = event.agent_id or ""
        if isinstance(event, SubagentStarted):
            self._agents[agent_id] = self._host_for(agent_id, self._cards.get(event.parent_call_id))
            return
        if agent_id not in self._agents:
            self._agents[agent_id] = self._host_for(agent_id, None)
        transcript, host = self._agents[agent_id]
        if apply_nested(transcript, event):
            self._touch(host)

    def _host_for(self, agent_id: str, card_block: _CardBlock | None) -> tuple[AgentTranscript, _Block]:
        """The subagent's transcript inside its running Agent card, else in a block of its own."""
        transcript = AgentTranscript(agent_id, base=self.base)
        if card_block is not None and card_block.card.status == "running":
            card_block.card.nested.append(transcript)
            return transcript, card_block
        standalone = _AgentBlock(transcript)
        self._add(standalone)
        return transcript, standalone

    def _add(self, block: _Block) -> None:
        """Show a new block below everything so far; pending updates go out first to keep the order."""
        self._hide_status()
        self._settle_texts(but=block)
        now = self._clock()
        if not isinstance(block, _TextBlock):
            self._text = None
        block.show(self._display, now)
        self._last_flush = now

    def _settle_texts(self, but: _Block | None = None) -> None:
        """Pending updates out, every text but `but` drawn as its complete Markdown (none is behind)."""
        settled = [text for text in self._texts if text is not but]
        for text in settled:
            text.complete()
        self._flush()
        now = self._clock()
        for text in settled:
            text.settle(now)

    def _touch(self, block: _Block) -> None:
        """Queue an update; send it now if the last flush is old enough, else at most once per interval."""
        self._dirty[id(block)] = block
        wait = self._interval_s - (self._clock() - self._last_flush)
        if self._closed or wait <= 0:
            self._flush()
            return
        loop = _running_loop()
        if loop is not None and self._timer is None:
            self._timer = loop.call_later(wait, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._guard(self._flush)

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._dirty:
            return
        now = self._clock()
        blocks = list(self._dirty.values())
        self._dirty.clear()
        for block in blocks:
            block.redraw(now)
        self._last_flush = now

    def _arm_ticker(self) -> None:
        loop = _running_loop()
        if loop is not None and not self._closed:
            self._ticker = loop.call_later(TICK_S, self._on_tick)

    def _on_tick(self) -> None:
        self._ticker = None
        self._guard(self._tick)
        self._arm_ticker()

    def _tick(self) -> None:
        """Keep running cards' clocks moving; after a quiet second, show the status line."""
        now = self._clock()
        for block in self._cards.values():
            if block.card.status == "running":
                self._touch(block)
        if self._waiting_user or now - self._last_event < QUIET_S:
            if self._status is not None:
                self._touch(self._status)
            return
        self._show_status()

    def _show_status(self) -> None:
        """The status line at the bottom (added, or its clock and words refreshed)."""
        if self._closed:
            return
        if self._status is None:
            status = _StatusBlock(
                self._started_at, self._spent_so_far, lambda: self._budget, lambda: self._activity
            )
            self._add(status)
            self._status = status
        else:
            self._touch(self._status)

    def _spent_so_far(self) -> tuple[int, bool, float | None]:
        tokens, estimated = self._spent.so_far(self._streamed_chars)
        return tokens, estimated, self._spent.cost_usd

    def _hide_status(self) -> None:
        status, self._status = self._status, None
        if status is not None:
            status.hidden = True
            self._dirty.pop(id(status), None)
            status.redraw(self._clock())

    def _finish(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self._hide_status()
        now = self._clock()
        for block in self._cards.values():
            if block.card.status == "running":
                block.card.elapsed_s = max(now - block.started_at, 0.0)
                block.card.status = "stopped"
                self._dirty[id(block)] = block
        self._closed = True
        self._settle_texts()
        footer, self._footer = self._footer, None
        if footer is not None:
            self._add(footer)


@dataclass
class SubagentUsage:
    """Tokens and cost of subagents' turns, which the top-level RunFinished does not include."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    def add(self, turn: TurnUsage) -> None:
        self.prompt_tokens += turn.prompt_tokens
        self.completion_tokens += turn.completion_tokens
        if turn.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + turn.cost_usd


def with_subagents(event: RunFinished, usage: SubagentUsage) -> RunFinished:
    """The run's totals including its subagents (as `%goat status` counts them)."""
    if not usage.prompt_tokens and not usage.completion_tokens:
        return event
    cost = event.cost_usd
    if usage.cost_usd is not None:
        cost = (cost or 0.0) + usage.cost_usd
    extra = {**event.extra, "subagent_tokens": usage.prompt_tokens + usage.completion_tokens}
    return dataclasses.replace(
        event,
        prompt_tokens=event.prompt_tokens + usage.prompt_tokens,
        completion_tokens=event.completion_tokens + usage.completion_tokens,
        cost_usd=cost,
        extra=extra,
    )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
