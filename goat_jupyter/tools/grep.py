"""Grep: search file contents with ripgrep."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(ToolInput):
    pattern: str = Field(description="Regular expression (ripgrep syntax) to search for.")
    path: str | None = Field(default=None, description="File or folder to search (default: the cwd).")
    glob: str | None = Field(default=None, description='Only files matching this glob, e.g. "*.py".')
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description="content: matching lines; files_with_matches: file paths; count: matches per file.",
    )
    before: int | None = Field(default=None, alias="-B", ge=0, description="Lines of context before.")
    after: int | None = Field(default=None, alias="-A", ge=0, description="Lines of context after.")
    context: int | None = Field(default=None, alias="-C", ge=0, description="Lines of context around.")
    line_numbers: bool | None = Field(
        default=None, alias="-n", description="Show line numbers (content mode)."
    )
    case_insensitive: bool | None = Field(default=None, alias="-i", description="Ignore case.")
    type: str | None = Field(default=None, description='ripgrep file type, e.g. "py", "js".')
    head_limit: int | None = Field(
        default=None, ge=0, description="At most this many entries (default 250, 0 = all)."
    )
    offset: int | None = Field(default=None, ge=0, description="Skip this many entries first.")
    multiline: bool | None = Field(default=None, description="Let . and patterns span lines.")


class GrepTool(Tool[GrepInput]):
    name = "Grep"
    input_model = GrepInput
    side_effect = "read_only"

    def title_for(self, args: GrepInput) -> str:
        return f"Grep {args.pattern!r}" + (f" in {args.path}" if args.path else "")

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Grep is being built.")
