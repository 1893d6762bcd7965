"""The live notebook served over MCP: goat's notebook tools for agents outside the notebook (Claude
Code, Codex, VS Code), mounted in goat's Jupyter server extension under /goat/mcp, off by default,
behind the Jupyter server's own auth, every call through goat's permission engine."""
