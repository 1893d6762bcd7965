"""What each request offers the model (issue 34): the tools this session can use, with lean schemas;
the rarely used ones and the MCP servers past the token budget deferred behind ToolSearch, their
schemas sent only once the history shows them loaded (a ToolSearch result, or a call to one)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.tools.catalog import ToolCatalog
from goat_jupyter.tools.context import Services, ToolList

SEARCH_TOOL = "ToolSearch"
MCP_RESOURCE_TOOLS = ("ListMcpResources", "ReadMcpResource")
KERNEL_TOOLS = ("RunCell", "KernelInspect")
LOADED = "Loaded: "  # the first line of a ToolSearch result that found tools: "Loaded: A, B."
MCP_NAMES_SHOWN = 8  # a deferred server with more tools is described by its count

ToolDef = dict[str, Any]
TokenCounter = Callable[[Sequence[ToolDef]], int]


def unusable_tools(services: Services) -> set[str]:
    """Tools this session could not run, so they are not offered (they cost tokens every turn)."""
    hidden: set[str] = set()
    if services.mcp is None or not services.mcp.connections:
        hidden.update(MCP_RESOURCE_TOOLS)
    if services.kernel is None:
        hidden.update(KERNEL_TOOLS)
    return hidden


def lean_schema(value: Any) -> Any:
    """A JSON schema without what costs tokens and tells the model nothing: `additionalProperties:
    false` (inputs are validated anyway) and `default: false` on flags."""
    if isinstance(value, list):
        return [lean_schema(item) for item in cast(list[Any], value)]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in cast(dict[str, Any], value).items():
        if (key == "additionalProperties" or key == "default") and item is False:
            continue
        out[key] = lean_schema(item)
    return out


def offered_tools(registry: ToolList, hidden: set[str]) -> list[ToolDef]:
    """Every tool definition this session may be offered: usable tools only, lean schemas."""
    tools: list[ToolDef] = []
    for tool in registry.llm_tools():
        function = tool["function"]
        if function["name"] not in hidden:
            tools.append(
                {**tool, "function": {**function, "parameters": lean_schema(function["parameters"])}}
            )
    return tools


def name_of(tool: ToolDef) -> str:
    return str(tool["function"]["name"])


@dataclass(frozen=True)
class Deferred:
    """The tools not sent until loaded: built-ins marked rarely used, and MCP servers by server."""

    hints: dict[str, str]  # built-in name -> a few words on what it is for
    servers: dict[str, list[str]]  # MCP server -> its deferred tool names, in the catalog's order

    def names(self) -> set[str]:
        return set(self.hints).union(*self.servers.values())


def deferred_tools(registry: ToolCatalog, tools: list[ToolDef], budget: int, count: TokenCounter) -> Deferred:
    """What to defer among `tools`: the built-ins marked `deferred`, and each MCP server (in name
    order) whose definitions no longer fit in what is left of `budget` tokens."""
    offered = {name_of(tool): tool for tool in tools}
    hints: dict[str, str] = {}
    by_server: dict[str, list[ToolDef]] = {}
    for tool in registry.tools():
        if tool.name not in offered or tool.name == SEARCH_TOOL:
            continue
        server = tool.budget_group()
        if server is not None:
            by_server.setdefault(server, []).append(offered[tool.name])
        elif tool.deferred:
            hints[tool.name] = tool.search_hint
    servers: dict[str, list[str]] = {}
    left = budget
    for server in sorted(by_server):
        cost = count(by_server[server])
        if cost <= left:
            left -= cost
        else:
            servers[server] = [name_of(tool) for tool in by_server[server]]
    return Deferred(hints, servers)


def _listing(deferred: Deferred) -> str:
    """The deferred tools as the ToolSearch description names them (built-ins with their purpose)."""
    parts = [f"{name} ({hint})" if hint else name for name, hint in sorted(deferred.hints.items())]
    lines = [f"Tools to load: {', '.join(parts)}."] if parts else []
    for server, names in sorted(deferred.servers.items()):
        prefix = f"mcp__{server}__"
        if len(names) <= MCP_NAMES_SHOWN:
            shown = ", ".join(name.removeprefix(prefix) for name in names)
            lines.append(f"MCP server {server} ({prefix}*): {shown}.")
        else:
            lines.append(f"MCP server {server} ({prefix}*): {len(names)} tools; search them by keyword.")
    return "\n".join(lines)


def loaded_tools(messages: Iterable[dict[str, Any]]) -> list[str]:
    """The tools the history shows loaded, in order: named in a ToolSearch result's first line, or
    called (a model that calls a deferred tool by name gets its schema from then on)."""
    searches: set[str] = set()
    names: dict[str, None] = {}
    for message in messages:
        for call in cast(list[dict[str, Any]], message.get("tool_calls") or []):
            name = str(cast(dict[str, Any], call.get("function") or {}).get("name", ""))
            if name == SEARCH_TOOL:
                searches.add(str(call.get("id")))
            else:
                names.setdefault(name)
        if message.get("role") == "tool" and message.get("tool_call_id") in searches:
            names.update(dict.fromkeys(loaded_names(message.get("content"))))
    return list(names)


def loaded_names(content: Any) -> list[str]:
    """The tools a ToolSearch result loaded (its first line), none for any other text."""
    first = content.split("\n", 1)[0] if isinstance(content, str) else ""
    if not first.startswith(LOADED):
        return []
    return [name for name in re.split(r"[,\s]+", first.removeprefix(LOADED).rstrip(".")) if name]


@dataclass(frozen=True)
class Offer:
    """One request's tools: `sent` with their schemas; `deferred` only named, for ToolSearch."""

    sent: list[ToolDef]
    deferred: Deferred


def make_offer(
    registry: ToolCatalog, hidden: set[str], loaded: Sequence[str], budget: int, count: TokenCounter
) -> Offer:
    """The definitions to send: the tools not deferred, ToolSearch naming the deferred ones, then the
    deferred tools the history loaded, in the order they were loaded (the prefix before them stays
    cached). Without anything deferred there is no ToolSearch."""
    tools = offered_tools(registry, hidden)
    deferred = deferred_tools(registry, tools, budget, count)
    names = deferred.names()
    by_name = {name_of(tool): tool for tool in tools}
    sent = [_search_definition(t, deferred) for t in tools if name_of(t) not in names]
    if not names:
        sent = [tool for tool in sent if name_of(tool) != SEARCH_TOOL]
    sent += [by_name[name] for name in loaded if name in names]
    return Offer(sent, deferred)


def _search_definition(tool: ToolDef, deferred: Deferred) -> ToolDef:
    if name_of(tool) != SEARCH_TOOL:
        return tool
    function = tool["function"]
    description = f"{function['description']}\n{_listing(deferred)}"
    return {**tool, "function": {**function, "description": description}}
