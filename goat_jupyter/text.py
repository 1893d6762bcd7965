"""Text helpers: keep tool output within what the model should read; make any text encodable;
parse untrusted JSON with its nesting bounded."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

from goat_jupyter.errors import InvalidInputError

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def strip_ansi(text: str) -> str:
    """Terminal colour and title escapes removed (tracebacks and streams carry them)."""
    return _ANSI_ESCAPE.sub("", text)


def multiline(value: object) -> str:
    """An nbformat multiline string: a str, or a list of str in the raw JSON."""
    if isinstance(value, list):
        return "".join(str(part) for part in cast(list[object], value))
    return "" if value is None else str(value)


def cut_middle(text: str, limit: int) -> str:
    """Keep the first and last part of `text` so it fits in about `limit` characters."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    omitted_lines = text.count("\n", head, len(text) - tail)
    note = f"\n\n... [{omitted} characters ({omitted_lines} lines) omitted] ...\n\n"
    return text[:head] + note + text[len(text) - tail :]


def cut_line(line: str, limit: int, *, full_length: int | None = None) -> str:
    """Cut one long line with a marker; `full_length` is its real length when `line` is only its start."""
    length = len(line) if full_length is None else full_length
    if length <= limit:
        return line
    return line[:limit] + f"... [line cut, {length - limit} more characters]"


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """`text` with each lone UTF-16 surrogate as U+FFFD, so it encodes as UTF-8 everywhere.

    They come from a model's JSON (`"\\ud800"`) or from bytes decoded with surrogateescape (file names,
    process output); one left in makes the session file, the cell output and the wire refuse the text."""
    if text.isascii():  # O(1) in CPython: the common case costs nothing
        return text
    return _SURROGATE.sub("\ufffd", text)


def utf8_line(text: str) -> bytes:
    """`text` as UTF-8, lone surrogates replaced (the fast path encodes once)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return without_surrogates(text).encode("utf-8")


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """JSON-like `value` with `change` applied to every string in it, dictionary keys included."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value).items()
        return {map_strings(k, change): map_strings(v, change) for k, v in items}
    if isinstance(value, list):
        return [map_strings(item, change) for item in cast("list[Any]", value)]
    if isinstance(value, tuple):
        return tuple(map_strings(item, change) for item in cast("tuple[Any, ...]", value))
    return value


# Deeper JSON is refused before parsing: Python's parser and every recursive walk after it (pydantic,
# map_strings, json.dumps) would raise RecursionError near 1,000 levels; real data nests a dozen.
MAX_JSON_DEPTH = 200
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


class JsonTooDeepError(InvalidInputError, ValueError):
    """JSON nested past MAX_JSON_DEPTH; a ValueError too, so callers that refuse bad JSON refuse it."""


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text opens more than `limit` arrays or objects inside each other."""
    if text.count("[") + text.count("{") <= limit:  # C-speed: nearly every text stops here
        return False
    depth = 0
    for bracket in _JSON_BRACKET.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return True
    return False


def check_json_depth(text: str, what: str = "JSON") -> None:
    """Raise JsonTooDeepError when `text` nests deeper than goat reads."""
    if json_too_deep(text):
        raise JsonTooDeepError(
            f"{what}: JSON nested more than {MAX_JSON_DEPTH} levels deep, which goat does not read."
        )


def loads_json(text: str | bytes, what: str = "JSON") -> Any:
    """`json.loads` for untrusted text (the model, notebooks, settings, recordings, servers): nesting
    bounded. Raises ValueError (JsonTooDeepError, json.JSONDecodeError, UnicodeDecodeError)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    check_json_depth(text, what)
    return json.loads(text)
