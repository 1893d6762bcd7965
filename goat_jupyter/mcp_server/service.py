"""The calls of outside agents: one goat session per client, goat's own tools run by goat's executor
under goat's permission policy (rules, modes, locks, tutor refusals, managed policy), on the live
notebook when a JupyterLab page has it open, else on the file and the kernel through the server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from goat_jupyter.live.comm_bridge import CommBridge
from goat_jupyter.live.select import NotebookService
from goat_jupyter.mcp_server.approvals import PageApprover
from goat_jupyter.mcp_server.kernel_access import ServerKernelAccess, ServerKernels
from goat_jupyter.mcp_server.tab_channel import TabChannels
from goat_jupyter.permissions.policy import RulePolicy
from goat_jupyter.settings import load_settings
from goat_jupyter.state import SessionState
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import Services, required
from goat_jupyter.tools.runner import Executor, ToolCall

TOOLS = ("Read", "NotebookEdit", "RunCell")


class InspectInput(ToolInput):
    notebook_path: str = Field(description="The notebook whose kernel evaluates the expression.")
    expression: str = Field(min_length=1, description="A Python expression, e.g. df.shape.")


class NotebookInspectTool(Tool[InspectInput]):
    """KernelInspect with the notebook named (the in-kernel tool knows its own kernel)."""

    name = "KernelInspect"
    input_model = InspectInput
    side_effect = "mutating"  # arbitrary code: it follows the same rules as in the kernel

    @property
    def description(self) -> str:
        return "Evaluate an expression in a notebook's kernel."

    async def approval_code(self, args: InspectInput, ctx: ToolContext) -> str | None:
        return args.expression

    async def run(self, args: InspectInput, ctx: ToolContext) -> ToolOutput | str:
        return await required(ctx.services.kernel, "kernel", self.name).inspect(args, ctx)


@dataclass
class ClientSession:
    """What goat keeps per connected client: its session (reads, "allow for session" answers)."""

    client: str
    state: SessionState
    notebooks: NotebookService
    calls: list[str] = field(default_factory=lambda: list[str]())
    counter: int = 0


class OutsideCalls:
    """Runs an outside agent's tool call as goat runs the model's."""

    def __init__(self, root: Path, kernels: ServerKernels, tabs: TabChannels) -> None:
        self.root, self.kernels, self.tabs = root, kernels, tabs
        self.clients: dict[str, ClientSession] = {}
        self.approval_timeout: float | None = None  # tests shorten it

    def session(self, client: str) -> ClientSession:
        key = client
        if key not in self.clients:
            state = SessionState(workspace=self.root)
            factory: Callable[[], CommBridge] = lambda: CommBridge(self.tabs.open)  # noqa: E731
            notebooks = NotebookService(factory, notify=lambda text: None, kernel_dir=self.root)
            self.clients[key] = ClientSession(client, state, notebooks)
        return self.clients[key]

    async def call(self, client: str, tool: str, args: dict[str, Any]) -> ToolOutput:
        """One call, start to end; the result (an `Error: ...` one included) for the client."""
        session = self.session(client)
        session.state.settings = load_settings(self.root)  # the rules as they are now
        session.notebooks.begin_run(running_cell_id="", probe=True, prompt=f"outside agent {client}")
        session.counter += 1
        executor = self._executor(session)
        try:
            output = await executor.run_one(ToolCall(f"mcp_{session.counter}", tool, args))
        finally:
            session.notebooks.end_run()
        session.calls.append(f"{tool}: {'error' if output.is_error else 'ok'}")
        return output

    def _executor(self, session: ClientSession) -> Executor:
        registry = default_registry(session=session.state).subset(list(TOOLS))
        registry.register(NotebookInspectTool())
        approver = PageApprover(self.tabs, session.client)
        if self.approval_timeout is not None:
            approver.timeout = self.approval_timeout
        services = Services(bridge=session.notebooks, kernel=ServerKernelAccess(self.kernels))
        return Executor(registry, session.state, policy=RulePolicy(approver), services=services)
