"""Permissions: shell parsing, rules, call facts, protected configuration, the engine, the policy
the executor asks, and hooks. Below tools/: the policy and hooks see a call through point.py's
protocols. Never IPython."""
