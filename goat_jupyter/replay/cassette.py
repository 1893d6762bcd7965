"""Cassette format for the replay server: pydantic models plus load and save.

A cassette is a JSON file you can write and edit by hand::

    {
      "version": 1,
      "model": "gpt-4o-mini",            # optional; the model name the server reports
      "turns": [
        {"text": "Let me look.",
         "tool_calls": [{"name": "Read", "arguments": {"file_path": "/tmp/a.txt"}}]},
        {"text": "Done: the file says hello."}
      ]
    }

Each turn answers one chat-completions request. A turn is one of:

- a response: ``text`` (assistant text, may be empty), ``tool_calls`` (each ``{"id"?, "name",
  "arguments"}``; ``arguments`` is an object, or a raw string sent exactly as given, so it may be
  malformed JSON on purpose), ``usage`` (``{"prompt_tokens", "completion_tokens"}``; estimated as
  characters / 4 when absent), ``finish_reason`` (default ``"tool_calls"`` when there are tool
  calls, else ``"stop"``), ``delay_s`` (wait before answering), ``chunk_delay_s`` (wait between
  streamed chunks), ``cut_stream: true`` (send part of the answer, then close the connection
  without ``[DONE]``, to exercise retries), ``stall_after: N`` with ``stall_s`` (send N stream
  chunks, then nothing for ``stall_s`` seconds, then close: a provider that hangs mid-stream);
- an error: ``{"error": {"status": 429, "message": "...", "retry_after"?: seconds,
  "retry_after_ms"?: milliseconds}}``, answered with that HTTP status and an OpenAI-style error
  body (and ``Retry-After`` / ``retry-after-ms`` headers).

Any turn may carry ``match``: the turn is only used for a request whose messages contain that
substring (in their JSON form or in any message's text), so concurrent requests (subagents,
parallel calls) each find their own turn. The server plays the first unplayed turn that matches;
turns without ``match`` match anything (so put matched turns first when mixing). ``note`` is
free text for humans and is ignored. A script is the same list of turns written in Python (a list
of dicts); a file may also hold a bare list of turns. When no turn matches, the server answers
HTTP 400 naming the last user message and the turns left.

On the wire a streamed response looks like the real API: the role, the text in word-sized
content deltas, each tool call as a first chunk with ``index``, ``id``, ``type`` and the function
name followed by its arguments string in 8-character pieces, a final chunk with
``finish_reason``, the usage (its own chunk when ``stream_options.include_usage`` is set), then
``data: [DONE]``. Tool call ids default to ``call_replay_<turn>_<n>``.

Recording (``python -m goat_jupyter.replay record OUT.json --upstream-model ...``) writes the
same format: one response turn per request with the provider's text, tool calls, usage and
finish reason, and the last user message as ``note``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from goat_jupyter.text import loads_json

CASSETTE_VERSION = 1


class _Strict(BaseModel):
    """Unknown fields are errors, so a typo in a hand-written script fails loudly."""

    model_config = ConfigDict(extra="forbid")


class ToolCallSpec(_Strict):
    id: str | None = None
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=lambda: dict[str, Any]())

    def arguments_json(self) -> str:
        """The arguments string as sent on the wire (raw strings pass through untouched)."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class UsageSpec(_Strict):
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class ResponseTurn(_Strict):
    text: str = ""
    tool_calls: list[ToolCallSpec] = Field(default_factory=lambda: list[ToolCallSpec]())
    usage: UsageSpec | None = None
    finish_reason: str | None = None
    match: str | None = None
    delay_s: float = Field(default=0.0, ge=0)
    chunk_delay_s: float = Field(default=0.0, ge=0)
    cut_stream: bool = False
    stall_after: int | None = Field(default=None, ge=0)
    stall_s: float = Field(default=0.0, ge=0)
    note: str | None = None

    def resolved_finish_reason(self) -> str:
        """The finish reason sent to the client: explicit, or derived from the content."""
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


class ErrorSpec(_Strict):
    status: int = Field(ge=400, le=599)
    message: str = "Scripted error from the replay server."
    retry_after: float | None = Field(default=None, ge=0)
    retry_after_ms: int | None = Field(default=None, ge=0)


class ErrorTurn(_Strict):
    error: ErrorSpec
    match: str | None = None
    delay_s: float = Field(default=0.0, ge=0)
    note: str | None = None


def _turn_kind(value: Any) -> str:
    """Tell the two turn shapes apart by the presence of an `error` key."""
    if isinstance(value, dict):
        return "error" if "error" in value else "response"
    return "error" if isinstance(value, ErrorTurn) else "response"


Turn = Annotated[
    Annotated[ResponseTurn, Tag("response")] | Annotated[ErrorTurn, Tag("error")],
    Discriminator(_turn_kind),
]
AnyTurn = ResponseTurn | ErrorTurn


class Cassette(_Strict):
    version: Literal[1] = CASSETTE_VERSION
    model: str | None = None
    turns: list[Turn] = Field(default_factory=lambda: list[AnyTurn]())


CassetteLike = Cassette | str | os.PathLike[str] | Sequence[Any] | dict[str, Any]


def load_cassette(path: str | os.PathLike[str]) -> Cassette:
    """Read a cassette file (an object with `turns`, or a bare list of turns)."""
    data = loads_json(Path(path).read_text(encoding="utf-8"))
    return to_cassette(data)


def to_cassette(source: CassetteLike) -> Cassette:
    """Accept a Cassette, a file path, a dict, or a list of turns (dicts or models)."""
    if isinstance(source, Cassette):
        return source
    if isinstance(source, (str, os.PathLike)):
        return load_cassette(source)
    if isinstance(source, dict):
        return Cassette.model_validate(source)
    return Cassette.model_validate({"turns": list(source)})


def cassette_json(cassette: Cassette) -> str:
    """Serialise compactly for humans: defaults left out, two-space indent, UTF-8 kept."""
    body = cassette.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
    ordered = {"version": cassette.version, "model": cassette.model, "turns": body.get("turns", [])}
    if cassette.model is None:
        del ordered["model"]
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"


def save_cassette(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Write atomically (temp file + rename) so a crash never leaves half a cassette."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(cassette_json(cassette))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
