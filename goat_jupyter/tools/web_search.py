"""WebSearch: search the web through the configured SearchProvider."""

from __future__ import annotations

from pydantic import Field, model_validator

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class WebSearchInput(ToolInput):
    query: str = Field(min_length=2, description="The search query.")
    allowed_domains: list[str] | None = Field(default=None, description="Only results from these domains.")
    blocked_domains: list[str] | None = Field(default=None, description="Never results from these domains.")

    @model_validator(mode="after")
    def _one_domain_filter(self) -> WebSearchInput:
        if self.allowed_domains and self.blocked_domains:
            raise ValueError("give allowed_domains or blocked_domains, not both")
        return self


class WebSearchTool(Tool[WebSearchInput]):
    name = "WebSearch"
    input_model = WebSearchInput
    side_effect = "network"

    def title_for(self, args: WebSearchInput) -> str:
        return f"Search {args.query!r}"

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolOutput | str:
        searcher = required(ctx.services.web, "web", self.name)
        return await searcher.search(args, ctx)
