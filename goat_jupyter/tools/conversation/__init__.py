"""The conversation tools: AskUserQuestion, ExitPlanMode, TodoWrite/TodoRead and Config (talking with the user, plans, the session's own settings)."""
