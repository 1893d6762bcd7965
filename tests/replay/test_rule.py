"""The replay rule (goat_jupyter.replay.rule), decided for every combination of its facts: a re-run with
a usable key asks the model, a cell never replays without a recording of its own, --fresh always asks."""

from __future__ import annotations

import itertools
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.replay.recording import RecordedTurn, Recording
from goat_jupyter.replay.rule import (
    Asked,
    Own,
    ReplayFacts,
    ReplayMemory,
    decide,
    fingerprint,
    needs_key_check,
)
from goat_jupyter.settings import REPLAY_MODES

ASKED: tuple[Asked, ...] = ("fresh", "replay", None)
OWN: tuple[Own, ...] = get_args(Own)
EVERY = [
    ReplayFacts(asked, setting, own, rerun, key)
    for asked, setting, own, rerun, key in itertools.product(
        ASKED, REPLAY_MODES, OWN, (True, False), (True, False)
    )
]


@pytest.mark.parametrize("facts", EVERY, ids=str)
def test_the_rule_holds_for_every_combination(facts: ReplayFacts) -> None:
    decision = decide(facts)
    if facts.own == "none":  # nothing of this cell's own: never a replay
        assert decision.action != "replay"
    if facts.asked == "fresh":
        assert decision.action == "model"
    forced = facts.asked == "replay" or (facts.setting == "always" and facts.asked is None)
    if forced:  # only replay: never the model
        assert decision.action == ("nothing" if facts.own == "none" else "replay")
    if decision.action == "nothing":
        assert forced and facts.own == "none"
    if not forced and facts.asked is None and facts.setting == "never":
        assert decision.action == "model"
    if facts.asked is None and facts.setting == "auto" and facts.own != "none":
        # The rule of the README: a first run replays; a re-run or an edited prompt asks the model
        # when it can be asked, and replays (saying why) when no key is usable.
        wants_model = facts.rerun or facts.own == "edited"
        expected = "model" if wants_model and facts.key_usable else "replay"
        assert decision.action == expected
        assert (decision.why != "") == (wants_model and not facts.key_usable)


def test_the_cases_of_the_issue() -> None:
    def auto(own: Own, rerun: bool, key: bool = True) -> str:
        return decide(ReplayFacts(None, "auto", own, rerun, key)).action

    assert auto("same", rerun=True) == "model"  # Shift+Enter again in the session that recorded it
    assert auto("none", rerun=False) == "model"  # a new cell with another cell's prompt
    assert auto("same", rerun=False) == "replay"  # Run All of a notebook opened from disk, nbconvert
    assert auto("same", rerun=True, key=False) == "replay"  # an offline demo re-runs without a key
    assert decide(ReplayFacts(None, "auto", "same", False, True)).why == ""


@pytest.mark.parametrize("facts", EVERY, ids=str)
def test_the_key_is_checked_only_when_it_changes_the_decision(facts: ReplayFacts) -> None:
    other = ReplayFacts(facts.asked, facts.setting, facts.own, facts.rerun, not facts.key_usable)
    assert needs_key_check(facts) == (decide(facts) != decide(other))


recordings = st.builds(
    Recording,
    model=st.text(max_size=10),
    prompt=st.text(max_size=30),
    turns=st.lists(st.builds(RecordedTurn, text=st.text(max_size=20)), max_size=3),
)


@given(recordings, recordings)
def test_a_recording_made_here_is_a_rerun_and_only_that_one(made: Recording, other: Recording) -> None:
    memory = ReplayMemory()
    memory.kept(made)
    assert memory.rerun(None, made) and memory.rerun("any cell", Recording.model_validate(made.to_json()))
    assert memory.rerun(None, other) == (fingerprint(other) == fingerprint(made))
    assert not memory.rerun(None, None)


def test_a_cell_that_ran_is_a_rerun_by_its_id_and_a_prompt_counts_only_without_one() -> None:
    memory = ReplayMemory()
    memory.ran("cell-a", "say hi")
    assert memory.rerun("cell-a", None) and not memory.rerun("cell-b", None) and not memory.rerun(None, None)
    assert memory.occurrence("say hi") == 0  # a named cell is not counted by its prompt
    memory.ran(None, "say hi")
    memory.ran(None, "say hi")
    assert memory.occurrence("say hi") == 2 and memory.occurrence("other") == 0
