"""Prompts now waiting for the user (approvals, questions, plan reviews, trust), so a browser tab
that reloads while one is open can show its widget again and the user can still answer it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PendingPrompt:
    model_id: str  # the ipywidgets model of the prompt's outer box
    display_id: str  # the output that later turns into the record of the answer
    text: str  # one line saying what is asked


_pending: dict[str, PendingPrompt] = {}


def add(prompt: PendingPrompt) -> None:
    _pending[prompt.model_id] = prompt


def discard(model_id: str) -> None:
    _pending.pop(model_id, None)


def pending() -> list[PendingPrompt]:
    """Open prompts, oldest first."""
    return list(_pending.values())
