"""A `%%goat` cell's recording: what the model said, kept in the notebook so Run All can replay it.

A recording is a cell output (``display_data``) with its own MIME type, which JupyterLab's save,
nbconvert and papermill keep as written; its ``text/plain`` is one short line and goat's transcript
metadata is empty, so the cell shows a line and ``nbconvert --to goat`` shows nothing::

    {"output_type": "display_data",
     "data": {"application/vnd.goat.recording+json": RECORDING, "text/plain": "goat: recorded ..."},
     "metadata": {"goat": {"transcript": ""}}}

RECORDING is (unknown fields are ignored, never obeyed)::

    {
      "version": 1,
      "model": "gpt-4o-mini",                  # the model that answered: a label, never used to call one
      "prompt": "Write a.txt and read it",     # the cell's prompt (below the %%goat line), stripped
      "turns": [
        {"text": "Writing it.",
         "tool_calls": [{"name": "Write", "arguments": {"file_path": "a.txt", "content": "hi"},
                         "ok": true, "digest": "3f0a6c2e91b4d7aa"},
                        {"name": "Glob", "arguments": {"pattern": "*.csv"},
                         "ok": true, "digest": "9b1e04c7aa23f610", "summary": "2 files"}]},
        {"text": "Done."}
      ],
      "agents": [{"prompt": "Find the CSV files", "turns": [...]}]   # subagents, in the order they started
    }

One turn per model answer of the top-level agent; each subagent's answers under ``agents``, keyed by
the prompt it was given (a replayed request that offers no Agent tool and holds that prompt in a user
message is that subagent's). ``ok`` says whether
the tool call succeeded and ``digest`` is the first 16 hex digits of the SHA-256 of the result text the
model read; ``summary`` (DETERMINISTIC_TOOLS only) is the few words the cell showed for the result
("2 files", "49 lines"), so a departure can say what changed. No tool output, image or key is stored (texts and arguments pass through
`goat_jupyter.config.secrets.redact`). A recording over MAX_RECORDING_BYTES is not kept.

Replay plays the turns through `goat_jupyter.replay.ReplayServer`; the tool calls run for real.
A call departs when its success differs from ``ok``, or when a DETERMINISTIC_TOOLS call's digest
differs; replay then stops at that step (`Departure`; the kernel puts it into words).
"""

from __future__ import annotations

import hashlib
import html
import json
import threading
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goat_jupyter.config.secrets import redact
from goat_jupyter.replay.cassette import AnyTurn, ResponseTurn, ToolCallSpec
from goat_jupyter.replay.player import PickedTurn
from goat_jupyter.text import loads_json

RECORDING_MIME = "application/vnd.goat.recording+json"
_QUIET = "font-size:var(--jp-ui-font-size0,11px);color:var(--jp-ui-font-color3,#757575)"
RECORDING_VERSION = 1
MAX_RECORDING_BYTES = 256_000
DIGEST_CHARS = 16
SUMMARY_CHARS = 80
# Tools whose result depends only on the files and notebooks they read, so a changed digest means the
# environment differs from the recording's (Bash, RunCell, WebFetch ... vary: only their success counts).
DETERMINISTIC_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})


class _Lenient(BaseModel):
    """A recording is untrusted input: extra fields (a permission mode, a hook) are dropped unread."""

    model_config = ConfigDict(extra="ignore")


class RecordedCall(_Lenient):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=lambda: dict[str, Any]())
    ok: bool = True
    digest: str = ""
    summary: str = ""


class RecordedTurn(_Lenient):
    text: str = ""
    tool_calls: list[RecordedCall] = Field(default_factory=lambda: list[RecordedCall]())


class RecordedAgent(_Lenient):
    prompt: str = ""
    turns: list[RecordedTurn] = Field(default_factory=lambda: list[RecordedTurn]())


