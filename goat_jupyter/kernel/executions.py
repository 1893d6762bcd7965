"""The post-run hook that records what the kernel ran (user cells; RunCell records its own runs)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from goat_jupyter.kernel.cell_names import reads_and_writes
from goat_jupyter.live.executions import Execution, ExecutionLog, source_hash

LOG = ExecutionLog()  # one kernel, one log
_IGNORED = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_installed: list[Any] = []


def snapshot(namespace: Mapping[str, object]) -> dict[str, int]:
    """Each public name's object identity: cheap (no copies), enough to see what a run rebound."""
    return {name: id(value) for name, value in namespace.items() if _public(name)}


def bound_names(before: Mapping[str, int], namespace: Mapping[str, object], source: str) -> frozenset[str]:
    """Names the run created, rebound or deleted, plus those its code assigns (`x = x` keeps the id)."""
    after = snapshot(namespace)
    changed = {name for name, ident in after.items() if before.get(name) != ident}
    changed |= {name for name in before if name not in after}
    return frozenset(changed | (assigned_names(source) & (set(after) | set(before))))


def assigned_names(source: str) -> set[str]:
    """Top-level names the code stores to or deletes, from its AST (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and _public(node.id)
    }


def record(cell_id: str | None, count: int, source: str, names: frozenset[str], *, by_agent: bool) -> None:
    from goat_jupyter.kernel.namespace_undo import effects

    mutated = frozenset(effects(source).mutates)
    reads, writes = reads_and_writes(source)
    LOG.add(Execution(cell_id, count, source_hash(source), names, by_agent, mutated, reads, writes))


class _Recorder:
    """pre_run_cell / post_run_cell hooks of the shell; %%goat cells are skipped (RunCell records)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.before: dict[str, int] = {}

    def pre(self, info: Any) -> None:
        self.before = snapshot(self.shell.user_ns) if _counts(info) else {}

    def post(self, result: Any) -> None:
        info = getattr(result, "info", None)
        count = getattr(result, "execution_count", None)
        if info is None or not _counts(info) or not isinstance(count, int):
            return
        source = str(info.raw_cell)
        names = bound_names(self.before, self.shell.user_ns, source)
        record(getattr(info, "cell_id", None), count, source, names, by_agent=False)


def install(shell: Any) -> None:
    """Register the hooks once per shell (a second %load_ext changes nothing)."""
    if any(recorder.shell is shell for recorder in _installed):
        return
    recorder = _Recorder(shell)
    shell.events.register("pre_run_cell", recorder.pre)
    shell.events.register("post_run_cell", recorder.post)
    _installed.append(recorder)


def _counts(info: Any) -> bool:
    if info is None or getattr(info, "silent", False) or not getattr(info, "store_history", True):
        return False
    return not str(getattr(info, "raw_cell", "")).lstrip().startswith("%%goat")


def _public(name: str) -> bool:
    return not name.startswith("_") and name not in _IGNORED
