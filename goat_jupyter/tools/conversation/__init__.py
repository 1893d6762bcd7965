"""The conversation tools: AskUserQuestion, ExitPlanMode, TodoWrite/TodoRead, Config and ToolSearch
(asking the user, plans, the todo list, the session's own settings and tools)."""
