"""What the model reads about an object or an output, in one order: the object's `_repr_llm_()`, an
output's `text/llm+plain`, a registered summariser for the type, then a bounded repr."""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import Any, cast

from goat_jupyter.represent.bounded import bounded_repr, cut, type_name
from goat_jupyter.represent.registry import find

LLM_MIME = "text/llm+plain"
MAX_SUMMARY_CHARS = 6_000  # what one object's summary may take of the model's window


def represent(value: object) -> str:
    """The model-facing text for a live object; never raises (a broken object says why)."""
    try:
        return cut(_represent(value), MAX_SUMMARY_CHARS)
    except Exception as exc:  # a broken __repr__, property or summariser must not fail the caller
        return f"{type_name(value)} (its summary failed: {type(exc).__name__}: {exc})"


def _represent(value: object) -> str:
    own = own_repr_llm(value)
    if own is not None:
        return own
    summarise = find(value)
    if summarise is not None:
        return str(summarise(value))
    return generic(value)


def own_repr_llm(value: object) -> str | None:
    """The object's `_repr_llm_()` (looked up on its class: a proxy answering every attribute is not
    taken at its word), or None."""
    method = getattr(type(value), "_repr_llm_", None)
    if not callable(method):
        return None
    text = method(value)
    return None if text is None else str(text)


def generic(value: object) -> str:
    size = ""
    if isinstance(value, str | bytes):
        size = f" of length {len(value)}"
    elif isinstance(value, Sized):
        size = f" with {len(value)} items"
    return f"{type_name(value)}{size}\n{bounded_repr(value)}"


def output_text(data: Mapping[str, Any]) -> str | None:
    """A display output's model-facing text: its `text/llm+plain` when present, else its text/plain."""
    for mime in (LLM_MIME, "text/plain"):
        value = data.get(mime)
        if value is not None:
            parts = cast("list[object]", value) if isinstance(value, list) else [value]
            return "".join(str(part) for part in parts)
    return None
