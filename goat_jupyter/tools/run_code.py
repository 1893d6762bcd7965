"""RunCode: run a Python or bash snippet in a sandboxed subprocess (not in the kernel)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class RunCodeInput(ToolInput):
    language: Literal["python", "bash"] = Field(description="Language of the code.")
    code: str = Field(description="The program text.")
    args: list[str] | None = Field(default=None, description="Command-line arguments for the program.")
    env: dict[str, str] | None = Field(default=None, description="Extra environment variables.")
    timeout: int = Field(default=60, ge=1, le=600, description="Wall-clock limit in seconds.")


class RunCodeTool(Tool[RunCodeInput]):
    name = "RunCode"
    input_model = RunCodeInput
    side_effect = "mutating"
    max_output_chars = 30_000

    def title_for(self, args: RunCodeInput) -> str:
        return f"Run {args.language} snippet"

    async def run(self, args: RunCodeInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("RunCode is being built.")
