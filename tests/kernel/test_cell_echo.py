"""CellEcho and SyncGate on their own: what a RunCell publishes keeps the order the code produced it
in, whatever the mix of prints and displays; many prints go out as few messages; the pulse reaches
the tool card only while the cell's code holds the thread."""

from __future__ import annotations

import threading
import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.kernel.cell_echo import CellEcho, SyncGate

Sent = list[tuple[str, dict[str, Any]]]


def echo_into(sent: Sent, clock: list[float]) -> CellEcho:
    return CellEcho(lambda kind, content: sent.append((kind, content)), clock=lambda: clock[0])


writes = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["stdout", "stderr"]), st.text(min_size=1, max_size=5)),
        st.tuples(st.just("display"), st.text(max_size=3)),
    ),
    max_size=40,
)


@given(writes, st.lists(st.floats(0, 0.2), min_size=40, max_size=40))
def test_published_order_is_the_order_produced(items: list[tuple[str, str]], steps: list[float]) -> None:
    sent: Sent = []
    clock = [0.0]
    echo = echo_into(sent, clock)
    for (kind, text), step in zip(items, steps, strict=False):
        clock[0] += step
        if kind == "display":
            echo("display_data", {"data": {"text/plain": text}, "metadata": {}, "transient": {}})
        else:
            echo("stream", {"name": kind, "text": text})
    echo.flush()
    published = [
        (c["name"], c["text"]) if kind == "stream" else ("display", c["data"]["text/plain"])
        for kind, c in sent
    ]
    assert _merged(published) == _merged(items)


def _merged(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Consecutive text of one stream joined (how the notebook shows it); displays stay apart."""
    out: list[tuple[str, str]] = []
    for kind, text in items:
        if out and kind != "display" and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))
    return out


def test_a_print_loop_goes_out_in_few_messages() -> None:
    sent: Sent = []
    clock = [0.0]
    echo = echo_into(sent, clock)
    for i in range(1_000):
        clock[0] += 0.001  # a second of prints, one a millisecond
        echo("stream", {"name": "stdout", "text": f"{i}\n"})
    echo.flush()
    assert "".join(c["text"] for _, c in sent) == "".join(f"{i}\n" for i in range(1_000))
    assert len(sent) <= 25, f"{len(sent)} messages for 1000 prints"


def test_the_first_print_after_a_quiet_spell_leaves_at_once() -> None:
    sent: Sent = []
    clock = [10.0]
    echo = echo_into(sent, clock)
    echo("stream", {"name": "stdout", "text": "line 0\n"})
    assert sent == [("stream", {"name": "stdout", "text": "line 0\n"})]


def test_the_gate_lets_the_pulse_in_only_while_the_code_runs() -> None:
    gate = SyncGate()
    ran: list[str] = []
    gate.while_blocked(lambda: ran.append("before"))
    with gate.inside():
        gate.while_blocked(lambda: ran.append("inside"))
    gate.while_blocked(lambda: ran.append("after"))
    assert ran == ["inside"]


def test_leaving_the_code_waits_for_a_pulse_in_flight() -> None:
    gate = SyncGate()
    events: list[str] = []
    started = threading.Event()

    def slow_tick() -> None:
        started.set()
        time.sleep(0.2)
        events.append("tick done")

    with gate.inside():
        pulse = threading.Thread(target=gate.while_blocked, args=(slow_tick,))
        pulse.start()
        assert started.wait(2)
    events.append("code left")
    pulse.join()
    assert events == ["tick done", "code left"], "the loop resumes only after the tick let go"


def test_an_exception_in_the_code_still_closes_the_gate() -> None:
    gate = SyncGate()
    try:
        with gate.inside():
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    ran: list[str] = []
    gate.while_blocked(lambda: ran.append("late"))
    assert not gate.active and ran == []
