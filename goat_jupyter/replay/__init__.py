"""Scripted and recorded OpenAI-compatible LLM server for tests and offline notebooks.

`ReplayServer(turns_or_path).start()` returns a base URL (`http://127.0.0.1:PORT/v1`) that litellm
uses as `api_base` (or `OPENAI_API_BASE`) with a model such as `openai/replay`. The cassette format
is documented in `goat_jupyter.replay.cassette`; `python -m goat_jupyter.replay --help` shows the
command line for playing and recording. A `%%goat` cell's own recording, kept in the notebook, is
`goat_jupyter.replay.recording`.
"""

from __future__ import annotations

import os
from pathlib import Path

from goat_jupyter.replay.cassette import (
    AnyTurn,
    Cassette,
    CassetteLike,
    ErrorSpec,
    ErrorTurn,
    ResponseTurn,
    ToolCallSpec,
    UsageSpec,
    load_cassette,
    save_cassette,
    to_cassette,
)
from goat_jupyter.replay.player import LoggedSource, NoTurnError, ScriptPlayer, TurnSource
from goat_jupyter.replay.server import ReplayServer

__all__ = [
    "REPLAY_API_KEY",
    "REPLAY_MODEL",
    "REQUEST_LOG_ENV",
    "AnyTurn",
    "Cassette",
    "CassetteLike",
    "ErrorSpec",
    "ErrorTurn",
    "NoTurnError",
    "ReplayServer",
    "ResponseTurn",
    "ToolCallSpec",
    "TurnSource",
    "UsageSpec",
    "load_cassette",
    "save_cassette",
    "start_replay",
    "to_cassette",
]

REPLAY_MODEL = "openai/replay"
REPLAY_API_KEY = "goat-replay"  # placeholder start_replay sets when OPENAI_API_KEY is unset
REQUEST_LOG_ENV = "GOAT_REPLAY_REQUEST_LOG"  # a JSONL file: every request and the turn that answered it
_current: list[ReplayServer] = []


def start_replay(source: CassetteLike, *, port: int = 0, set_env: bool = True) -> ReplayServer:
    """Start a replay server for a notebook; with `set_env`, point litellm's OpenAI provider at it.

    Re-running the cell stops the server the previous call started. `set_env` sets
    `OPENAI_API_BASE` (and `OPENAI_API_KEY` to REPLAY_API_KEY when none is set); `stop()` restores them.
    Use the model `openai/replay` (REPLAY_MODEL).
    """
    while _current:
        _current.pop().stop()
    server = ReplayServer(port=port, source=_source(source))
    url = server.start()
    if set_env:
        _point_env_at(
            server,
            {"OPENAI_API_BASE": url, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or REPLAY_API_KEY},
        )
    _current.append(server)
    return server


def _source(source: CassetteLike) -> TurnSource:
    """The cassette's player, logging each request when REQUEST_LOG_ENV names a file."""
    player = ScriptPlayer(to_cassette(source))
    log_path = os.environ.get(REQUEST_LOG_ENV)
    if not log_path:
        return player
    name = str(Path(source).resolve()) if isinstance(source, str | os.PathLike) else None
    return LoggedSource(player, log_path, name)


def _point_env_at(server: ReplayServer, values: dict[str, str]) -> None:
    """Set environment variables now and restore the previous values when the server stops."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)

    def restore() -> None:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    server.on_stop(restore)