class Recording(_Lenient):
    version: int = RECORDING_VERSION
    model: str = ""
    prompt: str = ""
    turns: list[RecordedTurn] = Field(default_factory=lambda: list[RecordedTurn]())
    agents: list[RecordedAgent] = Field(default_factory=lambda: list[RecordedAgent]())

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_defaults=True) | {"version": self.version}

    def summary(self) -> str:
        calls = sum(len(turn.tool_calls) for turn in self.turns)
        turns = len(self.turns)
        return (
            f"Kept for replay: {self.model or 'model'}, {turns} turn{'' if turns == 1 else 's'}, "
            f"{calls} tool call{'' if calls == 1 else 's'}"
        )


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def parse_recording(data: object) -> Recording | None:
    """A recording from an output's JSON, or None when it is not one this version can play."""
    try:
        found = Recording.model_validate(data)
    except ValidationError:
        return None
    return found if found.version == RECORDING_VERSION else None


def recording_bundle(
    recording: Recording, *, replayed: bool = False
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The display data and metadata of the recording's output; None when it is too large to keep.
    `replayed` marks a run that replayed it (the labextension shows "Run fresh" under such a cell)."""
    data = recording.to_json()
    if len(json.dumps(data, ensure_ascii=False).encode()) > MAX_RECORDING_BYTES:
        return None
    goat: dict[str, Any] = {"transcript": ""} | ({"replayed": True} if replayed else {})
    quiet = f'<div style="{_QUIET}">{html.escape(recording.summary())}</div>'  # not a monospace line
    shown = {RECORDING_MIME: data, "text/html": quiet, "text/plain": recording.summary()}
    return shown, {"goat": goat}


@dataclass(frozen=True)
class CallResult:
    """What a tool call gave, as far as a recording keeps it."""

    ok: bool
    digest: str
    summary: str = ""  # the few words shown for the result ("3 files"), for DETERMINISTIC_TOOLS


@dataclass(frozen=True)
class Departure:
    """Where a replay left its recording: the step (`2.1`), the recorded call, and what the call gave now."""

    step: str
    call: RecordedCall
    now: CallResult

    @property
    def kind(self) -> Literal["failed", "succeeded", "changed"]:
        if self.call.ok and not self.now.ok:
            return "failed"
        return "succeeded" if self.now.ok and not self.call.ok else "changed"


def record(
    model: str,
    prompt: str,
    messages: list[dict[str, Any]],
    results: dict[str, CallResult],
    agents: list[list[dict[str, Any]]] | None = None,
) -> Recording:
    """The recording of a run from the messages it added (and each subagent's) and its calls' results."""
    recorded = [_agent(history, results) for history in agents or []]
    return Recording(
        model=model, prompt=prompt, turns=_turns(messages, results), agents=[a for a in recorded if a.prompt]
    )


def _turns(messages: list[dict[str, Any]], results: dict[str, CallResult]) -> list[RecordedTurn]:
    return [_turn(m, results) for m in messages if m.get("role") == "assistant"]


def _agent(messages: list[dict[str, Any]], results: dict[str, CallResult]) -> RecordedAgent:
    first = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    prompt = redact(first) if isinstance(first, str) else ""
    return RecordedAgent(prompt=prompt, turns=_turns(messages, results))


def _turn(message: dict[str, Any], results: dict[str, CallResult]) -> RecordedTurn:
    content = message.get("content")
    text = redact(content) if isinstance(content, str) else ""
    calls = [_call(_mapping(call), results) for call in _items(message.get("tool_calls"))]
    return RecordedTurn(text=text, tool_calls=calls)


def _call(call: dict[str, Any], results: dict[str, CallResult]) -> RecordedCall:
    function = _mapping(call.get("function"))
    raw = redact(str(function.get("arguments") or "{}"))
    try:
        parsed: object = cast(object, loads_json(raw))
    except ValueError:
        parsed = raw
    mapping = _mapping(parsed)
    arguments: dict[str, Any] | str = mapping if isinstance(parsed, dict) else raw
    result = results.get(str(call.get("id")), CallResult(ok=False, digest=""))
    summary = redact(result.summary)[:SUMMARY_CHARS] if result.ok else ""
    return RecordedCall(
        name=str(function.get("name")),
        arguments=arguments,
        ok=result.ok,
        digest=result.digest,
        summary=summary,
    )


def _mapping(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _items(value: object) -> list[object]:
    return cast(list[object], value) if isinstance(value, list) else []


def call_id(turn: int, position: int, agent: int | None = None) -> str:
    prefix = "call_goatrec_" if agent is None else f"call_goatrec_a{agent}_"
    return f"{prefix}{turn}_{position}"


def _cassette_turn(turn: RecordedTurn, index: int, agent: int | None = None) -> ResponseTurn:
    calls = [
        ToolCallSpec(id=call_id(index, n, agent), name=c.name, arguments=c.arguments)
        for n, c in enumerate(turn.tool_calls)
    ]
    return ResponseTurn(text=turn.text, tool_calls=calls)


def _user_texts(request: dict[str, Any]) -> list[str]:
    messages = _items(request.get("messages"))
    return [str(m.get("content")) for m in map(_mapping, messages) if m.get("role") == "user"]


def _offers_agent_tool(request: dict[str, Any]) -> bool:
    tools = [_mapping(_mapping(tool).get("function")) for tool in _items(request.get("tools"))]
    return any(tool.get("name") == "Agent" for tool in tools)


class RecordingSource:
    """A TurnSource for the replay server: the recording's turns in order (a subagent's request gets
    its own agent's), and after a departure an empty final answer so every agent stops at once."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self._next = 0
        self._agent_next = [0] * len(recording.agents)
        self._lock = threading.Lock()
        self.departure: Departure | None = None

    @property
    def model(self) -> str | None:
        return self.recording.model or None

    @property
    def remaining(self) -> list[AnyTurn]:
        turns = self.recording.turns
        return [_cassette_turn(turns[i], i) for i in range(self._next, len(turns))]

    def pick(self, request: dict[str, Any]) -> PickedTurn:
        with self._lock:
            agent = self._agent_of(request)
            if agent is not None:
                return self._pick_agent(agent)
            index = self._next
            if self.departure is not None or index >= len(self.recording.turns):
                return PickedTurn(ResponseTurn(text=""), len(self.recording.turns))
            self._next += 1
        return PickedTurn(_cassette_turn(self.recording.turns[index], index), index)

    def _agent_of(self, request: dict[str, Any]) -> int | None:
        """The recorded subagent this request comes from: the first whose prompt it holds and whose
        turns are not all played (subagents never offer the Agent tool; the top level does)."""
        if not self.recording.agents or _offers_agent_tool(request):
            return None
        texts = _user_texts(request)
        matching = [
            index
            for index, agent in enumerate(self.recording.agents)
            if agent.prompt and any(agent.prompt in text for text in texts)
        ]
        playing = [i for i in matching if self._agent_next[i] < len(self.recording.agents[i].turns)]
        return (playing or matching or [None])[0]

    def _pick_agent(self, agent: int) -> PickedTurn:
        turns = self.recording.agents[agent].turns
        index = self._agent_next[agent]
        if self.departure is not None or index >= len(turns):
            return PickedTurn(ResponseTurn(text=""), len(turns))
        self._agent_next[agent] += 1
        return PickedTurn(_cassette_turn(turns[index], index, agent), index)

    def expected(self, tool_call_id: str) -> tuple[str, RecordedCall] | None:
        """The step (`2.1`: turn 2, call 1) and recorded call a replayed call id stands for."""
        parts = tool_call_id.removeprefix("call_goatrec_").split("_")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None
        turn, position = int(parts[0]), int(parts[1])
        calls = self.recording.turns[turn].tool_calls if turn < len(self.recording.turns) else []
        if position >= len(calls):
            return None
        return f"{turn + 1}.{position + 1}", calls[position]

    def check(self, tool_call_id: str, now: CallResult) -> Departure | None:
        """Compare a replayed call's result with the recording; the departure, once, if it departs."""
        found = self.expected(tool_call_id)
        if found is None or self.departure is not None:
            return None
        step, call = found
        if _departs(call, now):
            self.departure = Departure(step, call, now)
        return self.departure


def _departs(call: RecordedCall, now: CallResult) -> bool:
    if call.ok != now.ok:
        return True
    return call.name in DETERMINISTIC_TOOLS and bool(call.digest) and call.digest != now.digest
