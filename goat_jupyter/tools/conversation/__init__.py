"""The conversation tools: AskUserQuestion, ExitPlanMode, TodoWrite/TodoRead and Config (asking the
user, plans, the todo list, the session's own settings)."""
