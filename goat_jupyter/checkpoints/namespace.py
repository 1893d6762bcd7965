"""Kernel variables in "Revert this run": what code the agent ran could change, kept before it ran.

For every name the code may rebind or delete, the old binding (a reference, free); for objects it may
change in place, a copy when goat knows how to copy it and the run's memory budget allows. Reverting
puts those bindings back, leaves alone any name the user changed after the run (and names it), and
lists what could not be restored. "Changed after the run" is decided by the object itself: its
binding, and a digest of its contents taken right after the run (state.py), so code that only read
it changes nothing. IPython-free: the namespace is a plain mapping.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field

from goat_jupyter.checkpoints.state import SAME_OBJECT, digest
from goat_jupyter.live.executions import ExecutionLog

DEFAULT_COMPARE_LIMIT = 200_000_000  # bytes: larger objects are not digested (see revert_memory_mb)


@dataclass(frozen=True)
class Binding:
    """A name before the run: unbound, the old object (reference), or a copy of an object it may mutate."""

    absent: bool
    value: object = None
    copied: bool = False


@dataclass
class NamespaceChange:
    """One RunCell / KernelInspect call's before-image of the user namespace."""

    namespace: MutableMapping[str, object]
    label: str
    bindings: dict[str, Binding] = field(default_factory=lambda: dict[str, Binding]())
    not_restorable: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    copied_bytes: int = 0
    log: ExecutionLog | None = None
    mark: int = 0  # the log's count at the end of the run: later user executions are the user's
    after: dict[str, int | None] = field(default_factory=lambda: dict[str, int | None]())
    # a digest of each object right after the run (None: goat cannot tell, see state.digest)
    after_state: dict[str, str | None] = field(default_factory=lambda: dict[str, str | None]())
    compare_limit: int = DEFAULT_COMPARE_LIMIT

    changed: set[str] = field(default_factory=lambda: set[str]())  # names the call really changed

    def settle(self) -> None:
        """Right after the run: what each name is bound to and holds now (a different binding or
        contents later = the user), and which names the call really changed (a `df.describe()`
        changes nothing)."""
        self.after = {name: identity(self.namespace, name) for name in self.bindings}
        self.after_state = {
            name: digest(self.namespace[name], self.compare_limit)
            for name in self.bindings
            if name in self.namespace
        }
        self.mark = self.log.added if self.log is not None else 0
        self.changed = {
            name for name, before in self.bindings.items() if not _unchanged(self.namespace, name, before)
        }

    @property
    def names(self) -> list[str]:
        return sorted(self.bindings)


def merge(changes: list[NamespaceChange]) -> NamespaceChange | None:
    """One run's before-images as one: a name's earliest binding is its state before the run, its
    latest `after` the state the run left (reverting call by call would see goat's own rebinding as
    a change made after the run)."""
    if not changes:
        return None
    last = changes[-1]
    merged = NamespaceChange(
        changes[0].namespace,
        "the run's kernel code",
        log=last.log,
        mark=last.mark,
        compare_limit=last.compare_limit,
    )
    for change in changes:
        for name, binding in change.bindings.items():
            if name not in merged.bindings:
                merged.bindings[name] = binding
                if name in change.not_restorable:
                    merged.not_restorable[name] = f"{change.not_restorable[name]} ({change.label})"
        merged.after.update(change.after)
        merged.after_state.update(change.after_state)
        merged.changed |= change.changed
    return merged


def identity(namespace: MutableMapping[str, object], name: str) -> int | None:
    return id(namespace[name]) if name in namespace else None


def touched_after(change: NamespaceChange) -> set[str]:
    """Names the user's own executions after the run bound or may have changed in place (from their
    code: only consulted for objects goat cannot digest)."""
    if change.log is None:
        return set()
    later = change.log.since(change.mark)
    return {name for record in later if not record.by_agent for name in record.names | record.mutated}


def changed_after(change: NamespaceChange, name: str, touched: set[str]) -> str | None:
    """Why `name` must be left as is (the user changed it after the run), or None when it may be
    restored: rebound or deleted, or contents that no longer match the digest taken after the run."""
    if identity(change.namespace, name) != change.after.get(name):
        return "changed after the run by code you ran"
    if name not in change.namespace:
        return None
    kept = change.after_state.get(name)
    if kept is None:
        if name not in touched:
            return None
        kind = type(change.namespace[name]).__name__
        return f"code you ran after the run may have changed it (goat cannot compare a {kind}'s contents)"
    if kept == SAME_OBJECT or digest(change.namespace[name], change.compare_limit) == kept:
        return None
    return "changed after the run by code you ran"


@dataclass
class NamespaceOutcome:
    restored: list[str] = field(default_factory=lambda: list[str]())
    left: list[str] = field(default_factory=lambda: list[str]())
    not_restored: list[str] = field(default_factory=lambda: list[str]())


def restore_namespace(change: NamespaceChange) -> NamespaceOutcome:
    """Put the old bindings back, except where the user changed the name after the run."""
    outcome = NamespaceOutcome()
    touched = touched_after(change)
    for name, before in sorted(change.bindings.items()):
        why = changed_after(change, name, touched)
        if why is not None:
            outcome.left.append(f"`{name}`: {why}, left as is")
        elif _unchanged(change.namespace, name, before):
            continue
        elif before.absent:
            del change.namespace[name]
            outcome.restored.append(f"removed `{name}` (created by the run)")
        else:
            change.namespace[name] = before.value
            outcome.restored.append(f"restored `{name}`")
    for name, why in sorted(change.not_restorable.items()):
        outcome.not_restored.append(f"`{name}`: {why}")
    return outcome


def _unchanged(namespace: MutableMapping[str, object], name: str, before: Binding) -> bool:
    if before.absent:
        return name not in namespace
    if name not in namespace:
        return False
    current = namespace[name]
    if not before.copied:
        return current is before.value
    return _equal(current, before.value)


def _equal(current: object, kept: object) -> bool:
    """Whether an object the code might have mutated still equals its copy (pandas, numpy, builtins)."""
    try:
        same = getattr(current, "equals", None)
        if callable(same) and type(current).__module__.startswith("pandas"):
            return bool(same(kept))
        if type(current).__module__.startswith("numpy"):
            import numpy

            return bool(numpy.array_equal(current, kept, equal_nan=True))  # pyright: ignore[reportArgumentType, reportUnknownMemberType]
        return bool(current == kept)
    except Exception:  # an odd __eq__: restoring the copy is the safe side
        return False
