"""The tool layer. Here, the framework: base (Tool, ToolInput), context, output, events, decisions,
catalog + registry, runner (the executor), redaction, builtin (the tool list). Below, one package per
tool family (files, search, shell, notebook, web, mcp, agents, conversation), each with its tools,
their .md descriptions and the helpers only they use.

The names below load on first use, so importing a light submodule (events, output) does not import
every tool: %load_ext reaches tools.events through the UI and must stay fast."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goat_jupyter.tools.base import Attachment, SideEffect, Tool, ToolContext, ToolInput, ToolOutput
    from goat_jupyter.tools.builtin import builtin_tools, default_registry, teams_enabled
    from goat_jupyter.tools.registry import Registry
    from goat_jupyter.tools.runner import Executor, ToolCall

__all__ = [
    "Attachment",
    "Executor",
    "Registry",
    "SideEffect",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolInput",
    "ToolOutput",
    "builtin_tools",
    "default_registry",
    "teams_enabled",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'goat_jupyter.tools' has no attribute {name!r}")
    import goat_jupyter.tools.base as base
    import goat_jupyter.tools.builtin as builtin
    import goat_jupyter.tools.registry as registry
    import goat_jupyter.tools.runner as runner

    home = next(module for module in (base, builtin, registry, runner) if hasattr(module, name))
    value = getattr(home, name)
    globals()[name] = value  # later lookups skip this function
    return value
