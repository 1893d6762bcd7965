"""KernelInspect: evaluate an expression in the kernel and return a bounded summary."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class KernelInspectInput(ToolInput):
    expression: str = Field(min_length=1, description="A Python expression, e.g. df.describe() or df.shape.")


class KernelInspectTool(Tool[KernelInspectInput]):
    name = "KernelInspect"
    input_model = KernelInspectInput
    side_effect = "mutating"  # arbitrary code may have side effects, so it follows permissions

    def title_for(self, args: KernelInspectInput) -> str:
        return f"Inspect {args.expression[:80]}"

    async def approval_code(self, args: KernelInspectInput, ctx: ToolContext) -> str | None:
        return args.expression

    async def run(self, args: KernelInspectInput, ctx: ToolContext) -> ToolOutput | str:
        kernel = required(ctx.services.kernel, "kernel", self.name)
        return await kernel.inspect(args, ctx)
