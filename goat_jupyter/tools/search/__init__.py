"""The search tools: Glob (paths) and Grep (contents), on ripgrep with a pure-Python fallback walker."""
