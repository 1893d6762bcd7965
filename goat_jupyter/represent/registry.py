"""Summarisers by type: `@summarizer(TypeOrDottedName)` registers one; `find` picks the nearest by MRO.

A dotted name (`"pandas.DataFrame"`) is resolved only when its top module is already imported, so
registering a summariser for a library never imports that library.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

Summarizer = Callable[[Any], str]
F = TypeVar("F", bound=Summarizer)


@dataclass(frozen=True)
class Entry:
    target: type | str
    summarise: Summarizer
    builtin: bool


_ENTRIES: list[Entry] = []


def summarizer(target: type | str, *, _builtin: bool = False) -> Callable[[F], F]:
    """Register the decorated `fn(value) -> str` as the model-facing summary of `target` and its
    subclasses; `target` is a class or a dotted name (`"polars.DataFrame"`). A user's or library's
    summariser beats goat's own for the same type; the last registered wins among equals."""
    if not isinstance(cast(object, target), type | str) or (isinstance(target, str) and "." not in target):
        raise TypeError(
            f"summarizer() takes a class or a dotted name like 'pandas.DataFrame', not {target!r}"
        )

    def register(fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"@summarizer({target!r}) decorates a function, not {fn!r}")
        _ENTRIES.append(Entry(target, fn, _builtin))
        return fn

    return register


def unregister(fn: Summarizer) -> None:
    """Forget every registration of `fn` (a user replacing their own summariser)."""
    _ENTRIES[:] = [e for e in _ENTRIES if e.summarise is not fn]


def find(value: object) -> Summarizer | None:
    """The summariser for `value`'s class or its nearest base; a user's before goat's."""
    for cls in type(value).__mro__:
        matches = [e for e in _ENTRIES if _names(e.target, cls)]
        if matches:
            users = [e for e in matches if not e.builtin]
            return (users or matches)[-1].summarise
    return None


def _names(target: type | str, cls: type) -> bool:
    if isinstance(target, type):
        return target is cls
    if target == f"{cls.__module__}.{cls.__qualname__}":
        return True
    return resolve(target) is cls


def resolve(dotted: str) -> object:
    """The object a dotted name names, when its top module is imported already; else None."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            found: object = module
            for attribute in parts[cut:]:
                found = getattr(found, attribute, None)
            return found
    return None
