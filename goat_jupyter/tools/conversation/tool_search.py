"""ToolSearch: find the tools whose schemas are not sent with every request, and load them."""

from __future__ import annotations

import re
from typing import Any, cast

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.offer import LOADED, SEARCH_TOOL, ToolDef, name_of, offered_tools, unusable_tools

_SELECT = "select:"
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
SUMMARY_CHARS = 200  # of a found tool's description (an MCP server's may be a page)
_STOP = frozenset({"a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "with", "tool", "tools"})


class ToolSearchInput(ToolInput):
    query: str = Field(
        min_length=1,
        description='Tool names ("select:WebFetch,LS") or keywords ("background task output").',
    )
    max_results: int = Field(default=5, ge=1, le=20)


def _stem(word: str) -> str:
    """A plural's singular (files -> file, fetches -> fetch, entries -> entry), near enough."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1]


def _terms(text: str) -> set[str]:
    """Lower-case stems of the words of `text`, CamelCase and snake_case split, no filler words."""
    words = {_stem(part.lower()) for word in _WORD.findall(text) for part in [word, *_CAMEL.findall(word)]}
    return words - _STOP


def _score(tool: ToolDef, terms: set[str], hint: str) -> int:
    """Name words weigh most, then the hint's and the description's, then the parameters' names."""
    function = tool["function"]
    name = _terms(name_of(tool).replace("__", " "))
    described = _terms(f"{hint} {function.get('description', '')}")
    params = _terms(" ".join(cast(dict[str, Any], function["parameters"].get("properties", {}))))
    return sum(5 * (t in name) + 2 * (t in described) + (t in params) for t in terms)


def _names(query: str) -> tuple[list[str], bool]:
    """The words of `query` in lower case, and whether it asked for names (`select:`)."""
    selects = query.lower().startswith(_SELECT)
    words = re.split(r"[,\s]+", query[len(_SELECT) :] if selects else query)
    return [w.lower() for w in words if w], selects


def search(
    query: str, tools: list[ToolDef], limit: int, hints: dict[str, str] | None = None
) -> list[ToolDef]:
    """`select:` names, or a query made only of tool names, picks those tools; other queries rank
    every tool by its words."""
    words, selects = _names(query.strip())
    by_name = {name_of(tool).lower(): tool for tool in tools}
    if selects or (words and all(w in by_name for w in words)):
        return [by_name[w] for w in dict.fromkeys(words) if w in by_name][:limit]
    terms = _terms(query)
    hints = hints or {}
    scored = [
        (score, index)
        for index, tool in enumerate(tools)
        if (score := _score(tool, terms, hints.get(name_of(tool), "")))
    ]
    return [tools[index] for _, index in sorted(scored, key=lambda pair: (-pair[0], pair[1]))][:limit]


def _summary(tool: ToolDef) -> str:
    function = tool["function"]
    first = str(function.get("description", "")).strip().split("\n", 1)[0][:SUMMARY_CHARS]
    properties = cast(dict[str, Any], function["parameters"].get("properties", {}))
    required = set(cast(list[str], function["parameters"].get("required", [])))
    fields = ", ".join(name if name in required else f"{name}?" for name in properties)
    return f"- {name_of(tool)}({fields}): {first}"


class ToolSearchTool(Tool[ToolSearchInput]):
    name = SEARCH_TOOL
    input_model = ToolSearchInput
    side_effect = "read_only"  # it reads the tool list only; read-only subagents get it too

    def title_for(self, args: ToolSearchInput) -> str:
        return f"ToolSearch {args.query}"

    async def run(self, args: ToolSearchInput, ctx: ToolContext) -> ToolOutput | str:
        registry = ctx.executor.registry if ctx.executor is not None else None
        tools = [] if registry is None else offered_tools(registry, unusable_tools(ctx.services))
        tools = [tool for tool in tools if name_of(tool) != SEARCH_TOOL]
        hints = {} if registry is None else registry.search_hints()
        found = search(args.query, tools, args.max_results, hints)
        if not found:
            return (
                f"No tool this session may use matches {args.query!r}. Try other words, or select: "
                "a name from the list in ToolSearch's description."
            )
        names = [name_of(tool) for tool in found]
        lines = [f"{LOADED}{', '.join(names)}.", "Call them from your next turn:", *map(_summary, found)]
        return ToolOutput("\n".join(lines), metadata={"loaded": names})
