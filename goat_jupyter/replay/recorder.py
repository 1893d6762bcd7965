"""Record mode: forward each request to a real provider through litellm and save the answer as a turn."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from goat_jupyter.replay.cassette import (
    AnyTurn,
    Cassette,
    ErrorSpec,
    ErrorTurn,
    ResponseTurn,
    ToolCallSpec,
    UsageSpec,
    save_cassette,
)
from goat_jupyter.replay.player import PickedTurn, last_user_text, message_texts, user_messages
from goat_jupyter.replay.server import ReplayServer
from goat_jupyter.text import loads_json

# Request fields passed on to the provider besides messages (anything else is client plumbing).
FORWARDED_FIELDS = (
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "seed",
    "response_format",
    "parallel_tool_calls",
    "reasoning_effort",
)


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Loose):
    name: str = ""
    arguments: str = ""


class _ToolCall(_Loose):
    id: str | None = None
    function: _Function = Field(default_factory=_Function)


class _Message(_Loose):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(_Loose):
    message: _Message = Field(default_factory=_Message)
    finish_reason: str | None = None


class _Usage(_Loose):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class UpstreamCompletion(_Loose):
    """The parts of a provider's chat.completion that a turn keeps."""

    model: str | None = None
    choices: list[_Choice] = Field(default_factory=lambda: list[_Choice]())
    usage: _Usage | None = None


def turn_from_completion(completion: UpstreamCompletion, note: str | None = None) -> ResponseTurn:
    """Convert a provider answer into a turn; arguments stay raw when they are not a JSON object."""
    choice = completion.choices[0] if completion.choices else _Choice()
    calls = [
        ToolCallSpec(id=call.id, name=call.function.name, arguments=_arguments(call.function.arguments))
        for call in choice.message.tool_calls or []
    ]
    usage = completion.usage
    return ResponseTurn(
        text=choice.message.content or "",
        tool_calls=calls,
        usage=None
        if usage is None
        else UsageSpec(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens),
        finish_reason=choice.finish_reason,
        note=note,
    )


def _arguments(raw: str) -> dict[str, Any] | str:
    try:
        value = loads_json(raw)
    except ValueError:
        return raw
    return value if isinstance(value, dict) else raw  # pyright: ignore[reportUnknownVariableType]


class UpstreamRecorder:
    """A TurnSource that asks the real provider and appends each answer to the cassette file."""

    def __init__(
        self,
        out_path: str | os.PathLike[str],
        upstream_model: str | None,
        *,
        upstream_url: str | None = None,
        api_key: str | None = None,
        match_first_user: bool = False,
    ) -> None:
        self.out_path = Path(out_path)
        self.upstream_model, self.upstream_url, self.api_key = upstream_model, upstream_url, api_key
        self.match_first_user = match_first_user
        self.cassette = Cassette(model=None)
        self._lock = threading.Lock()
        save_cassette(self.cassette, self.out_path)

    @property
    def model(self) -> str | None:
        return self.cassette.model

    @property
    def remaining(self) -> list[AnyTurn]:
        return []

    def pick(self, request: dict[str, Any]) -> PickedTurn:
        """Forward the request; a provider error is passed to the client but not recorded."""
        try:
            completion = self._complete(request)
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            code = status if isinstance(status, int) and 400 <= status <= 599 else 502
            return PickedTurn(ErrorTurn(error=ErrorSpec(status=code, message=f"upstream: {exc}")), -1)
        turn = turn_from_completion(completion, note=_preview(last_user_text(request.get("messages"))))
        if self.match_first_user:
            turn.match = _first_user_text(request.get("messages"))
        with self._lock:
            self.cassette.model = self.cassette.model or completion.model
            self.cassette.turns.append(turn)
            index = len(self.cassette.turns) - 1
            save_cassette(self.cassette, self.out_path)
        return PickedTurn(turn, index)

    def _complete(self, request: dict[str, Any]) -> UpstreamCompletion:
        """One non-streaming litellm call with the request's messages and tools."""
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map fetch at import
        import litellm

        litellm.suppress_debug_info = True
        model = self.upstream_model or f"openai/{request.get('model') or 'default'}"
        options = {name: request[name] for name in FORWARDED_FIELDS if name in request}
        response = litellm.completion(
            model=model,
            messages=request.get("messages", []),
            api_base=self.upstream_url,
            api_key=self.api_key,
            stream=False,
            max_retries=0,  # the client sees upstream errors and retries itself
            **options,
        )
        if not isinstance(response, litellm.ModelResponse):
            raise TypeError(f"expected a ModelResponse from litellm, got {type(response).__name__}")
        return UpstreamCompletion.model_validate(response.model_dump())  # pyright: ignore[reportUnknownMemberType]


def _first_user_text(messages: Any) -> str | None:
    """The first non-empty text of the first user message (a string every later request contains)."""
    texts = [text for text in message_texts(user_messages(messages)[:1]) if text]
    return texts[0] if texts else None


def _preview(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def record_server(
    out_path: str | os.PathLike[str],
    upstream_model: str | None,
    *,
    upstream_url: str | None = None,
    api_key: str | None = None,
    match_first_user: bool = False,
    port: int = 0,
) -> ReplayServer:
    """A ReplayServer (not started) that records every exchange into `out_path`."""
    recorder = UpstreamRecorder(
        out_path,
        upstream_model,
        upstream_url=upstream_url,
        api_key=api_key,
        match_first_user=match_first_user,
    )
    return ReplayServer(source=recorder, port=port)
