"""The "ui" service: approvals, questions and plan review, in the cell or answered at once when headless.

Which one a cell gets (`detect_interaction`):
- `GOAT_INTERACTIVE=0` (or false/no/off): headless; `=1` (true/yes/on): widgets in a kernel, stdin outside.
- `auto` (default), in an ipykernel kernel: widgets when the cell's execute_request allows stdin. Frontends
  people click in (JupyterLab, Notebook, VS Code) send `allow_stdin: true`; nbclient, papermill and
  `jupyter nbconvert --execute` send `false`, so a scheduled run is never left waiting for a click.
- `auto` in terminal IPython with a terminal on stdin: approvals on stdin, questions answered at once.
- anything else (plain Python, piped stdin): headless.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from goat_jupyter.errors import NotAvailableError
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, Approver, StdinApprover
from goat_jupyter.ui.comm_idle import Show, current_kernel

if TYPE_CHECKING:
    from goat_jupyter.config.project import Item
    from goat_jupyter.tools.base import ToolContext, ToolOutput
    from goat_jupyter.tools.conversation.ask_user_question import AskUserQuestionInput
    from goat_jupyter.tools.conversation.exit_plan_mode import ExitPlanModeInput
    from goat_jupyter.ui.trust import TrustOutcome

InteractionKind = Literal["widgets", "stdin", "headless"]
INTERACTIVE_ENV = "GOAT_INTERACTIVE"
_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Detected:
    kind: InteractionKind
    why: str  # for headless: why nobody can answer here, in words for the model


def detect_interaction(
    kernel: Any | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    terminal: bool | None = None,
) -> Detected:
    """Decide how this cell can reach the user (see the module docstring); never guesses "yes" blindly."""
    env = os.environ if environ is None else environ
    forced = env.get(INTERACTIVE_ENV, "auto").strip().lower()
    if forced in _NO:
        return Detected("headless", f"{INTERACTIVE_ENV}={env.get(INTERACTIVE_ENV)} turns prompts off")
    if kernel is not None:
        if forced in _YES or cell_allows_stdin(kernel):
            return Detected("widgets", "")
        return Detected(
            "headless",
            "this cell was run by a client that cannot answer prompts (no stdin, as with nbclient, "
            "papermill or nbconvert --execute)",
        )
    if forced in _YES or (terminal if terminal is not None else in_terminal_ipython()):
        return Detected("stdin", "")
    return Detected("headless", "this code does not run in a Jupyter kernel or an interactive terminal")


def cell_allows_stdin(kernel: Any) -> bool:
    """Whether the running cell's execute_request said the client can answer input prompts."""
    try:
        parent: Any = kernel.get_parent("shell")
        content: Any = parent.get("content") or {}
        return bool(content.get("allow_stdin"))
    except Exception:  # no parent yet, or an unexpected message shape
        return False


def in_terminal_ipython() -> bool:
    if "IPython" not in sys.modules or not sys.stdin or not sys.stdin.isatty():
        return False
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is None


class CellInteraction:
    """Widgets in the running cell: the Approver for RulePolicy and the "ui" service for tools."""

    def __init__(
        self, show: Show, cwd: Callable[[], Path], notebook: Callable[[], Any] | None = None
    ) -> None:
        self._show = show
        self._cwd = cwd
        self._notebook = notebook or (lambda: None)

    @property
    def approver(self) -> Approver:
        return self

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        from goat_jupyter.ui.approval import ask_approval

        return await ask_approval(request, self._show, self._cwd(), self._notebook())

    async def ask_questions(self, args: AskUserQuestionInput, ctx: ToolContext) -> ToolOutput:
        from goat_jupyter.ui.questions import ask_questions

        return await ask_questions(args, self._show)

    async def ask_trust(
        self, workspace: Path, items: list[Item], approve: Callable[[], bool]
    ) -> TrustOutcome:
        """Ask whether the user trusts the folder's project settings (`items`: what they would
        widen); `approve` stores the approval at the click unless the files changed meanwhile."""
        from goat_jupyter.ui.trust import ask_trust

        return await ask_trust(workspace, items, self._show, approve)

    async def review_plan(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolOutput:
        from goat_jupyter.ui.plan import review_plan

        return await review_plan(args, ctx, self._show)


class HeadlessInteraction:
    """Nobody can click here: questions and plan reviews end at once; approvals go to `approver` or
    are denied by RulePolicy (approver None) with a message naming the setting to change."""

    def __init__(self, why: str, approver: Approver | None = None) -> None:
        self.why = why
        self.approver = approver

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        if self.approver is not None:
            return await self.approver.request(request)
        return ApprovalAnswer("deny", f"Nobody can approve calls here: {self.why}.")

    async def ask_questions(self, args: AskUserQuestionInput, ctx: ToolContext) -> ToolOutput:
        raise NotAvailableError(
            f"No user can answer questions in this run ({self.why}). Do not ask again: proceed with "
            "reasonable assumptions and state them clearly in your answer."
        )

    async def review_plan(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolOutput:
        raise NotAvailableError(
            f"No user can review the plan in this run ({self.why}), so it was not approved and the "
            "session stays in plan mode. Give the plan as your final answer; to let goat carry out "
            f"work without a review, run the cell with %%goat --mode acceptEdits or set {INTERACTIVE_ENV}=1 "
            "in a frontend that shows widgets."
        )


Interaction = CellInteraction | HeadlessInteraction


def make_interaction(
    show: Show | None,
    cwd: Callable[[], Path],
    detected: Detected | None = None,
    notebook: Callable[[], Any] | None = None,
) -> Interaction:
    """The interaction for one cell; `show` is the cell renderer's widget display (None: plain output)."""
    found = detected or detect_interaction(current_kernel())
    if found.kind == "widgets" and show is not None:
        return CellInteraction(show, cwd, notebook)
    if found.kind == "stdin":
        return HeadlessInteraction("questions cannot be asked on the terminal", StdinApprover())
    why = found.why or "the output cannot show widgets (plain renderer)"
    return HeadlessInteraction(why)
