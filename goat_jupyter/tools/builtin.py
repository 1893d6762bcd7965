"""The built-in tools, in seed order, and the default registry that holds them."""

from __future__ import annotations

import os
from pathlib import Path

from goat_jupyter.state import SessionState
from goat_jupyter.tools.agents.agent import AgentTool
from goat_jupyter.tools.agents.send_message import SendMessageTool
from goat_jupyter.tools.agents.team_create import TeamCreateTool
from goat_jupyter.tools.agents.team_delete import TeamDeleteTool
from goat_jupyter.tools.base import Tool, ToolInput
from goat_jupyter.tools.conversation.ask_user_question import AskUserQuestionTool
from goat_jupyter.tools.conversation.config import ConfigTool
from goat_jupyter.tools.conversation.exit_plan_mode import ExitPlanModeTool
from goat_jupyter.tools.conversation.todo_read import TodoReadTool
from goat_jupyter.tools.conversation.todo_write import TodoWriteTool
from goat_jupyter.tools.conversation.tool_search import ToolSearchTool
from goat_jupyter.tools.files.delete import DeleteTool
from goat_jupyter.tools.files.edit import EditTool
from goat_jupyter.tools.files.ls import LSTool
from goat_jupyter.tools.files.move import MoveTool
from goat_jupyter.tools.files.read import ReadTool
from goat_jupyter.tools.files.write import WriteTool
from goat_jupyter.tools.mcp.list_mcp_resources import ListMcpResourcesTool
from goat_jupyter.tools.mcp.read_mcp_resource import ReadMcpResourceTool
from goat_jupyter.tools.notebook.kernel_inspect import KernelInspectTool
from goat_jupyter.tools.notebook.notebook_edit import NotebookEditTool
from goat_jupyter.tools.notebook.run_cell import RunCellTool
from goat_jupyter.tools.registry import Registry
from goat_jupyter.tools.search.glob import GlobTool
from goat_jupyter.tools.search.grep import GrepTool
from goat_jupyter.tools.shell.bash import BashTool
from goat_jupyter.tools.shell.run_code import RunCodeTool
from goat_jupyter.tools.shell.task_output import BashOutputTool, TaskOutputTool
from goat_jupyter.tools.shell.task_stop import KillShellTool, TaskStopTool
from goat_jupyter.tools.web.web_fetch import WebFetchTool
from goat_jupyter.tools.web.web_search import WebSearchTool

# Seed order first (sdk-tools.d.ts), then the tools goat adds.
_BUILTIN: tuple[type[Tool[ToolInput]], ...] = (
    AgentTool,
    BashTool,
    TaskOutputTool,
    ExitPlanModeTool,
    EditTool,
    ReadTool,
    WriteTool,
    GlobTool,
    GrepTool,
    TaskStopTool,
    ListMcpResourcesTool,
    NotebookEditTool,
    ReadMcpResourceTool,
    TodoWriteTool,
    WebFetchTool,
    WebSearchTool,
    AskUserQuestionTool,
    ConfigTool,
    LSTool,
    DeleteTool,
    MoveTool,
    RunCodeTool,
    TodoReadTool,
    RunCellTool,
    KernelInspectTool,
    ToolSearchTool,  # the last offered: its list of deferred tools changes when MCP servers connect
    BashOutputTool,
    KillShellTool,
)  # pyright: ignore[reportAssignmentType]
_TEAMS: tuple[type[Tool[ToolInput]], ...] = (TeamCreateTool, SendMessageTool, TeamDeleteTool)  # pyright: ignore[reportAssignmentType]


def teams_enabled() -> bool:
    return os.environ.get("GOAT_EXPERIMENTAL_AGENT_TEAMS") == "1"


def builtin_tools() -> list[Tool[ToolInput]]:
    classes = _BUILTIN + (_TEAMS if teams_enabled() else ())
    return [cls() for cls in classes]


def default_registry(cwd: str | Path | None = None, *, session: SessionState | None = None) -> Registry:
    """Every built-in tool, in seed order, sharing one session rooted at `cwd`."""
    registry = Registry(session, cwd=cwd)
    for tool in builtin_tools():
        registry.register(tool)
    return registry
