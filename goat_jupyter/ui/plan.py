"""ExitPlanMode in the cell: the plan as Markdown, then Approve / Keep planning with optional feedback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from goat_jupyter.config.managed import load_managed
from goat_jupyter.ui import style
from goat_jupyter.ui.comm_idle import Answer, Show, ipywidgets, on_click, record_bundle, show_until_answered
from goat_jupyter.ui.safe.markdown import safe_markdown

if TYPE_CHECKING:
    from goat_jupyter.tools.base import ToolContext, ToolOutput
    from goat_jupyter.tools.conversation.exit_plan_mode import ExitPlanModeInput

Verdict = Literal["approve", "approve_accept_edits", "keep_planning"]
# The mode each approving verdict continues in (as Claude Code offers: ask before edits, or accept them).
NEXT_MODE: dict[Verdict, str] = {"approve": "default", "approve_accept_edits": "acceptEdits"}
Review = tuple[Verdict, str | None]
FEEDBACK_PLACEHOLDER = "Optional feedback on the plan"


class MarkdownBlock:
    """The plan as a text/markdown display, so the saved notebook keeps it readable."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/markdown": safe_markdown(self.text), "text/plain": self.text}


class PlanPrompt:
    """Approve / Keep planning buttons and a feedback box; `answer` resolves with the verdict."""

    def __init__(self) -> None:
        w = ipywidgets()
        self.answer: Answer[Review] = Answer()
        self.feedback = w.Text(
            placeholder=FEEDBACK_PLACEHOLDER, continuous_update=False, layout=w.Layout(width="60%")
        )
        approve = w.Button(
            description="Approve", button_style="success", tooltip="Start; each edit still asks for approval"
        )
        accept = w.Button(
            description="Approve, auto-accept edits", tooltip="Start; file edits run without asking"
        )
        accept.layout.width = "auto"
        keep = w.Button(description="Keep planning", tooltip="Stay in plan mode; the model revises the plan")
        on_click(approve, lambda: self._decide("approve"))
        on_click(accept, lambda: self._decide("approve_accept_edits"))
        on_click(keep, lambda: self._decide("keep_planning"))
        header = w.HTML("<b>Plan ready for review</b> (above)")
        scopes = w.HTML(
            f'<div style="{style.NOTE}">Approve: continue in default mode (risky calls and edits ask). '
            "Approve, auto-accept edits: continue in acceptEdits mode (file edits run without asking).</div>"
        )
        buttons = w.HBox([approve, accept, keep], layout=w.Layout(flex_flow="row wrap"))
        self.view = w.VBox([header, buttons, scopes, self.feedback])

    def _decide(self, verdict: Verdict) -> None:
        self.answer.set((verdict, str(self.feedback.value).strip() or None))


def review_record(review: Review) -> dict[str, str]:
    verdict, feedback = review
    note = f" — feedback: {feedback}" if feedback else ""
    if verdict in NEXT_MODE:
        mode = NEXT_MODE[verdict]
        return record_bundle("✓", style.GREEN, f"Plan approved by the user; mode switched to {mode}{note}")
    return record_bundle("↺", style.AMBER, f"Plan not approved: the user asked to keep planning{note}")


def review_result(review: Review) -> ToolOutput:
    """What the model reads after the review (the mode change itself happens in `review_plan`)."""
    from goat_jupyter.tools.base import ToolOutput

    verdict, feedback = review
    note = f"\nThe user's feedback: {feedback}" if feedback else ""
    if verdict in NEXT_MODE:
        mode = NEXT_MODE[verdict]
        asks = (
            "file edits run without asking" if mode == "acceptEdits" else "risky calls still ask for approval"
        )
        text = (
            f"The user approved your plan. The session has left plan mode and is now in {mode} "
            f"permission mode: carry out the plan ({asks})." + note
        )
    else:
        text = (
            "The user did not approve the plan yet and wants you to keep planning. The session stays "
            "in plan mode: revise the plan, then call ExitPlanMode again." + note
        )
    summary = f"plan approved, {NEXT_MODE[verdict]} mode" if verdict in NEXT_MODE else "keep planning"
    shown = summary + (f" — feedback: {feedback}" if feedback else "")
    return ToolOutput(
        text,
        metadata={"approved": verdict in NEXT_MODE, "mode": NEXT_MODE.get(verdict), "feedback": feedback},
        summary=summary,
        display=shown,
    )


async def review_plan(args: ExitPlanModeInput, ctx: ToolContext, show: Show) -> ToolOutput:
    """Show the plan and wait for Approve (switch to default mode) or Keep planning."""
    show(MarkdownBlock(args.plan))
    prompt = PlanPrompt()
    cancelled = record_bundle("⊘", style.AMBER, "Plan review cancelled (cell interrupted)")
    review = await show_until_answered(
        show, prompt.view, prompt.answer, review_record, cancelled, "goat asks you to review the plan above"
    )
    if review[0] == "approve":
        ctx.session.settings.permission_mode = "default"
    elif review[0] == "approve_accept_edits":
        accept = load_managed().mode_allowed("acceptEdits")  # the managed policy's ceiling holds here too
        ctx.session.settings.permission_mode = "acceptEdits" if accept else "default"
    return review_result(review)
