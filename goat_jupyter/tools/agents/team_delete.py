"""TeamDelete (experimental): stop every member of a team."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class TeamDeleteInput(ToolInput):
    team_name: str = Field(min_length=1)


class TeamDeleteTool(Tool[TeamDeleteInput]):
    name = "TeamDelete"
    deferred = True
    input_model = TeamDeleteInput
    side_effect = "mutating"

    async def run(self, args: TeamDeleteInput, ctx: ToolContext) -> ToolOutput | str:
        teams = required(ctx.services.teams, "teams", self.name)
        return await teams.delete(args, ctx)
