"""Tool calls a model wrote as text (small and local models often do): recover exactly one, or none.

A reply with no native tool call whose text holds exactly one well-formed call to an offered tool
becomes that call. Accepted: a fenced ```json (or ```tool_call, or unlabelled) block, `<tool_call>`
(or `<tools>`, `<function_call>`) tags, or the whole reply as one JSON object (outer braces doubled
too); the shapes {"name", "arguments"}, {"function", "arguments"} and {"tool",
"parameters"} (arguments as an object or a JSON string). Prose around the one call is allowed (a small
model says what it is about to do). Anything ambiguous stays text: two calls, a call to a tool that is
not offered, a tagged or JSON-labelled block that does not parse, arguments that are not an object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.text import check_json_depth, loads_json, map_strings, without_surrogates

FORMAT_REMINDER = (
    "Your last reply wrote a tool call as text; goat ran it this time. Call tools through the "
    "tool-calling interface (your chat template's tool-call format), never as JSON in your reply."
)
_FENCE_OPEN = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n")
_DECODER = json.JSONDecoder()
# Qwen's template wraps the offered tools in <tools>; small models echo that tag around a call.
_TAG = re.compile(r"<(tool_call|tools|function_call)>(.*?)</\1>", re.DOTALL)
_STRICT_LABELS = ("json", "tool_call")
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "input", "args")


@dataclass(frozen=True)
class TextCall:
    name: str
    arguments: str  # a JSON object, as tool calls carry it


class _AmbiguousError(Exception):
    """The text holds something call-like that cannot be taken as exactly one call."""


def _fenced(text: str) -> list[tuple[Any, str]]:
    """Values of fenced blocks; JSON is decoded from the opening fence, so a ``` inside a string
    (Markdown a model writes to a file) does not cut the block short."""
    found: list[tuple[Any, str]] = []
    position = 0
    while (match := _FENCE_OPEN.search(text, position)) is not None:
        label = match.group(1).lower()
        kind = "json" if label in _STRICT_LABELS else "loose"
        start = len(text) - len(text[match.end() :].lstrip())
        try:
            value, end = _decode_at(text, start)
        except ValueError:
            value, end = None, match.end()
        close = text.find("```", end)
        if text[end : close if close >= 0 else len(text)].strip():
            value = None  # more than one value in the block, or trailing code
        if value is None and kind == "json":
            raise _AmbiguousError("a JSON block that is not valid JSON")
        if label in _STRICT_LABELS or label == "":
            found.append((value, kind))
        position = len(text) if close < 0 else close + 3
    return found


def _decode_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value starting at `start` and where it ends; ValueError past goat's nesting bound."""
    check_json_depth(text[start:])
    return _DECODER.raw_decode(text, start)


def _candidates(text: str) -> list[tuple[Any, str]]:
    """(value, kind): a `tag` must hold a call, `json` and `loose` blocks may hold other data."""
    found = [(_decode_tag(m.group(2)), "tag") for m in _TAG.finditer(text)]
    found.extend(_fenced(text))
    stripped = text.strip()
    if not found and stripped.startswith("{") and stripped.endswith("}"):
        found.append((_decode_loose(stripped), "loose"))
    return found


def _loads(snippet: str) -> Any:
    """JSON, also with doubled outer braces ({{...}}, as in templates a small model has seen)."""
    snippet = snippet.strip()
    try:
        return loads_json(snippet)
    except ValueError:
        if snippet.startswith("{{") and snippet.endswith("}}"):
            return loads_json(snippet[1:-1])
        raise


def _decode_tag(snippet: str) -> Any:
    try:
        return _loads(snippet)
    except ValueError:
        raise _AmbiguousError("a tool-call tag that is not valid JSON") from None


def _decode_loose(snippet: str) -> Any:
    try:
        return _loads(snippet)
    except ValueError:
        return None


def _field(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    present = [obj[key] for key in keys if key in obj]
    if len(present) > 1:
        raise _AmbiguousError("more than one name or argument field")
    return present[0] if present else None


def _arguments(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = loads_json(raw)
        except ValueError:
            raise _AmbiguousError("arguments that are not JSON") from None
    if not isinstance(raw, dict):
        raise _AmbiguousError("arguments that are not an object")
    return cast(dict[str, Any], raw)


def _as_call(value: Any) -> TextCall | None:
    """A call-shaped object as a call; None when the value is not call-shaped at all."""
    if not isinstance(value, dict):
        return None
    obj = cast(dict[str, Any], value)
    name = _field(obj, _NAME_KEYS)
    if not isinstance(name, str) or not set(obj) <= {*_NAME_KEYS, *_ARGUMENT_KEYS, "type", "id"}:
        return None
    arguments = map_strings(_arguments(_field(obj, _ARGUMENT_KEYS)), without_surrogates)  # escaped ones
    return TextCall(name, json.dumps(arguments, ensure_ascii=False))


def _calls(text: str) -> list[TextCall]:
    calls: list[TextCall] = []
    for value, kind in _candidates(text):
        call = _as_call(value)
        if call is not None:
            calls.append(call)
        elif kind == "tag":
            raise _AmbiguousError("a tool-call tag that holds no call")
    return calls


def recover_call(text: str, offered: set[str]) -> TextCall | None:
    """The one tool call written in `text`, if there is exactly one and it names an offered tool."""
    if "{" not in text:
        return None
    try:
        calls = _calls(text)
    except _AmbiguousError:
        return None
    if len(calls) != 1 or calls[0].name not in offered:
        return None
    return calls[0]
