"""SendMessage (experimental): deliver a message into a team member's next turn."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class SendMessageInput(ToolInput):
    to: str = Field(description='Member name, or "*" for every member.')
    message: str


class SendMessageTool(Tool[SendMessageInput]):
    name = "SendMessage"
    deferred = True
    search_hint = "message a teammate"
    input_model = SendMessageInput
    side_effect = "none"

    def title_for(self, args: SendMessageInput) -> str:
        return f"Message to {args.to}"

    async def run(self, args: SendMessageInput, ctx: ToolContext) -> ToolOutput | str:
        teams = required(ctx.services.teams, "teams", self.name)
        return await teams.send(args, ctx)
