"""Subagents (the Agent tool) and experimental agent teams, attached to a runtime as services."""

from __future__ import annotations

from goat_jupyter.subagents.runner import LLMFactory, Outcome, Subagent, SubagentRunner
from goat_jupyter.subagents.teams import TeamRunner
from goat_jupyter.subagents.types import SUBAGENT_TYPES, SubagentType, resolve_model, subagent_type, tools_for
from goat_jupyter.tools.context import Services

__all__ = [
    "SUBAGENT_TYPES",
    "LLMFactory",
    "Outcome",
    "Subagent",
    "SubagentRunner",
    "SubagentType",
    "TeamRunner",
    "attach_subagents",
    "resolve_model",
    "subagent_type",
    "tools_for",
]


def attach_subagents(services: Services, llm_for: LLMFactory) -> Services:
    """Give `services` the Agent tool's runner and teams; `llm_for(settings)` builds a model client."""
    services.subagents = SubagentRunner(llm_for)
    services.teams = TeamRunner(services.subagents)
    return services
