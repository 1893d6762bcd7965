"""TeamCreate (experimental): start several subagents that run concurrently."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class TeamMember(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    prompt: str
    subagent_type: str = "general-purpose"


class TeamCreateInput(ToolInput):
    team_name: str = Field(min_length=1)
    members: list[TeamMember] = Field(min_length=1)


class TeamCreateTool(Tool[TeamCreateInput]):
    name = "TeamCreate"
    deferred = True
    search_hint = "start an agent team"
    input_model = TeamCreateInput
    side_effect = "spawns"

    def title_for(self, args: TeamCreateInput) -> str:
        return f"Team {args.team_name} ({len(args.members)} members)"

    async def run(self, args: TeamCreateInput, ctx: ToolContext) -> ToolOutput | str:
        teams = required(ctx.services.teams, "teams", self.name)
        return await teams.create(args, ctx)
