"""goat's summaries of real pandas and numpy objects, in process: awkward shapes and fuzzed
containers stay bounded and never raise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.represent import represent as summarize
from goat_jupyter.represent.order import MAX_SUMMARY_CHARS

BOUND = MAX_SUMMARY_CHARS + 200  # the whole summary is cut to this, plus the cut's note


def test_awkward_frames() -> None:
    duplicated = pd.DataFrame([[1, "a", 2.5]], columns=["x", "x", "y"])
    shown = summarize(duplicated)
    assert "  x  int64      0 null  min 1 mean 1 max 1\n  x  str        0 null  top: 'a' 1" in shown
    multi = pd.DataFrame(np.zeros((3, 4)), columns=pd.MultiIndex.from_product([["a", "b"], ["p", "q"]]))
    assert "('a', 'p')  float64    0 null  min 0 mean 0 max 0" in summarize(multi)
    empty = summarize(pd.DataFrame())
    assert empty.startswith("pandas.DataFrame with shape (0, 0)") and "(no columns)" in empty
    category = pd.DataFrame({"c": pd.Categorical(["u", None, "v"])})
    assert "c  category   1 null  top: 'u' 1, 'v' 1 (2 distinct)" in summarize(category)


def test_series_and_arrays_of_odd_kinds() -> None:
    unnamed = summarize(pd.Series([1, None, 3]))
    assert unnamed.startswith("pandas.Series None with 3 values, dtype float64\nnulls: 1")
    strings = summarize(np.array(["a" * 10_000] * 50))
    assert strings.startswith("numpy.ndarray with shape (50,) and dtype <U10000") and len(strings) < BOUND
    assert summarize(np.float64(1.5)).startswith("numpy.float64\nnp.float64(1.5)")
    assert "dtype object" in summarize(np.array([object(), None]))


def test_a_subclass_named_like_pandas_is_not_treated_as_a_frame() -> None:
    class DataFrame:  # not pandas': the repr of an instance, no crash
        shape = (1, 1)

        def __repr__(self) -> str:
            return "mine"

    assert summarize([DataFrame()]).startswith("list with 1 items\n[mine]")


class Exploding:
    def __repr__(self) -> str:
        raise ValueError("no repr")


class Lying:
    """Claims a length it does not have."""

    def __len__(self) -> int:
        raise RuntimeError("len failed")


leaves = st.one_of(
    st.integers(),
    st.text(max_size=200),
    st.floats(allow_nan=True),
    st.none(),
    st.just(pd.DataFrame({"a": range(30), "b": ["x"] * 30})),
    st.just(pd.Series(range(5), name="s")),
    st.just(np.arange(6).reshape(2, 3)),
    st.builds(Exploding),
    st.builds(Lying),
)
nested = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=8),
        st.dictionaries(st.text(max_size=10), children, max_size=8),
        st.tuples(children, children),
    ),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None)
@given(nested)
def test_any_nested_value_gives_a_bounded_summary(value: Any) -> None:
    text = summarize(value)
    assert isinstance(text, str) and 0 < len(text) < BOUND
