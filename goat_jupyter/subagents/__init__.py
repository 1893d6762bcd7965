"""Subagents (the Agent tool) and experimental agent teams, attached to a runtime as services."""

from __future__ import annotations

from typing import Any

from goat_jupyter.subagents.runner import LLMFactory, Outcome, Subagent, SubagentRunner
from goat_jupyter.subagents.teams import TeamRunner
from goat_jupyter.subagents.types import SUBAGENT_TYPES, SubagentType, resolve_model, subagent_type, tools_for

__all__ = [
    "SUBAGENT_TYPES",
    "LLMFactory",
    "Outcome",
    "Subagent",
    "SubagentRunner",
    "SubagentType",
    "TeamRunner",
    "resolve_model",
    "subagent_services",
    "subagent_type",
    "tools_for",
]


def subagent_services(llm_for: LLMFactory) -> dict[str, Any]:
    """The `subagents` and `teams` services for a runtime; `llm_for(settings)` builds a model client."""
    subagents = SubagentRunner(llm_for)
    return {"subagents": subagents, "teams": TeamRunner(subagents)}
