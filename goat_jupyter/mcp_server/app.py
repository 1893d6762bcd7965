"""The MCP tools an outside agent sees: each confines its paths to the server's root, then hands the
call to goat's executor (service.py); an `Error: ...` result reaches the client as a tool error."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from goat_jupyter.errors import GoatError
from goat_jupyter.mcp_server.paths import confined
from goat_jupyter.mcp_server.service import OutsideCalls
from goat_jupyter.version import __version__

INSTRUCTIONS = (
    "goat's live Jupyter notebooks. Read a notebook before editing it (you see unsaved edits, outputs, "
    "stale cells, tags and locks); edits are applied by the open JupyterLab tab and read back; runs "
    "happen in the notebook's kernel. Calls the user has not allowed ask them in JupyterLab and wait; "
    "a denial comes back as an error: do not retry it unchanged."
)


def client_of(ctx: Context[Any, Any]) -> str:
    """The client's name as it introduced itself. goat keeps one session per name: the protocol's
    newer requests carry no connection id, and the name is what the user sees in prompts and badges."""
    params: Any = getattr(ctx.session, "client_params", None)
    info: Any = getattr(params, "client_info", None)
    return str(getattr(info, "name", "") or "an MCP client")[:80]


def build_server(calls: OutsideCalls) -> MCPServer:
    server = MCPServer("goat-jupyter", instructions=INSTRUCTIONS, version=__version__)
    root = calls.root

    async def run(ctx: Context[Any, Any], tool: str, args: dict[str, Any]) -> str:
        output = await calls.call(client_of(ctx), tool, args)
        if output.is_error:
            raise ToolError(output.content.removeprefix("Error: "))
        return output.content

    def path_of(raw: str) -> str:
        try:
            return str(confined(root, raw))
        except GoatError as exc:
            raise ToolError(exc.message) from None

    @server.tool()
    async def list_notebooks() -> str:
        """The notebooks with a running kernel under this Jupyter server, and whether a JupyterLab page
        is connected (then reads and edits go to the live, open notebook)."""
        kernels = await calls.kernels.listing()
        page = "connected" if calls.tabs.connected else "not connected (edits go to the files)"
        lines = [f"- {k.path} (kernel {k.name}, {k.state or 'unknown'}, id {k.kernel_id})" for k in kernels]
        return f"JupyterLab page: {page}.\nNotebooks with kernels:\n" + ("\n".join(lines) or "(none)")

    @server.tool()
    async def read_notebook(ctx: Context[Any, Any], notebook_path: str) -> str:
        """Read a notebook cell by cell as the open tab holds it (unsaved edits, outputs summarised,
        stale and out-of-order marks, tags and locks), or the saved file when it is not open."""
        return await run(ctx, "Read", {"file_path": path_of(notebook_path)})

    @server.tool()
    async def edit_cell(
        ctx: Context[Any, Any],
        notebook_path: str,
        new_source: str = "",
        cell_id: str | None = None,
        edit_mode: Literal["replace", "insert", "delete"] = "replace",
        cell_type: Literal["code", "markdown"] | None = None,
    ) -> str:
        """Replace, insert (after cell_id, or at the top) or delete a cell; cell_id is a cell's id or
        "cell-N" for 0-based index N. The tab applies it and the result echoes the cell as it landed."""
        args = {
            "notebook_path": path_of(notebook_path),
            "new_source": new_source,
            "cell_id": cell_id,
            "edit_mode": edit_mode,
            "cell_type": cell_type,
        }
        return await run(ctx, "NotebookEdit", {k: v for k, v in args.items() if v is not None})

    @server.tool()
    async def run_cell(ctx: Context[Any, Any], notebook_path: str, cell_id: str) -> str:
        """Run a code cell in the notebook's kernel; returns its outputs (bounded) and execution count.
        The tab shows it running. Use stop to interrupt it."""
        return await run(ctx, "RunCell", {"notebook_path": path_of(notebook_path), "cell_id": cell_id})

    @server.tool()
    async def stop(notebook_path: str) -> str:
        """Interrupt the notebook's kernel (a running cell gets KeyboardInterrupt)."""
        path = Path(path_of(notebook_path))
        try:
            kernel_id = await calls.kernels.interrupt(path)
        except GoatError as exc:
            raise ToolError(exc.message) from None
        return f"Interrupted kernel {kernel_id} of {notebook_path}."

    @server.tool()
    async def inspect_variable(ctx: Context[Any, Any], notebook_path: str, expression: str) -> str:
        """Evaluate an expression in the notebook's kernel (no history, no output in the notebook); a
        DataFrame, array or figure comes back summarised (shape, dtypes, nulls, column stats, a few rows)."""
        return await run(
            ctx, "KernelInspect", {"notebook_path": path_of(notebook_path), "expression": expression}
        )

    return server
