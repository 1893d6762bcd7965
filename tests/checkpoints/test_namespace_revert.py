"""Kernel variables in "Revert this run", without a kernel: what code may change (its AST, in every
spelling), what is kept (references, copies within the budget) and what reverting puts back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.checkpoints.changes import RunCheckpoint
from goat_jupyter.checkpoints.namespace import merge, restore_namespace
from goat_jupyter.kernel.namespace_undo import effects, keep_namespace, object_size
from goat_jupyter.live.executions import Execution, ExecutionLog, source_hash

MB = 1_000_000


@pytest.mark.parametrize(
    ("source", "mutated"),
    [
        ('df.drop(columns=["x"], inplace=True)', "df"),
        ('df["a"] = 1', "df"),
        ('df.loc[0, "a"] = 1', "df"),
        ("obj.attr = 1", "obj"),
        ('del d["k"]', "d"),
        ("del obj.attr", "obj"),
        ("items += [1]", "items"),
        ('d["k"].append(1)', "d"),
        ("frame.iloc[0].values.fill(0)", "frame"),
        ("for row in rows: seen.add(row)", "seen"),
        ("def f():\n    cache.clear()\nf()", "cache"),
        ("[log.append(i) for i in range(3)]", "log"),
        ("with lock: state.update(x=1)", "state"),
    ],
)
def test_in_place_changes_in_every_spelling(source: str, mutated: str) -> None:
    assert mutated in effects(source).mutates


@pytest.mark.parametrize(
    ("source", "bound"),
    [
        ("x = y = 1", {"x", "y"}),
        ("a, *rest = [1, 2]", {"a", "rest"}),
        ("for i in range(2): pass", {"i"}),
        ("with open('f') as handle: pass", {"handle"}),
        ("import os.path", {"os"}),
        ("from math import pi as tau", {"tau"}),
        ("def helper(): pass\nclass Model: pass", {"helper", "Model"}),
        ("try:\n    pass\nexcept ValueError as problem:\n    pass", {"problem"}),
        ("(n := 5)", {"n"}),
        ("def g():\n    global total\n    total = 1", {"total"}),
        ("del y", {"y"}),
        ("_private = 1\nIn = 2", set[str]()),
    ],
)
def test_rebinding_in_every_spelling(source: str, bound: set[str]) -> None:
    assert bound <= effects(source).rebinds and not ({"_private", "In"} & effects(source).rebinds)


@given(st.text(max_size=300))
def test_effects_never_raise(source: str) -> None:
    found = effects(source)
    assert isinstance(found.rebinds, set) and isinstance(found.mutates, set)


def run(
    namespace: dict[str, object], source: str, budget: int = 200 * MB, log: ExecutionLog | None = None
) -> object:
    change = keep_namespace(namespace, source, "RunCell cell 1", budget, log)
    exec(source, {}, namespace)
    change.settle()
    return change


def test_revert_puts_back_rebinding_deletion_in_place_changes_and_new_names() -> None:
    frame = pd.DataFrame({"x": [1, 2], "z": [3, 4]})
    namespace: dict[str, object] = {
        "counter": 0,
        "df": frame,
        "y": "keep",
        "items": [1, [2]],
        "arr": np.arange(3),
    }
    change = run(
        namespace,
        'counter += 100\ndf.drop(columns=["x"], inplace=True)\ndel y\nitems[1].append(9)\narr[0] = 7\nnew = 1',
    )
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert namespace["counter"] == 0 and list(namespace["df"].columns) == ["x", "z"]  # type: ignore[union-attr]
    assert namespace["y"] == "keep" and namespace["items"] == [1, [2]] and "new" not in namespace
    assert namespace["arr"].tolist() == [0, 1, 2]  # type: ignore[union-attr]
    assert "removed `new` (created by the run)" in outcome.restored and not outcome.left


def test_what_the_run_did_not_change_is_not_reported_as_restored() -> None:
    namespace: dict[str, object] = {"df": pd.DataFrame({"a": [1]}), "items": [1]}
    change = run(namespace, "print(df.head())\nitems.count(1)")
    assert change.changed == set()  # type: ignore[attr-defined]
    checkpoint = RunCheckpoint(1, "inspect")
    checkpoint.changes.append(change)  # type: ignore[arg-type]
    assert not checkpoint.changed, "a run that only looked offers no revert"
    assert restore_namespace(merge([change])).restored == []  # type: ignore[list-item]


def test_over_the_budget_and_unknown_types_are_listed_not_restored() -> None:
    class Thing:
        value = 0

    big = np.zeros(500_000)
    namespace: dict[str, object] = {"big": big, "thing": Thing(), "small": [1]}
    change = run(namespace, "big[0] = 5\nthing.value = 1\nsmall.append(2)", budget=1 * MB)
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert big[0] == 5 and namespace["small"] == [1]
    joined = "\n".join(outcome.not_restored)
    assert "`big`: a ndarray of 4.0 MB, over what was left of the run's copy budget (1.0 MB" in joined
    assert "`thing`: a Thing: goat keeps copies only of" in joined


def test_the_budget_is_shared_by_the_copies_of_one_call() -> None:
    namespace: dict[str, object] = {"a": np.zeros(100_000), "b": np.zeros(100_000)}  # 0.8 MB each
    change = keep_namespace(namespace, "a[0] = 1\nb[0] = 1", "RunCell", MB, None)
    assert change.copied_bytes == 800_000 and list(change.not_restorable) == ["b"]


def test_a_name_the_user_changed_after_the_run_is_left_alone() -> None:
    log = ExecutionLog()
    namespace: dict[str, object] = {"w": 1, "df": pd.DataFrame({"a": [1]})}
    change = run(namespace, 'w = 2\ndf["b"] = 2', log=log)
    namespace["w"] = 3  # the user rebinds w
    namespace["df"]["c"] = 4  # type: ignore[index]  # and changes df in place, in a cell of theirs
    log.add(Execution("u", 9, source_hash('w = 3\ndf["c"] = 4'), frozenset({"w"}), mutated=frozenset({"df"})))
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert namespace["w"] == 3 and list(namespace["df"].columns) == ["a", "b", "c"]  # type: ignore[union-attr]
    assert sorted(outcome.left) == [
        "`df`: changed after the run by code you ran, left as is",
        "`w`: changed after the run by code you ran, left as is",
    ]


def test_calls_of_one_run_merge_to_the_state_before_the_run() -> None:
    namespace: dict[str, object] = {"items": [1]}
    first = run(namespace, "items.append(2)")
    second = run(namespace, "items = items + [3]")
    restore_namespace(merge([first, second]))  # type: ignore[list-item]
    assert namespace["items"] == [1]


def test_object_sizes() -> None:
    assert object_size(np.zeros(10), MB) == 80
    assert object_size(pd.Series([1.0] * 10), MB) >= 80  # type: ignore[operator]
    assert object_size(object(), MB) is None
    assert object_size(list(range(1_000_000)), 1000) <= 1000 + 8 * 1_000_000  # type: ignore[operator]


def _user_ran(log: ExecutionLog, namespace: dict[str, object], source: str) -> None:
    """A cell of the user's, logged as the kernel logs it (names from its AST, as executions.py does)."""
    found = effects(source)
    exec(source, {}, namespace)
    log.add(
        Execution("u", 9, source_hash(source), frozenset(found.rebinds), mutated=frozenset(found.mutates))
    )


