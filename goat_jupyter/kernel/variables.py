"""The user's variables in one line each (code style's first look): name, type and, for frames and
arrays, shape and columns. Only attributes of known types are read, so no user code runs."""

from __future__ import annotations

import types
from typing import Any

from goat_jupyter.represent.bounded import bounded_repr, is_instance, short, type_name

SHAPED = ("pandas.DataFrame", "pandas.Series", "numpy.ndarray")
PLAIN = (int, float, complex, bool, str, bytes)
HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}
LINE_CHARS = 120


def user_variables(namespace: dict[str, Any], hidden: dict[str, Any]) -> list[str]:
    """One line per variable the user bound: no modules, functions, classes or IPython's own names."""
    return [_line(name, value) for name, value in namespace.items() if _shown(name, value, hidden)]


def _shown(name: str, value: Any, hidden: dict[str, Any]) -> bool:
    if name.startswith("_") or name in HIDDEN or (name in hidden and hidden[name] is value):
        return False
    return not isinstance(value, types.ModuleType | types.FunctionType | types.BuiltinFunctionType | type)


def _line(name: str, value: Any) -> str:
    if any(is_instance(value, dotted) for dotted in SHAPED):
        return f"{name} = {short(value)}"
    if isinstance(value, PLAIN):
        return f"{name} = {bounded_repr(value)[:LINE_CHARS]}"
    return f"{name}: {type_name(value)}"
