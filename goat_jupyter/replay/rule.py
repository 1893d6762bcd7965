"""The replay rule, decided here and nowhere else (README "Reproducible notebooks"): whether a `%%goat`
cell replays its recording or asks the model.

- The first run of a cell in a kernel replays the cell's own recording: Run All of a notebook opened
  from disk, nbconvert, papermill.
- A re-run in the same kernel (the cell ran here already, or its recording was made or played here)
  asks the model; with no usable model key it replays, so offline demos keep working.
- A cell whose prompt changed since its recording asks the model; with no usable key it replays the
  recording, with a line saying so.
- A cell never replays another cell's recording (only `GOAT_REPLAY_FROM` opts in to other notebooks,
  and only where the frontend does not name the cell).
- `--fresh` (or the Run fresh button) asks the model; `--replay` and `replay=always` only replay;
  `replay=never` always asks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal

from goat_jupyter.replay.recording import Recording
from goat_jupyter.settings import ReplayMode

Asked = Literal["fresh", "replay"] | None  # the cell's own request: --fresh / Run fresh, --replay
Own = Literal["none", "same", "edited"]  # the cell's recording: none, of this prompt, of an earlier one
Action = Literal["replay", "model", "nothing"]  # nothing: only replay was asked and there is none
Why = Literal["", "edited_forced", "edited_no_key", "rerun_no_key"]


@dataclass(frozen=True)
class ReplayFacts:
    """What the rule looks at, gathered by the kernel before a `%%goat` cell runs."""

    asked: Asked
    setting: ReplayMode
    own: Own
    rerun: bool  # the cell ran in this kernel already, or its recording was made or played here
    key_usable: bool  # the model can be asked: its key is set, or its endpoint needs none


@dataclass(frozen=True)
class Decision:
    action: Action
    why: Why = ""  # a replay the user may not expect: the cell says why


def decide(facts: ReplayFacts) -> Decision:
    """Replay the cell's own recording, ask the model, or (only replay asked, none kept) do nothing."""
    if facts.asked == "fresh":
        return Decision("model")
    if facts.asked == "replay" or facts.setting == "always":
        return _forced(facts.own)
    if facts.setting == "never" or facts.own == "none":
        return Decision("model")
    if facts.key_usable and (facts.own == "edited" or facts.rerun):
        return Decision("model")
    if facts.own == "edited":
        return Decision("replay", "edited_no_key")
    return Decision("replay", "rerun_no_key" if facts.rerun else "")


def _forced(own: Own) -> Decision:
    if own == "none":
        return Decision("nothing")
    return Decision("replay", "edited_forced" if own == "edited" else "")


def needs_key_check(facts_without_key: ReplayFacts) -> bool:
    """Whether the key changes the decision (checking it loads the model library: only when it does)."""
    yes = decide(_with_key(facts_without_key, True))
    no = decide(_with_key(facts_without_key, False))
    return yes != no


def _with_key(facts: ReplayFacts, key_usable: bool) -> ReplayFacts:
    return ReplayFacts(facts.asked, facts.setting, facts.own, facts.rerun, key_usable)


def fingerprint(recording: Recording) -> str:
    text = json.dumps(recording.to_json(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class ReplayMemory:
    """What this kernel ran, for telling a re-run from a first run (kept for the kernel's life)."""

    cells: set[str] = field(default_factory=lambda: set[str]())  # ids of %%goat cells that ran here
    recordings: set[str] = field(default_factory=lambda: set[str]())  # fingerprints made or played here
    prompts: dict[str, int] = field(default_factory=lambda: dict[str, int]())  # runs per prompt, no cell id

    def rerun(self, cell_id: str | None, recording: Recording | None) -> bool:
        made_here = recording is not None and fingerprint(recording) in self.recordings
        return made_here or (cell_id is not None and cell_id in self.cells)

    def occurrence(self, prompt: str) -> int:
        """How many cells of this prompt ran here before (nbconvert names no cell: the next one runs)."""
        return self.prompts.get(prompt, 0)

    def ran(self, cell_id: str | None, prompt: str) -> None:
        if cell_id is not None:
            self.cells.add(cell_id)
        else:
            self.prompts[prompt] = self.prompts.get(prompt, 0) + 1

    def kept(self, recording: Recording) -> None:
        self.recordings.add(fingerprint(recording))
