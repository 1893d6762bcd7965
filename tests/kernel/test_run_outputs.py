"""A running cell's outputs rebuilt from its iopub messages, by JupyterLab's OutputArea rules (what a
reloaded tab shows in place of the cell's saved outputs)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.kernel import live
from goat_jupyter.kernel.run_outputs import MAX_STREAM_CHARS, RunOutputs


def display(text: str, display_id: str | None = None) -> dict[str, Any]:
    transient = {"display_id": display_id} if display_id else {}
    return {"data": {"text/plain": text}, "metadata": {}, "transient": transient}


def texts(outputs: RunOutputs) -> list[str]:
    return [
        str(s.output["text"] if "text" in s.output else s.output["data"]["text/plain"]) for s in outputs.shown
    ]


def test_updates_replace_every_output_of_their_display_id_only() -> None:
    outputs = RunOutputs()
    outputs.apply("display_data", display("header", "h"))
    outputs.apply("display_data", display("Working", "s"))
    outputs.apply("display_data", display("copy of header", "h"))
    outputs.apply("update_display_data", display("header, later", "h"))
    outputs.apply("update_display_data", display("nobody shows this", "unknown"))
    assert texts(outputs) == ["header, later", "Working", "header, later"]
    assert [item["display_id"] for item in outputs.listing()] == ["h", "s", "h"]
    assert all("transient" not in item["output"] for item in outputs.listing())
    assert outputs.listing()[0]["output"]["output_type"] == "display_data"


def test_streams_of_one_name_merge_and_other_outputs_split_them() -> None:
    outputs = RunOutputs()
    for name, text in [("stdout", "a"), ("stdout", "b"), ("stderr", "c"), ("stdout", "d")]:
        outputs.apply("stream", {"name": name, "text": text})
    outputs.apply("display_data", display("x"))
    outputs.apply("stream", {"name": "stdout", "text": "e"})
    assert texts(outputs) == ["ab", "c", "d", "x", "e"]


def test_clear_output_now_and_at_the_next_output() -> None:
    outputs = RunOutputs()
    outputs.apply("display_data", display("old"))
    outputs.apply("clear_output", {"wait": True})
    assert texts(outputs) == ["old"], "wait=True keeps what is shown until something new comes"
    outputs.apply("update_display_data", display("still old"))
    assert texts(outputs) == ["old"]
    outputs.apply("stream", {"name": "stdout", "text": "new"})
    assert texts(outputs) == ["new"]
    outputs.apply("clear_output", {"wait": False})
    assert texts(outputs) == []


def test_errors_and_results_are_kept_and_unknown_messages_ignored() -> None:
    outputs = RunOutputs()
    outputs.apply("status", {"execution_state": "busy"})
    outputs.apply("comm_msg", {"comm_id": "x", "data": {}})
    outputs.apply("execute_result", {"data": {"text/plain": "1"}, "metadata": {}, "execution_count": 3})
    outputs.apply("error", {"ename": "E", "evalue": "v", "traceback": []})
    assert [item["output"]["output_type"] for item in outputs.listing()] == ["execute_result", "error"]


@given(st.lists(st.text(max_size=50_000), max_size=12))
def test_a_stream_keeps_its_tail_within_the_bound(parts: list[str]) -> None:
    outputs = RunOutputs()
    for part in parts:
        outputs.apply("stream", {"name": "stdout", "text": part})
    joined = "".join(parts)
    kept = texts(outputs)
    assert kept == ([joined[-MAX_STREAM_CHARS:]] if parts else [])


def test_only_messages_of_a_live_run_are_observed() -> None:
    """`observe` is what the Session tap calls for every message: other requests' output is not kept."""
    outputs = RunOutputs()
    live._outputs["run-1"] = outputs  # pyright: ignore[reportPrivateUsage]
    try:
        live.observe("display_data", display("mine", "d"), "run-1")
        live.observe("display_data", display("another cell's"), "run-2")
        live.observe("display_data", display("no parent"), None)
        live.observe("display_data", ["not", "a", "dict"], "run-1")
        assert texts(outputs) == ["mine"]
    finally:
        live._outputs.pop("run-1")  # pyright: ignore[reportPrivateUsage]
