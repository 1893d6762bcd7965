"""Before code the agent runs in the kernel: keep what it can change, for "Revert this run".

From the code's AST: every name it may rebind or delete (its old binding is kept: a reference, free)
and every name whose object it may change in place (method calls such as `df.drop(..., inplace=True)`
or `items.append(x)`, item and attribute assignment, augmented assignment). Those objects are copied
when goat knows how (pandas DataFrame and Series, numpy arrays, lists, dicts, sets) and the run's
memory budget (`revert_memory_mb`) allows; anything else is listed as not restorable.
"""

from __future__ import annotations

import ast
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from goat_jupyter.checkpoints.namespace import Binding, NamespaceChange
from goat_jupyter.checkpoints.state import IMMUTABLE, is_module_or_callable, object_size
from goat_jupyter.checkpoints.store import Checkpoints
from goat_jupyter.live.executions import ExecutionLog
from goat_jupyter.tools.base import ToolContext

_CONTAINERS: frozenset[type[object]] = frozenset({list, dict, set})
_IGNORED = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


@dataclass
class Effects:
    """Names the code may rebind or delete, and names whose objects it may change in place."""

    rebinds: set[str] = field(default_factory=lambda: set[str]())
    mutates: set[str] = field(default_factory=lambda: set[str]())


def effects(source: str) -> Effects:
    """What the code may do to the namespace, from its AST (nothing when it does not parse)."""
    found = Effects()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return found
    for node in ast.walk(tree):
        _visit(node, found)
    found.rebinds = {n for n in found.rebinds if _public(n)}
    found.mutates = {n for n in found.mutates if _public(n)}
    return found


def _visit(node: ast.AST, found: Effects) -> None:
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        found.rebinds.add(node.id)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        found.rebinds.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    elif (defined := _defined_name(node)) is not None:
        found.rebinds.add(defined)
    elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        _add_root(node.value, found.mutates)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        _add_root(node.func.value, found.mutates)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        found.mutates.add(node.target.id)  # `items += [x]` extends the list in place


def _defined_name(node: ast.AST) -> str | None:
    """The name a def, class or `except ... as name` binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    return node.name if isinstance(node, ast.ExceptHandler) else None


def _add_root(node: ast.expr, names: set[str]) -> None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.add(node.id)


def _public(name: str) -> bool:
    return not name.startswith("_") and name not in _IGNORED


def keep_namespace(
    namespace: MutableMapping[str, object],
    source: str,
    label: str,
    budget: int,
    log: ExecutionLog | None,
    compare_limit: int | None = None,
) -> NamespaceChange:
    """The before-image of the names `source` may change; copies stay within `budget` bytes, and
    objects up to `compare_limit` bytes (default: `budget`) get a digest of their state after it."""
    found = effects(source)
    limit = budget if compare_limit is None else compare_limit
    change = NamespaceChange(namespace, label, log=log, compare_limit=limit)
    for name in sorted(found.rebinds | found.mutates):
        if name not in namespace:
            change.bindings[name] = Binding(absent=True)
            continue
        value: object = namespace[name]
        if name not in found.mutates or isinstance(value, IMMUTABLE) or is_module_or_callable(value):
            change.bindings[name] = Binding(absent=False, value=namespace[name])
            continue
        _keep_copy(change, name, value, budget - change.copied_bytes)
    return change


def _keep_copy(change: NamespaceChange, name: str, value: object, budget: int) -> None:
    kind = type(value).__name__
    size = object_size(value, budget)
    if size is None:
        change.bindings[name] = Binding(absent=False, value=value)  # rebinding still reverts
        change.not_restorable[name] = (
            f"a {kind}: goat keeps copies only of DataFrames, Series, numpy arrays, lists, dicts and sets, "
            "so changes made to it in place stay"
        )
        return
    if size > budget:
        change.bindings[name] = Binding(absent=False, value=value)
        change.not_restorable[name] = (
            f"a {kind} of {size / 1e6:,.1f} MB, over what was left of the run's copy budget "
            f"({budget / 1e6:,.1f} MB, setting revert_memory_mb): changes made to it in place stay"
        )
        return
    change.bindings[name] = Binding(absent=False, value=copy_object(value), copied=True)
    change.copied_bytes += size


def copy_object(value: object) -> object:
    method = getattr(value, "copy", None)
    if type(value).__module__.split(".")[0] in ("pandas", "numpy") and callable(method):
        return method()  # deep for pandas (its default), a new buffer for numpy
    return _copy_containers(value, {})


def _copy_containers(value: object, memo: dict[int, object]) -> object:
    """Lists, dicts and sets copied with their nested ones; other objects shared (a deepcopy of a
    million ints takes seconds, this a few ms)."""
    if type(value) not in _CONTAINERS:
        return value
    if id(value) in memo:
        return memo[id(value)]
    data: Any = value
    kind: type[object] = type(value)
    if kind is set:
        memo[id(data)] = copied = set(data)  # set items are hashable: no lists, dicts or sets inside
        return copied
    copied = list(data) if kind is list else dict(data)
    memo[id(data)] = copied
    values: Any = data if kind is list else data.values()
    if _CONTAINERS.isdisjoint(set(map(type, values))):
        return copied  # nothing nested to copy: the common case, kept fast
    pairs: Any = enumerate(data) if kind is list else data.items()
    for key in [key for key, item in pairs if type(item) in _CONTAINERS]:
        copied[key] = _copy_containers(data[key], memo)
    return copied


def keep_for_revert(
    namespace: MutableMapping[str, object], source: str, label: str, ctx: ToolContext
) -> NamespaceChange | None:
    """Keep the before-image in the running %%goat run's checkpoint (None outside a run)."""
    checkpoints = ctx.services.checkpoints
    if not isinstance(checkpoints, Checkpoints) or checkpoints.current is None:
        return None
    budget_bytes = int(ctx.session.settings.revert_memory_mb * 1_000_000)
    budget = checkpoints.copy_budget_left(budget_bytes)
    change = keep_namespace(namespace, source, label, budget, ctx.services.executions, budget_bytes)
    checkpoints.keep(change)
    return change