@pytest.mark.parametrize(
    "read",
    [
        "print(total, sales['revenue'].sum())",
        "sales.describe()",
        "sales.sort_values('revenue')",
        "sales['revenue'].tolist()",
        "sales.head().copy()",
        "sales.to_dict()",
        "len(items), items.count(1), items.copy()",
        "arr.sum(), arr.copy().fill(0)",
    ],
)
def test_a_read_after_the_run_is_not_a_change(read: str) -> None:
    """Issue 33 point 5: calls on an object that change nothing leave it revertible."""
    log = ExecutionLog()
    sales = pd.DataFrame({"revenue": [1.0, 2.0]})
    namespace: dict[str, object] = {"sales": sales, "total": 0, "items": [1], "arr": np.arange(3)}
    change = run(
        namespace,
        "sales['revenue'] = sales['revenue'] * 2\ntotal = 6\nitems.append(2)\narr[0] = 9",
        log=log,
    )
    _user_ran(log, namespace, read)
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert outcome.left == []
    assert namespace["sales"]["revenue"].tolist() == [1.0, 2.0]  # type: ignore[index]
    assert namespace["total"] == 0 and namespace["items"] == [1]
    assert namespace["arr"].tolist() == [0, 1, 2]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "write",
    [
        "sales.loc[0, 'revenue'] = 99",
        "sales['new'] = 1",
        "sales.rename(columns={'revenue': 'r'}, inplace=True)",
        "sales.index = [5, 6]",
        "frame = sales\nframe.iloc[1, 0] = -1",  # through another name
        "def grow(f):\n    f.insert(0, 'x', 1)\ngrow(sales)",  # through a function
        "exec(\"sales['revenue'] += 1\")",  # code the AST cannot see
        "sales.attrs['note'] = 1\nsales.drop(index=[0], inplace=True)",
    ],
)
def test_a_real_change_after_the_run_is_left_and_named(write: str) -> None:
    log = ExecutionLog()
    namespace: dict[str, object] = {"sales": pd.DataFrame({"revenue": [1.0, 2.0]})}
    change = run(namespace, "sales['revenue'] = sales['revenue'] * 2", log=log)
    _user_ran(log, namespace, write)
    kept = namespace["sales"]
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert namespace["sales"] is kept, "the user's change stays"
    assert outcome.left == ["`sales`: changed after the run by code you ran, left as is"]


