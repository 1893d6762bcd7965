"""The representation order and goat's summarisers, in process on real libraries: a user's
summariser beats goat's, dotted names never import, `_repr_llm_` is taken from the class only, and
every summary stays bounded and never raises."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import polars as pl
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import goat_jupyter
from goat_jupyter.represent import output_text, represent, spill, summarizer, unregister
from goat_jupyter.represent.order import MAX_SUMMARY_CHARS

matplotlib.use("Agg")
import matplotlib.pyplot as plt


@pytest.fixture
def registered() -> Iterator[list[Any]]:
    added: list[Any] = []
    yield added
    for fn in added:
        unregister(fn)


def test_the_public_hook_is_the_registry() -> None:
    assert goat_jupyter.summarizer is summarizer


def test_a_users_summariser_beats_goats_and_reaches_subclasses(registered: list[Any]) -> None:
    @summarizer("pandas.DataFrame")
    def mine(frame: Any) -> str:
        return f"MINE {frame.shape}"

    registered.append(mine)

    class Sub(pd.DataFrame):
        pass

    assert represent(pd.DataFrame({"a": [1]})) == "MINE (1, 1)"
    assert represent(Sub({"a": [1, 2]})) == "MINE (2, 1)"
    unregister(mine)
    assert represent(pd.DataFrame({"a": [1]})).startswith("pandas.DataFrame with shape (1, 1)")


def test_the_real_module_path_and_a_class_name_alike(registered: list[Any]) -> None:
    class Point:
        pass

    by_class = summarizer(Point)(lambda p: "by class")
    registered.append(by_class)
    assert represent(Point()) == "by class"
    by_path = summarizer("pandas.core.frame.DataFrame")(lambda f: "by path")
    registered.append(by_path)
    assert represent(pd.DataFrame()) == "by path"


def test_bad_registrations_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match="dotted name"):
        summarizer("DataFrame")
    with pytest.raises(TypeError, match="dotted name"):
        summarizer(42)  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match="decorates a function"):
        summarizer("a.B")("not callable")  # pyright: ignore[reportArgumentType]


def test_a_dotted_name_never_imports_its_library(tmp_path: Path) -> None:
    code = (
        "import sys, goat_jupyter\n"
        "goat_jupyter.summarizer('torch.Tensor')(lambda t: 't')\n"
        "from goat_jupyter.represent import represent\n"
        "represent({'a': [1, 2]}); represent(3)\n"
        "heavy = [m for m in ('pandas', 'numpy', 'polars', 'xarray', 'matplotlib', 'plotly', 'torch') if m in sys.modules]\n"
        "print(heavy)"
    )
    env = {"PYTHONPATH": str(Path(goat_jupyter.__file__).parent.parent), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


def test_repr_llm_is_read_from_the_class_not_a_proxy() -> None:
    class Own:
        def _repr_llm_(self) -> str:
            return "own view"

    class Proxy:  # answers every attribute: not taken at its word
        def __getattr__(self, name: str) -> Any:
            return lambda: "forged"

        def __repr__(self) -> str:
            return "Proxy()"

    class Broken:
        def _repr_llm_(self) -> str:
            raise ValueError("boom")

    class Declines:
        def _repr_llm_(self) -> None:
            return None

    assert represent(Own()) == "own view"
    assert represent(Proxy()).endswith("Proxy()")
    assert "its summary failed: ValueError: boom" in represent(Broken())
    assert represent(Declines()).startswith(f"{__name__}.")


def test_output_text_prefers_llm_plain_and_joins_line_lists() -> None:
    assert output_text({"text/plain": "p", "text/llm+plain": ["a\n", "b"]}) == "a\nb"
    assert output_text({"text/plain": ["x", "y"]}) == "xy"
    assert output_text({"image/png": "..."}) is None


def test_polars_frames_and_series() -> None:
    frame = pl.DataFrame({"n": [1, 2, None, 4], "s": ["a", "b", "a", None]})
    text = represent(frame)
    assert text.startswith("polars.dataframe.frame.DataFrame with shape (4, 2)")
    assert "n" in text and "1 null  min 1 mean 2.333 max 4" in text and "top: 'a' 2" in text
    series = represent(frame["n"])
    assert "with 4 values, dtype Int64" in series and "nulls: 1" in series


def test_xarray_array_and_dataset() -> None:
    array = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("t", "x"), name="temp", attrs={"units": "K"})
    text = represent(array)
    assert "'temp' (t: 2, x: 3), dtype float64" in text and "'units': 'K'" in text and "mean 2.5" in text
    dataset = represent(xr.Dataset({"temp": array, "rain": (("t",), [1.0, 2.0])}))
    assert "(t: 2, x: 3)" in dataset and "temp (t, x) float64" in dataset and "rain (t) float64" in dataset


def test_figures_name_their_titles_labels_and_series() -> None:
    figure, axes = plt.subplots()
    axes.plot([1, 2, 3], label="revenue")
    axes.set_title("Sales")
    axes.set_xlabel("month")
    text = represent(figure)
    assert "axes 0: title 'Sales', x 'month', y ''" in text and "line 'revenue' (3 points)" in text
    plt.close(figure)
    chart = go.Figure(go.Bar(x=["a", "b"], y=[1, 2], name="counts"), layout={"title": {"text": "Bars"}})
    assert "title 'Bars'" in represent(chart) and "bar 'counts' (2 points)" in represent(chart)


def test_exceptions_show_type_notes_frames_and_cause() -> None:
    text = ""
    try:
        try:
            {}["missing"]
        except KeyError as inner:
            raise ValueError("bad row") from inner
    except ValueError as error:
        setattr(error, "__notes__", ["while loading sales.csv"])  # add_note, on Python 3.10 too  # noqa: B010
        text = represent(error)
    assert text.startswith("ValueError: bad row\nnote: while loading sales.csv\nlast frames:")
    assert "caused by KeyError: 'missing'" in text


def test_a_200_mb_array_and_a_wide_frame_are_summarised_quickly_and_bounded() -> None:
    huge = np.ones((5000, 5000))
    text = represent(huge)
    assert "190.7 MB" in text and "stats: min 1 mean 1 max 1 std 0" in text and len(text) < 1_000
    wide = pd.DataFrame(np.zeros((3, 1700)))
    assert len(represent(wide)) < MAX_SUMMARY_CHARS and "1700 float64" in represent(wide)


def test_spill_keeps_everything_and_refuses_nothing(tmp_path: Path) -> None:
    text = "\n".join(f"line {i}" for i in range(5_000)) + "\n" + "z" * 5_000
    first = spill(text, tmp_path / "out", 1_000, summary="counts")
    again = spill(text, tmp_path / "out", 1_000)
    assert first.path is not None and first.path == again.path, "stored once by content"
    stored = first.path.read_text()
    assert stored.replace("\n", "") == text.replace("\n", ""), "every character, long lines split"
    assert max(len(line) for line in stored.split("\n")) <= 2_000
    assert "line 0\n" in first.text and "[summary]\ncounts" in first.text and str(first.path) in first.text
    assert spill("short", tmp_path / "out", 1_000).text == "short"
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    failed = spill(text, blocked, 1_000)
    assert failed.path is None and "could not be stored" in failed.text and len(failed.text) < 1_500


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=30_000))
def test_spill_stores_any_text_readably(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        kept = spill(text, Path(folder), 1_000)
        if kept.path is None:
            assert kept.text == text
        else:
            assert len(kept.text) < 1_000 + 600
            assert kept.path.read_bytes().decode("utf-8").replace("\n", "") == "".join(
                "\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text
            ).replace("\n", "")
