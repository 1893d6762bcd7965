"""Keeping a message history valid for the APIs: every tool call answered, no orphan results."""

from __future__ import annotations

from typing import Any, cast

Message = dict[str, Any]
INTERRUPTED_RESULT = "Error: interrupted by the user before this tool finished."


def _call_ids(message: Message) -> list[str]:
    calls = message.get("tool_calls")
    if message.get("role") != "assistant" or not isinstance(calls, list):
        return []
    return [str(cast(dict[str, Any], c).get("id")) for c in cast(list[Any], calls) if isinstance(c, dict)]


def repaired(
    messages: list[Message], missing_text: str = INTERRUPTED_RESULT
) -> tuple[list[Message], list[Message], int]:
    """(valid history, results added, orphan results dropped).

    A call without a result gets `missing_text` right after its group's results; a tool result
    that answers no open call (its call was lost) is dropped.
    """
    out: list[Message] = []
    added: list[Message] = []
    dropped = 0
    open_ids: list[str] = []

    def close_group() -> None:
        for call_id in open_ids:
            result: Message = {"role": "tool", "tool_call_id": call_id, "content": missing_text}
            out.append(result)
            added.append(result)
        open_ids.clear()

    for message in messages:
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id in open_ids:
                open_ids.remove(call_id)
                out.append(message)
            else:
                dropped += 1
            continue
        close_group()
        out.append(message)
        open_ids.extend(_call_ids(message))
    close_group()
    return out, added, dropped
