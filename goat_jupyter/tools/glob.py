"""Glob: find files by name pattern, newest first."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class GlobInput(ToolInput):
    pattern: str = Field(description='Glob pattern such as "**/*.py" or "src/**/*.{ts,tsx}".')
    path: str | None = Field(default=None, description="Folder to search in (default: the cwd).")


class GlobTool(Tool[GlobInput]):
    name = "Glob"
    input_model = GlobInput
    side_effect = "read_only"

    def title_for(self, args: GlobInput) -> str:
        return f"Glob {args.pattern}" + (f" in {args.path}" if args.path else "")

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Glob is being built.")
