"""The folder-trust question in the cell: what the project's files would do, Trust / Don't trust.

Trust approves exactly the items shown: the click hands the prompt's digest to `approve`, which
stores nothing when the files changed meanwhile (the outcome is then "changed" and the caller asks
again with the new list)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Literal

from goat_jupyter.config.project import Item, item_lines
from goat_jupyter.ui import style
from goat_jupyter.ui.comm_idle import (
    Answer,
    Bundle,
    Show,
    WidgetView,
    ipywidgets,
    on_click,
    record_bundle,
    show_until_answered,
)

TrustOutcome = Literal["trusted", "declined", "changed"]
Approve = Callable[[], bool]  # store the approval if the files still hold what was shown
TRUST_LABEL = "Trust this folder"
DONT_TRUST_LABEL = "Don't trust"


def folder_name(workspace: Path) -> str:
    """The folder as the person running the notebook knows it: its name (the full path on hover)."""
    return workspace.name or str(workspace)


def items_html(workspace: Path, items: list[Item]) -> str:
    rows = "".join(f"<li><code>{escape(line)}</code></li>" for line in item_lines(items))
    folder = f'<code title="{escape(str(workspace))}">{escape(folder_name(workspace))}</code>'
    return (
        f'<div style="border-left:4px solid {style.AMBER};padding-left:6px">'
        f"<b>⚠ Trust this folder?</b> This notebook's folder, {folder}, has project settings that would let "
        f"goat do more than your own settings allow:<ul>{rows}</ul></div>"
    )


SCOPES = (
    "Trust: these apply from now on and are remembered for this folder (in ~/.goat/trusted_folders.json); "
    "anything added or changed later asks again. Don't trust: goat goes on without them (the files' deny "
    "and ask rules still apply); <code>%goat trust</code> trusts them later."
)


class TrustPrompt:
    """Two buttons; Trust runs `approve` at the click and the answer says what came of it."""

    def __init__(self, workspace: Path, items: list[Item], approve: Approve) -> None:
        w = ipywidgets()
        self.answer: Answer[TrustOutcome] = Answer()
        self._approve = approve
        trust = w.Button(description=TRUST_LABEL, button_style="warning", tooltip="Apply these settings")
        dont = w.Button(description=DONT_TRUST_LABEL, tooltip="Go on without them")
        trust.layout.width = dont.layout.width = "auto"
        on_click(trust, self._trust)
        on_click(dont, lambda: self.answer.set("declined"))
        self.html = items_html(workspace, items)
        self.view = w.VBox(
            [w.HTML(self.html), w.HBox([trust, dont]), w.HTML(f'<div style="{style.NOTE}">{SCOPES}</div>')]
        )

    def _trust(self) -> None:
        if not self.answer.done:  # a second click must not approve a second time
            self.answer.set("trusted" if self._approve() else "changed")


_CHANGED = "The project files changed while this question was open: nothing was trusted; goat asks again"


def trust_record(items: list[Item]) -> Callable[[TrustOutcome], Bundle]:
    def record(outcome: TrustOutcome) -> Bundle:
        details = "\n".join(item_lines(items))
        block = f'<pre style="{style.PRE}">{escape(details)}</pre>'
        if outcome == "changed":
            return record_bundle(
                "⟳", style.AMBER, _CHANGED, details_html=block, details_text=details, summary="what was shown"
            )
        if outcome == "trusted":
            text = "Folder trusted by the user: its project settings apply"
            return record_bundle(
                "✓", style.GREEN, text, details_html=block, details_text=details, summary="what"
            )
        text = "Folder not trusted: goat goes on without these project settings"
        return record_bundle("✗", style.RED, text, details_html=block, details_text=details, summary="what")

    return record


async def ask_trust(workspace: Path, items: list[Item], show: Show, approve: Approve) -> TrustOutcome:
    """Show the question and wait for a button (no timeout; the stop button cancels it)."""
    prompt = TrustPrompt(workspace, items, approve)
    waiting = f"goat asks whether to trust the project settings of this folder ({folder_name(workspace)})"
    cancelled = record_bundle("⊘", style.AMBER, "Folder trust question cancelled (cell interrupted)")
    return await show_until_answered(
        show,
        WidgetView(prompt.view, waiting, html=prompt.html, kind="trust"),
        prompt.answer,
        trust_record(items),
        cancelled,
        waiting,
    )
