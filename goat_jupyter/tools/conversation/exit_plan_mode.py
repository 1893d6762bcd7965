"""ExitPlanMode: present the plan for approval and leave plan mode."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.errors import ToolExecutionError
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class ExitPlanModeInput(ToolInput):
    plan: str = Field(description="The plan, in Markdown.")


class ExitPlanModeTool(Tool[ExitPlanModeInput]):
    name = "ExitPlanMode"
    deferred = True
    search_hint = "leave plan mode with a plan"
    input_model = ExitPlanModeInput
    side_effect = "none"

    def title_for(self, args: ExitPlanModeInput) -> str:
        return "Plan ready for review"

    async def run(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolOutput | str:
        if ctx.session.settings.permission_mode != "plan":
            raise ToolExecutionError(
                "ExitPlanMode is only available in plan mode, and the session is not in it."
            )
        ui = required(ctx.services.ui, "ui", self.name)
        return await ui.review_plan(args, ctx)
