"""The execution log's view of cells: never ran, ran as [n], edited since, stale (marimo's rule: it reads a
variable another cell changed after it ran); name bindings; what a cell reads and writes into."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.kernel.cell_names import read_names, written_names
from goat_jupyter.kernel.executions import assigned_names, bound_names, snapshot
from goat_jupyter.live import CellInfo
from goat_jupyter.live.executions import Execution, ExecutionLog, source_hash, stale_summary


def cells(*sources: str) -> list[CellInfo]:
    return [CellInfo(f"c{i}", i, "code", source) for i, source in enumerate(sources)]


def ran(log: ExecutionLog, cell: CellInfo, count: int, *names: str, source: str | None = None) -> None:
    """What the kernel's hook records: the names bound, plus what the source reads and writes into."""
    code = cell.source if source is None else source
    log.add(
        Execution(
            cell.id,
            count,
            source_hash(code),
            frozenset(names),
            reads=read_names(code),
            writes=written_names(code),
        )
    )


def test_states_edited_and_out_of_order_without_a_dependency_is_not_stale() -> None:
    nb = cells("a = 1", "b = 2", "c = 3", "d = 4", "%%goat\nhi")
    log = ExecutionLog()
    ran(log, nb[0], 1, "a", source="a = 0")  # edited since
    ran(log, nb[2], 2, "c")
    ran(log, nb[1], 3, "b")  # cell 3 below ran first: by itself that marks nothing
    described = [s.describe() for s in log.states(nb)]
    assert described == [
        "ran as [1], edited since it ran",
        "ran as [3]",
        "ran as [2]",
        "never ran in this kernel",
    ]
    summary = stale_summary(log.states(nb)) or ""
    assert "cell 1 (id c0): ran as [1], edited since it ran; names it set: a" in summary
    assert "cell 2 (id c1)" not in summary and "- cell 3 (id c2)" not in summary


def test_a_cell_that_reads_a_name_changed_later_by_another_cell_is_stale() -> None:
    nb = cells("df = load()", "total = df.sum()", "df = df.dropna()")
    log = ExecutionLog()
    ran(log, nb[0], 1, "df")
    ran(log, nb[1], 2, "total")
    ran(log, nb[2], 3, "df")
    states = log.states(nb)
    assert [s.describe() for s in states] == [
        "ran as [1]",
        "ran as [2], stale: reads `df`, which cell 3 (id c2) changed after this cell ran",
        "ran as [3]",
    ]
    assert "- cell 2 (id c1): ran as [2], stale: reads `df`" in (stale_summary(states) or "")
    ran(log, nb[1], 4, "total")  # re-run after the change: up to date again
    assert not any(s.stale for s in log.states(nb)) and stale_summary(log.states(nb)) is None


@pytest.mark.parametrize(
    "change",
    [
        'df["a"] = 0',
        "df.drop(columns=['a'], inplace=True)",
        "df.loc[0, 'a'] = 1",
        "del df['a']",
        "df.attrs['x'] = 1",
        "df += 1",
        "df.append(1)",
        "df.sort()",
        "for i in range(3):\n    df.append(i)",
        "%time df.update(x)",
        "setattr(df, 'name', 'sales')",
    ],
)
def test_changing_an_object_in_place_makes_its_readers_stale(change: str) -> None:
    nb = cells("df = load()", "print(len(df))", change)
    log = ExecutionLog()
    ran(log, nb[0], 1, "df")
    ran(log, nb[1], 2)
    ran(log, nb[2], 3)  # no rebinding seen: only the write into the object
    assert log.states(nb)[1].describe() == (
        "ran as [2], stale: reads `df`, which cell 3 (id c2) changed after this cell ran"
    )


@pytest.mark.parametrize(
    "reader",
    [
        "print(df)",
        "df.head()",
        "df.describe()",
        "len(df)",
        "df[df.a > 1]",
        "df.plot()",
        "[x for x in df]",
        "def f(df):\n    df.append(1)",
    ],
)
def test_a_cell_that_only_reads_changes_nothing(reader: str) -> None:
    nb = cells("df = load()", "n = len(df)", reader)
    log = ExecutionLog()
    ran(log, nb[0], 1, "df")
    ran(log, nb[1], 2, "n")
    ran(log, nb[2], 3, *(["f"] if reader.startswith("def") else []))
    assert not any(s.stale for s in log.states(nb))


def test_names_a_cell_binds_before_reading_and_goat_prompts_do_not_count() -> None:
    nb = cells("x = 1\nprint(x)", "x = 2", "%%goat\nuse x", "y = x")
    log = ExecutionLog()
    ran(log, nb[0], 1, "x")  # it reads its own x, not the kernel's
    ran(log, nb[3], 2, "y")
    ran(log, nb[1], 3, "x")
    ran(log, nb[2], 4)  # a %%goat prompt is never marked
    described = [s.describe() for s in log.states(nb)]
    assert described == [
        "ran as [1]",
        "ran as [3]",
        "ran as [2], stale: reads `x`, which cell 2 (id c1) changed after this cell ran",
    ]


def test_the_latest_change_is_named_and_unknown_cells_by_execution() -> None:
    nb = cells("a = 1\nb = 2", "c = a + b", "a = 5", "b = 6")
    log = ExecutionLog()
    ran(log, nb[0], 1, "a", "b")
    ran(log, nb[1], 2, "c")
    ran(log, nb[2], 3, "a")
    log.add(Execution(None, 4, source_hash("b = 7"), frozenset({"b"}), by_agent=True))
    assert (
        log.states(nb)[1]
        .describe()
        .endswith("stale: reads `b`, which execution [4] changed after this cell ran")
    )
    ran(log, nb[3], 5, "b")
    assert (
        log.states(nb)[1].describe().endswith("reads `b`, which cell 4 (id c3) changed after this cell ran")
    )


@given(st.text(max_size=200))
def test_read_and_written_names_never_raise(source: str) -> None:
    assert isinstance(read_names(source), frozenset) and isinstance(written_names(source), frozenset)


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


def test_binding_note_says_a_later_cell_changed_the_object_in_place() -> None:
    nb = cells("lst = []", "lst.append(1)", "print(lst)")
    log = ExecutionLog()
    ran(log, nb[0], 1, "lst")
    ran(log, nb[1], 2)
    ran(log, nb[2], 3)  # only reads: not named
    assert log.binding_note("lst", nb) == (
        "`lst` was last set by cell 1 (id c0), execution [1] (run by the user); "
        "changed in place since by cell 2 (id c1)"
    )
    ran(log, nb[0], 4, "lst")  # bound again: the old write no longer counts
    assert (
        log.binding_note("lst", nb) == "`lst` was last set by cell 1 (id c0), execution [4] (run by the user)"
    )
