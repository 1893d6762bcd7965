"""The line a departed replay ends with says what changed in words: the step, the call and its target,
and the result's few words now and as recorded; never a digest."""

from __future__ import annotations

import pytest

from goat_jupyter.kernel.replay_run import departure_line
from goat_jupyter.replay.recording import CallResult, Departure, RecordedCall


def line(name: str, arguments: dict[str, str] | str, recorded: CallResult, now: CallResult) -> str:
    call = RecordedCall(
        name=name, arguments=arguments, ok=recorded.ok, digest=recorded.digest, summary=recorded.summary
    )
    return departure_line(Departure("2.1", call, now), "/work/space")


@pytest.mark.parametrize(
    ("recorded", "now", "words"),
    [
        (
            CallResult(True, "a" * 16, "2 files"),
            CallResult(True, "b" * 16, "3 files"),
            "(3 files now, 2 recorded)",
        ),
        (
            CallResult(True, "a" * 16, "2 lines"),
            CallResult(True, "b" * 16, "1 line"),
            "(1 line now, 2 lines recorded)",
        ),
        (
            CallResult(True, "a" * 16, "2 files"),
            CallResult(True, "b" * 16, "2 files"),
            "(still 2 files, but not the same content)",
        ),
        (
            CallResult(True, "a" * 16),
            CallResult(True, "b" * 16, "3 files"),
            "(3 files now)",
        ),  # an older recording
        (CallResult(True, "a" * 16), CallResult(True, "b" * 16), "its result changed since the recording."),
    ],
)
def test_a_changed_result_in_words(recorded: CallResult, now: CallResult, words: str) -> None:
    text = line("Glob", {"pattern": "*.csv"}, recorded, now)
    assert text.startswith("Replay stopped at step 2.1 (Glob *.csv): its result changed since the recording")
    assert words in text and "a" * 16 not in text and "b" * 16 not in text and "digest" not in text


def test_success_that_changed_and_odd_arguments() -> None:
    failed = line(
        "Write", {"file_path": "/work/space/notes.txt"}, CallResult(True, ""), CallResult(False, "", "")
    )
    assert failed == "Replay stopped at step 2.1 (Write notes.txt): it failed where the recording succeeded."
    succeeded = line("Bash", "not json {", CallResult(False, ""), CallResult(True, "", ""))
    assert succeeded == "Replay stopped at step 2.1 (Bash): it succeeded where the recording failed."
