"""The execution log's view of cells: never ran, ran as [n], edited since, out of order; name bindings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.kernel.executions import assigned_names, bound_names, snapshot
from goat_jupyter.notebook import CellInfo
from goat_jupyter.notebook.executions import Execution, ExecutionLog, source_hash, stale_summary


def cells(*sources: str) -> list[CellInfo]:
    return [CellInfo(f"c{i}", i, "code", source) for i, source in enumerate(sources)]


def ran(log: ExecutionLog, cell: CellInfo, count: int, *names: str, source: str | None = None) -> None:
    log.add(
        Execution(cell.id, count, source_hash(cell.source if source is None else source), frozenset(names))
    )


def test_states_in_order_edited_and_out_of_order() -> None:
    nb = cells("a = 1", "b = 2", "c = 3", "d = 4", "%%goat\nhi")
    log = ExecutionLog()
    ran(log, nb[0], 1, "a", source="a = 0")  # edited since
    ran(log, nb[2], 2, "c")
    ran(log, nb[1], 3, "b")  # cell 3 below ran first
    described = [s.describe() for s in log.states(nb)]
    assert described == [
        "ran as [1], edited since it ran",
        "ran as [3], out of order: cell 3 (id c2) below it ran before it",
        "ran as [2]",
        "never ran in this kernel",
    ]
    summary = stale_summary(log.states(nb)) or ""
    assert "cell 1 (id c0): ran as [1], edited since it ran; names it set: a" in summary
    assert "cell 2 (id c1)" in summary and "- cell 3 (id c2)" not in summary


def test_trailing_whitespace_is_not_an_edit_and_nothing_stale_means_no_summary() -> None:
    nb = cells("x = 1\n\n")
    log = ExecutionLog()
    ran(log, nb[0], 1, "x", source="x = 1")
    assert not log.states(nb)[0].stale and stale_summary(log.states(nb)) is None


def test_binding_notes_name_the_last_execution_and_changes() -> None:
    nb = cells("df = load()", "df = df.dropna()")
    log = ExecutionLog()
    ran(log, nb[0], 1, "df")
    ran(log, nb[1], 2, "df", source="df = df.fillna(0)")
    assert log.binding_note("df", nb) == (
        "`df` was last set by cell 2 (id c1), execution [2] (run by the user), whose source has changed "
        "since: the value comes from the old source"
    )
    assert "a cell no longer in the notebook" in (log.binding_note("df", nb[:1]) or "")
    assert log.binding_note("unknown", nb) is None
    log.add(Execution(None, 3, source_hash("df = 1"), frozenset({"df"}), by_agent=True))
    assert log.binding_note("df", nb) == "`df` was last set by execution [3] (run by goat's RunCell)"


def test_bound_names_see_rebinding_deletion_and_same_object_assignment() -> None:
    namespace: dict[str, object] = {"a": [1], "b": 2, "keep": 3, "_hidden": 4, "In": []}
    before = snapshot(namespace)
    namespace["a"] = [1]
    del namespace["b"]
    namespace["new"] = 5
    namespace["_private"] = 6
    assert bound_names(before, namespace, "a = [1]\ndel b\nnew = 5\nkeep = keep") == {"a", "b", "new", "keep"}


@given(st.text(max_size=200))
def test_assigned_names_never_raise(source: str) -> None:
    assert isinstance(assigned_names(source), set)


def test_the_log_is_bounded() -> None:
    log = ExecutionLog()
    for count in range(6_000):
        log.add(Execution("c0", count, "h", frozenset()))
    assert len(log.records) == 5_000 and log.records[-1].count == 5_999
