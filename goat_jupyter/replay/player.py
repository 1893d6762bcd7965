"""Turn selection: which scripted turn answers a request (first unplayed turn that matches)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Protocol, cast

from goat_jupyter.replay.cassette import AnyTurn, Cassette
from goat_jupyter.replay.wire import wire_json


class NoTurnError(Exception):
    """No turn is left for a request; the message says why, for a failing test to show."""


@dataclass(frozen=True)
class PickedTurn:
    turn: AnyTurn
    index: int  # position in the cassette, used for stable completion and call ids


class TurnSource(Protocol):
    """Gives the turn that answers a request: a script player or an upstream recorder."""

    @property
    def model(self) -> str | None: ...

    @property
    def remaining(self) -> list[AnyTurn]: ...

    def pick(self, request: dict[str, Any]) -> PickedTurn: ...


def as_messages(messages: Any) -> list[dict[str, Any]]:
    """The request's messages as dicts; anything malformed is skipped."""
    items = cast(list[Any], messages) if isinstance(messages, list) else []
    return [cast(dict[str, Any], m) for m in items if isinstance(m, dict)]


def user_messages(messages: Any) -> list[dict[str, Any]]:
    return [m for m in as_messages(messages) if m.get("role") == "user"]


def message_texts(messages: Any) -> list[str]:
    """Every text content of the messages (string contents and text parts)."""
    texts: list[str] = []
    for message in as_messages(messages):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(str(part.get("text", "")) for part in as_messages(content))
    return texts


def last_user_text(messages: Any) -> str:
    """The last user message's text, for error messages."""
    users = user_messages(messages)
    return " ".join(message_texts(users[-1:])) if users else "(no user message)"


def _preview(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class ScriptPlayer:
    """Plays a cassette's turns once each, thread-safe for concurrent requests."""

    def __init__(self, cassette: Cassette) -> None:
        self._cassette = cassette
        self._unplayed = list(range(len(cassette.turns)))
        self._lock = threading.Lock()

    @property
    def model(self) -> str | None:
        return self._cassette.model

    @property
    def remaining(self) -> list[AnyTurn]:
        with self._lock:
            return [self._cassette.turns[i] for i in self._unplayed]

    def pick(self, request: dict[str, Any]) -> PickedTurn:
        messages = request.get("messages", [])
        haystacks = [json.dumps(messages, ensure_ascii=False), *message_texts(messages)]
        with self._lock:
            for position, index in enumerate(self._unplayed):
                turn = self._cassette.turns[index]
                if turn.match is None or any(turn.match in text for text in haystacks):
                    del self._unplayed[position]
                    return PickedTurn(turn, index)
            left = [self._cassette.turns[i] for i in self._unplayed]
        raise NoTurnError(self._no_turn_message(messages, left))

    @staticmethod
    def _no_turn_message(messages: Any, left: list[AnyTurn]) -> str:
        waiting = [t.match for t in left if t.match is not None]
        message = (
            f"goat replay: no scripted turn matches this request ({len(left)} turn(s) left"
            + (f", waiting for match strings {waiting!r}" if waiting else "")
            + f"). Last user message: {_preview(last_user_text(messages))!r}"
        )
        return message


class LoggedSource:
    """A TurnSource that appends each request, with the cassette turn that answered it, to a JSONL file.

    `GOAT_REPLAY_REQUEST_LOG` turns it on in `start_replay`; scripts/cassette_tokens.py and the example
    tests read the log to compare a cassette's recorded token counts with the requests goat really sends.
    """

    def __init__(self, inner: TurnSource, log_path: str, cassette: str | None) -> None:
        self.inner, self.log_path, self.cassette = inner, log_path, cassette
        self._lock = threading.Lock()

    @property
    def model(self) -> str | None:
        return self.inner.model

    @property
    def remaining(self) -> list[AnyTurn]:
        return self.inner.remaining

    def pick(self, request: dict[str, Any]) -> PickedTurn:
        picked = self.inner.pick(request)
        entry = {"cassette": self.cassette, "turn": picked.index, "request": request}
        with self._lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(wire_json(entry) + "\n")
        return picked
