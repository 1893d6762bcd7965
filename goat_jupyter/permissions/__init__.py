"""Permissions: shell parsing, rules, call facts, protected configuration, the engine, the policy
the executor asks, and hooks. Never IPython."""
