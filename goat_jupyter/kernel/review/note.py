"""What the user kept and undid of goat's notebook edits: checked, then told to the transcript and model.

The text is written here from checked fields (an action, a kind, a cell number, identifiers): nothing
the page sends reaches the model verbatim.
"""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from goat_jupyter.kernel import review
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.tools.events import Notice
from goat_jupyter.ui import Renderer

MAX_DECISIONS = 500
_log = logging.getLogger(__name__)


class Decision(BaseModel):
    """One Keep or Undo as the labextension sends it."""

    action: Literal["kept", "undid"]
    kind: Literal["edited", "created", "deleted"]
    cell: int = Field(ge=1)
    cell_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")  # nbformat's cell id
    ran: list[str] | None = Field(default=None, max_length=50)

    @field_validator("ran")
    @classmethod
    def _names(cls, names: list[str] | None) -> list[str] | None:
        return None if names is None else [name for name in names if name.isidentifier()]

    def said(self) -> str:
        """For the transcript: `undid goat's edit of cell 6`."""
        what = {"edited": "goat's edit of", "created": "the new", "deleted": "the deletion of"}[self.kind]
        return f"{self.action} {what} cell {self.cell}"

    def for_model(self) -> str:
        """For the model: what the notebook holds now, and what the kernel still holds."""
        outcome = {
            ("kept", "edited"): "kept your edit of cell {n}",
            ("kept", "created"): "kept cell {n}, which you created",
            ("kept", "deleted"): "kept your deletion of the cell that was cell {n}",
            ("undid", "edited"): "undid your edit of cell {n}: it is back as it was before your edit",
            ("undid", "created"): "undid cell {n}, which you created: it is removed",
            ("undid", "deleted"): "undid your deletion of cell {n}: the cell is back in place",
        }[(self.action, self.kind)].format(n=self.cell)
        if self.action == "undid" and self.ran is not None:
            names = ", ".join(f"`{name}`" for name in self.ran) or "nothing"
            outcome += f" (it had run: the kernel still holds what the undone code bound: {names})"
        return f"{outcome} (id {self.cell_id})"


class Decisions(BaseModel):
    path: str = Field(default="", max_length=4096)
    decisions: list[Decision] = Field(max_length=MAX_DECISIONS)


def checked(messages: list[object]) -> list[Decision]:
    """The decisions of well-formed messages, in order; a malformed message is dropped and logged."""
    found: list[Decision] = []
    for data in messages:
        try:
            found += Decisions.model_validate(data).decisions
        except ValidationError as exc:
            _log.warning("goat: ignored a malformed review message: %s", exc)
    return found


def transcript_line(decisions: list[Decision]) -> str:
    return "Your review since the last run: " + ", ".join(d.said() for d in decisions) + "."


def model_note(decisions: list[Decision]) -> str:
    lines = [f"- {d.for_model()}" for d in decisions]
    undid = any(d.action == "undid" for d in decisions)
    tail = (
        "\nDo not assume the undone changes exist; read the notebook before building on them."
        if undid
        else ""
    )
    return "The user reviewed your notebook edits since your last turn:\n" + "\n".join(lines) + tail


def tell(goat: GoatRuntime, renderer: Renderer) -> None:
    """At a run's start: the decisions since the last one, in the transcript, the session and the note."""
    decisions = checked(review.drain())
    if not decisions:
        return
    renderer.handle(Notice(transcript_line(decisions), "info"))
    goat.session.add_note(model_note(decisions))
    goat.session.record("review", decisions=[decision.model_dump() for decision in decisions])
