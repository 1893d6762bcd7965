"""The system prompt: who goat is, how it works in a notebook, and facts about this environment."""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

from goat_jupyter.agent.styles import OutputStyle, style_section
from goat_jupyter.config.claude_files import instruction_files
from goat_jupyter.config.secrets import redact
from goat_jupyter.state import SessionState

MAX_INSTRUCTIONS_CHARS = 20_000

BASE_PROMPT = """You are goat, an agent that works inside a Jupyter notebook. The user talks to you from a \
%%goat cell; your answer streams into that cell as Markdown, and the tools you call show up there as cards.

How to work:
- Be direct and concise. Use Markdown; show code in fenced blocks.
- Use the tools to look before you act: Read files, Glob and Grep to find things, KernelInspect to look at \
live variables in the user's kernel. Read a file before you Edit or Write it.
- To change the notebook use NotebookEdit (insert, replace, delete cells) and RunCell to execute a cell in \
the user's kernel; never write .ipynb files with Write or Edit.
- Use Bash for shell commands, not for reading or editing files.
- For multi-step work keep a todo list with TodoWrite and update it as you go.
- Ask with AskUserQuestion when a request is ambiguous and the choice matters.
- When a tool call is denied, do not retry the same call; adjust or ask the user.
- Cite each value you take from a cell's output right after it: 0.42 [cell 7, out 1] (7: the cell's \
execution count; out 1: its first output; [cell 7]: any of its outputs). goat checks it.
- Finish with a short summary of what you did and what the user should look at."""


def _instructions(workspace: Path) -> str:
    parts: list[str] = []
    for path in instruction_files(workspace):  # Claude Code's set: ~/.claude, parents, *.local.md
        try:
            text = path.read_text(encoding="utf-8")[:MAX_INSTRUCTIONS_CHARS]
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(f"Contents of {path} (project instructions, follow them):\n\n{text.strip()}")
    return "\n\n".join(parts)


def environment_facts(state: SessionState) -> str:
    facts = [
        f"Working directory: {state.cwd}",
        f"Workspace root: {state.workspace}",
        f"Today's date: {datetime.date.today().isoformat()}",
        f"Platform: {platform.system()} {platform.release()}, Python {platform.python_version()}",
    ]
    if state.notebook_path is not None:
        facts.append(f"Notebook open in the frontend: {state.notebook_path}")
    facts.append(f"Permission mode: {state.settings.permission_mode}")
    return "<env>\n" + "\n".join(facts) + "\n</env>"


PLAN_MODE_NOTE = (
    "Plan mode is on: investigate with read-only tools only, then present your plan with "
    "ExitPlanMode and wait for approval before changing anything."
)


def platform_facts() -> str:
    """What stays the same on this machine: the only facts in the system prompt."""
    return f"<env>\nPlatform: {platform.system()} {platform.release()}, Python {platform.python_version()}\n</env>"


def stable_facts(state: SessionState) -> str:
    """Facts that stay the same for a whole session but differ between workspaces."""
    facts = [f"Workspace root: {state.workspace}"]
    if state.notebook_path is not None:
        facts.append(f"Notebook open in the frontend: {state.notebook_path}")
    return "<env>\n" + "\n".join(facts) + "\n</env>"


def reminder(state: SessionState) -> str:
    """What may change between turns, sent at the end of each request instead of in the prefix."""
    lines = [
        f"Working directory: {state.cwd}",
        f"Today's date: {datetime.date.today().isoformat()}",
        f"Permission mode: {state.settings.permission_mode}",
    ]
    if state.settings.permission_mode == "plan":
        lines.append(PLAN_MODE_NOTE)
    return redact("\n".join(lines))


def system_prompt(base: str = BASE_PROMPT, style: OutputStyle = "default") -> str:
    """The same for every session and workspace on this machine, so a server's prompt cache holds
    it and the tool definitions (rendered after it by chat templates) across sessions (issue 23).
    The output style is configuration (a class's tutor style), not session data, so it is here."""
    sections = [base, platform_facts()]
    if section := style_section(style):
        sections.append(section)
    return "\n\n".join(sections)


def session_context(state: SessionState) -> str:
    """The workspace's facts and project instructions, sent as the first message after the prefix."""
    sections = [stable_facts(state)]
    instructions = _instructions(state.workspace)
    if instructions:
        sections.append(instructions)
    return redact("\n\n".join(sections))  # an AGENTS.md, or a folder's name, may hold a key
