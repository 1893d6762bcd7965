"""Agent: delegate a task to a subagent with its own history and tool subset."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class AgentInput(ToolInput):
    description: str = Field(description="A short (3-5 word) description of the task.")
    prompt: str = Field(description="The full task for the subagent.")
    subagent_type: str = Field(default="general-purpose", description="general-purpose, Explore or Plan.")
    model: str | None = Field(
        default=None, description='Model override: "haiku", "sonnet", "opus" or a model name.'
    )
    run_in_background: bool = Field(default=False, description="Run it as a background task.")
    max_turns: int | None = Field(default=None, ge=1, description="Turn limit for the subagent.")
    resume: str | None = Field(default=None, description="Id of a finished subagent to continue.")
    name: str | None = Field(default=None, description="Name of a team member (teams only).")
    team_name: str | None = Field(default=None, description="Team to join (teams only).")
    mode: str | None = Field(default=None, description="Permission mode for the subagent.")


class AgentTool(Tool[AgentInput]):
    name = "Agent"
    input_model = AgentInput
    side_effect = "spawns"

    @property
    def concurrency_safe(self) -> bool:
        # Several Agent calls in one message are independent by the model's own account: run them
        # together, as Claude Code does. Approvals still come one at a time (RulePolicy).
        return True

    def title_for(self, args: AgentInput) -> str:
        return f"Agent ({args.subagent_type}): {args.description}"

    async def run(self, args: AgentInput, ctx: ToolContext) -> ToolOutput | str:
        runner = required(ctx.services.subagents, "subagents", self.name)
        return await runner.run_agent(args, ctx)