def test_an_object_the_run_bound_and_the_user_changed_in_place_is_left() -> None:
    log = ExecutionLog()
    namespace: dict[str, object] = {"rows": [1]}
    change = run(namespace, "rows = [1, 2]", log=log)
    alias = namespace["rows"]
    alias.append(3)  # type: ignore[union-attr]  # by another name, which no log would connect to `rows`
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert namespace["rows"] == [1, 2, 3] and outcome.left


def test_objects_goat_cannot_compare_fall_back_to_what_the_users_code_named() -> None:
    class Model:
        def __init__(self) -> None:
            self.fitted = False

    log = ExecutionLog()
    old, namespace = Model(), dict[str, object]()
    namespace["model"] = old
    change = run(namespace, "model = type(model)()", log=log)
    _user_ran(log, namespace, "model.fitted = True")
    outcome = restore_namespace(merge([change]))  # type: ignore[list-item]
    assert namespace["model"] is not old
    assert outcome.left == [
        "`model`: code you ran after the run may have changed it (goat cannot compare a Model's contents), "
        "left as is"
    ]
    untouched = run(namespace, "model = type(model)()", log=log)
    restore_namespace(merge([untouched]))  # type: ignore[list-item]
    assert namespace["model"].fitted is True, "never touched after the run: the old binding is back"  # type: ignore[union-attr]


def test_objects_over_the_compare_limit_are_not_digested() -> None:
    namespace: dict[str, object] = {"big": np.zeros(1000)}
    change = keep_namespace(namespace, "big[0] = 1", "RunCell", MB, None, compare_limit=100)
    exec("big[0] = 1", {}, namespace)
    change.settle()
    assert change.after_state == {"big": None}


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
        max_leaves=20,
    )
)
def test_digest_tells_equal_contents_from_changed_ones(value: object) -> None:
    import copy

    from goat_jupyter.checkpoints.state import digest

    holder = [value]
    before = digest(holder, MB)
    assert before is not None and digest(copy.deepcopy(holder), MB) == before
    holder.append(0)
    assert digest(holder, MB) != before


def test_the_headline_says_when_a_revert_was_partial() -> None:
    from goat_jupyter.checkpoints.changes import RevertReport

    full = RevertReport(RunCheckpoint(2, "double revenue"), done=["restored `sales`"])
    assert full.headline("ann") == "Reverted %%goat run 2 (double revenue) by ann"
    caveat = RevertReport(RunCheckpoint(2, "x"), done=["restored `sales`"], caveats=["RunCell cell 1 (...)"])
    assert not caveat.partial, "what kernel code may have done besides is not a known loss"
    partial = RevertReport(
        RunCheckpoint(2, "double revenue"), skipped=["`w`: changed after the run"], not_undone=["Bash: rm x"]
    )
    assert (
        partial.headline()
        == "Partly reverted %%goat run 2 (double revenue); 1 left as is, 1 could not be undone"
    )
    assert partial.text().startswith(partial.headline() + ":\n")
