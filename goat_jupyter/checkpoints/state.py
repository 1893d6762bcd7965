"""What a kernel object holds, in bytes and as a digest: how revert tells a read from a change.

A name the user only looked at after a run (`print(df["x"].sum())`) keeps its digest; one the user
changed in place gets another. pandas and numpy are optional: duck-typed here.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import zlib
from typing import Any, Final, cast

IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), frozenset, range)
SAME_OBJECT: Final = "same object"  # a digest that says: the binding's identity tells everything
_CONTAINERS: frozenset[type[object]] = frozenset({list, dict, set})


def is_module_or_callable(value: object) -> bool:
    return type(value).__name__ == "module" or callable(value)


def object_size(value: object, limit: int) -> int | None:
    """Bytes a copy takes (counting stops past `limit`), or None for a type goat cannot copy.

    pandas copies share the Python objects of object columns, and builtin containers are copied with
    their nested containers but share everything else: only the copied buffers count."""
    module = type(value).__module__.split(".")[0]
    kind = type(value).__name__
    data: Any = value
    if module == "pandas" and kind in ("DataFrame", "Series"):
        usage: Any = data.memory_usage(index=True, deep=False)
        return int(usage.sum()) if kind == "DataFrame" else int(usage)
    if module == "numpy" and kind == "ndarray":
        return int(data.nbytes)
    if isinstance(value, (list, dict, set)):
        return _container_size(data, limit)
    return None


def _container_size(value: object, limit: int) -> int:
    """The size of a builtin container and the containers nested in it, stopping once past `limit`."""
    total, stack, seen = 0, [value], set[int]()
    while stack and total <= limit:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        stack.extend(_nested(item))
    return total


def _nested(container: object) -> list[object]:
    """The lists, dicts and sets directly inside a container (types gathered in C first: a list of a
    million numbers costs a few ms)."""
    items: list[object] = (
        list(cast("dict[object, object]", container).values())
        if type(container) is dict
        else list(cast("list[object]", container))
    )
    if _CONTAINERS.isdisjoint(set(map(type, items))):
        return []
    return [item for item in items if type(item) in _CONTAINERS]


def digest(value: object, limit: int) -> str | None:
    """What `value` holds now, to compare later: SAME_OBJECT for values whose identity says it all
    (immutable ones, modules, functions), None where goat cannot tell (other types, over `limit`).

    A CRC-32 of the contents: fast (a copy's cost), and a change that keeps it has a 1 in 4 billion chance."""
    if isinstance(value, IMMUTABLE) or is_module_or_callable(value):
        return SAME_OBJECT
    size = object_size(value, limit)
    if size is None or size > limit:
        return None
    found = _Crc()
    try:
        _contents(value, found)
    except Exception:  # an object inside that pickle refuses: no digest, the caller stays careful
        return None
    return f"{found.value:08x}"


class _Crc:
    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Any) -> None:
        self.value = zlib.crc32(data, self.value)


def _contents(value: object, found: _Crc) -> None:
    module = type(value).__module__.split(".")[0]
    data: Any = value
    if module == "pandas":
        frame = hasattr(data, "columns")
        name = None if frame else data.name
        found.update(repr((type(data).__name__, data.shape, str(data.dtypes), name)).encode())
        labels = [data.index, data.columns] if frame else [data.index]
        for part in [*labels, *([data[column] for column in data.columns] if frame else [data])]:
            _array(part, found)
    elif module == "numpy":
        _array(data, found)
    else:
        found.update(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _array(values: Any, found: _Crc) -> None:
    """A numpy array, pandas column or index: its buffer as is, or its objects pickled."""
    numpy: Any = importlib.import_module("numpy")
    array: Any = values.to_numpy() if hasattr(values, "to_numpy") else numpy.asarray(values)
    found.update(repr((array.shape, array.dtype.str)).encode())
    if array.dtype.hasobject:
        found.update(pickle.dumps(array.tolist(), protocol=pickle.HIGHEST_PROTOCOL))
    else:
        found.update(numpy.ascontiguousarray(array).reshape(-1).view(numpy.uint8))
