"""Token counts a real provider would report for a replayed request, counted with litellm's tokenizer.

A cassette's `usage` should be what the request goat really sends holds: the system prompt, the tool
definitions and the whole history (images included). `request_usage` counts that for one logged
request and its turn; `update_cassette` rewrites a cassette's usage (and a realistic pace) from a
request log written with GOAT_REPLAY_REQUEST_LOG (see scripts/cassette_tokens.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

from goat_jupyter.replay.cassette import Cassette, ResponseTurn, UsageSpec, load_cassette, save_cassette
from goat_jupyter.text import loads_json

COUNT_MODEL = "gpt-4o-mini"  # the examples' default model: its tokenizer (o200k) counts
TOLERANCE = 0.15  # recorded prompt tokens may differ this much from the count before a test fails
FIRST_TOKEN_S = 0.35  # pace of a hosted model: time to first token grows with the prompt
FIRST_TOKEN_S_PER_1K = 0.04
CHUNK_DELAY_S = 0.015  # about 60 words a second


def prompt_tokens(request: dict[str, Any]) -> int:
    """Tokens of the request's messages plus its tool definitions."""
    tools = cast(list[Any] | None, request.get("tools"))
    return _count(messages=request.get("messages", []), tools=tools)


def completion_tokens(turn: ResponseTurn) -> int:
    """Tokens of the turn's text and tool calls as the model wrote them."""
    parts = [turn.text, *(f"{call.name}{call.arguments_json()}" for call in turn.tool_calls)]
    text = "".join(parts)
    return _count(text=text) if text else 1


def read_log(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The entries of a request log: {"cassette", "turn", "request"}."""
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield cast(dict[str, Any], loads_json(line))


def off_counts(cassette: Cassette, entries: Iterable[dict[str, Any]]) -> list[str]:
    """One line per played turn whose recorded prompt tokens are off by more than TOLERANCE."""
    problems: list[str] = []
    for entry in entries:
        turn = cassette.turns[int(entry["turn"])]
        if not isinstance(turn, ResponseTurn):
            continue
        counted = prompt_tokens(entry["request"])
        recorded = turn.usage.prompt_tokens if turn.usage else None
        if recorded is None or abs(recorded - counted) > TOLERANCE * counted:
            problems.append(
                f"turn {entry['turn']}: recorded {recorded} prompt tokens, the request holds {counted}"
            )
    return problems


def update_cassette(path: str | os.PathLike[str], entries: Iterable[dict[str, Any]]) -> int:
    """Rewrite usage and pace of the played turns of the cassette at `path`; returns how many changed.

    A turn played in more than one setting (headless and in JupyterLab, where Read sees the live
    outputs) records the mean of its requests, so the check holds for each while they stay close."""
    cassette = load_cassette(path)
    counts: dict[int, list[int]] = {}
    for entry in entries:
        counts.setdefault(int(entry["turn"]), []).append(prompt_tokens(entry["request"]))
    changed = 0
    for index, played in counts.items():
        turn = cassette.turns[index]
        if isinstance(turn, ResponseTurn):
            prompt = round(sum(played) / len(played))
            turn.usage = UsageSpec(prompt_tokens=prompt, completion_tokens=completion_tokens(turn))
            turn.delay_s = round(FIRST_TOKEN_S + FIRST_TOKEN_S_PER_1K * prompt / 1000, 2)
            turn.chunk_delay_s = CHUNK_DELAY_S
            changed += 1
    save_cassette(cassette, path)
    return changed


def _count(**what: Any) -> int:
    """litellm's token_counter, also where goat turned it off for speed (in a kernel, agent/litellm_loader.py)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map fetch at import
    import litellm

    counter: Any = litellm.token_counter  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    disabled = litellm.disable_token_counter
    litellm.disable_token_counter = False
    try:
        return int(counter(model=COUNT_MODEL, **what))
    finally:
        litellm.disable_token_counter = disabled
