"""The agent tools: Agent (a subagent for one task) and the experimental teams (TeamCreate,
SendMessage, TeamDelete). The subagents themselves run in goat_jupyter/subagents/."""
