"""WebSearch: search the web through the configured SearchProvider."""

from __future__ import annotations

from pydantic import Field, model_validator

from goat_jupyter.errors import InvalidInputError
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required
from goat_jupyter.web.results import SearchResult, normalise_domain


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
    deferred = True
    input_model = WebSearchInput
    side_effect = "network"

    def title_for(self, args: WebSearchInput) -> str:
        return f"Search {args.query!r}"

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolOutput | str:
        web = required(ctx.services.web, "web", self.name)
        provider = web.provider(ctx.session.settings.web_search_provider)
        allowed = [d for d in map(normalise_domain, args.allowed_domains or []) if d]
        blocked = [d for d in map(normalise_domain, args.blocked_domains or []) if d]
        if allowed and blocked:
            raise InvalidInputError("Give allowed_domains or blocked_domains, not both, and search again.")
        found = await web.search(provider, args.query, allowed, blocked)
        text = format_results(args.query, found.provider, found.results, allowed, blocked)
        metadata = {
            "provider": found.provider,
            "urls": [r.url for r in found.results],
            "dropped": found.dropped,
        }
        return ToolOutput(text, metadata=metadata)


def format_results(
    query: str, provider: str, results: list[SearchResult], allowed: list[str], blocked: list[str]
) -> str:
    scope = f", only from {', '.join(allowed)}" if allowed else ""
    scope += f", excluding {', '.join(blocked)}" if blocked else ""
    if not results:
        return f"No results found for {query!r} ({provider}{scope}). Try other words or fewer filters."
    lines = [f"Web search results for {query!r} ({provider}{scope}):", ""]
    for number, result in enumerate(results, 1):
        lines.append(f"{number}. {result.title}")
        lines.append(f"   {result.url}")
        if result.snippet:
            lines.append(f"   {result.snippet}")
        lines.append("")
    lines.append("Use WebFetch on a result's URL to read the page.")
    return "\n".join(lines)
