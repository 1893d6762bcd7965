"""Bash: run a shell command in the session's working directory."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


class BashInput(ToolInput):
    command: str = Field(description="The shell command to run with bash -c.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).",
    )
    description: str | None = Field(default=None, description="What the command does, in 5-10 words.")
    run_in_background: bool = Field(
        default=False, description="Start it as a background task and return its id at once."
    )


class BashTool(Tool[BashInput]):
    name = "Bash"
    input_model = BashInput
    side_effect = "mutating"
    max_output_chars = 30_000

    def title_for(self, args: BashInput) -> str:
        return args.description or args.command.splitlines()[0][:120] if args.command else "Bash"

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Bash is being built.")
