"""The agent tools: Agent (a subagent for a task) and the experimental teams (TeamCreate, SendMessage, TeamDelete)."""
