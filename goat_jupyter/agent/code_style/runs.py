"""Running code actions (agent/code_style/blocks.py) as the tool calls they stand for, through the executor.

A python block is a NotebookEdit insert (a code cell below the `%%goat` cell, after the ones this run
added) and a RunCell of that cell; a bash block is a Bash call; a file block is a Write (after a Read
when the file exists, as the Write rule wants: the block replaces it whole). Each is an ordinary call with an id:
the same permission decision, approval prompt, transcript card, budget and checkpoint as when a model
makes it. The model reads the results as one user message after its reply (the reply keeps its
blocks as written: a small model that sees JSON calls in its history starts writing them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goat_jupyter.agent.code_style.blocks import CodeBlock
from goat_jupyter.errors import ConflictError, GoatError
from goat_jupyter.state import SessionState
from goat_jupyter.tools.base import ToolContext, ToolOutput
from goat_jupyter.tools.notebook import choose_backend, resolve_notebook
from goat_jupyter.tools.runner import Executor, ToolCall

ERROR_TAIL_CHARS = 2_000  # a failed block's result: its first line and the traceback's last frames
FRAME_CHARS = 600  # each frame kept of a long traceback
TRACEBACK = "Traceback (most recent call last)"
FIXABLE = {"EXECUTION_ERROR"}  # the code ran and failed; a denial or a bad path is not the model's to retry
FIX_NOTES = 2  # a run asks for a fix at most this often
FIX_NOTE = (
    "Your last block failed. Reply with a corrected block now and goat runs it; do not explain the "
    "error or tell the user what to do. If it cannot be fixed, say why in one sentence."
)
NO_NOTEBOOK = (
    "Error: a python block runs as a notebook cell, and this kernel's notebook is not known here "
    "(terminal IPython or a script). Use a bash block instead, e.g. python -c '...'."
)


@dataclass
class CodeResults:
    """What the blocks did: the text the model reads next, and every output (for their images)."""

    parts: list[str] = field(default_factory=lambda: list[str]())
    outputs: list[ToolOutput] = field(default_factory=lambda: list[ToolOutput]())
    calls: list[str] = field(default_factory=lambda: list[str]())  # the tools they ran as, in order

    def text(self) -> str:
        return "\n\n".join(self.parts)


def bounded_error(content: str) -> str:
    """What a model fixes code from: the error's line, the frames in its own cell (`Cell In[...]`),
    the traceback's last frame and the exception; library frames between them are left out."""
    head, marker, trace = content.partition(TRACEBACK)
    if marker:
        content = f"{head}{marker}{_condensed(trace)}"
    if len(content) <= ERROR_TAIL_CHARS + 500:
        return content
    first, _, rest = content.partition("\n")
    return f"{first}\n... [earlier output and frames omitted] ...\n{rest[-ERROR_TAIL_CHARS:]}"


def _condensed(trace: str) -> str:
    frames = trace.split("\n\n")
    own = [frame for frame in frames[:-2] if "Cell In[" in frame][:2]
    left_out = len(frames) - 2 - len(own)
    kept = [*own, f"... [{left_out} library frames omitted] ..."] if left_out > 0 else own
    return "\n\n".join(frame[:FRAME_CHARS] for frame in [*kept, *frames[-2:]])


class CodeRunner:
    """Runs one reply's blocks in order, stopping at the first that fails."""

    def __init__(self, executor: Executor, session: SessionState, turn: int, prefix: str = "code") -> None:
        self.executor = executor
        self.session = session
        self.prefix = f"{prefix}_{turn}"
        self._calls = 0
        self._names: list[str] = []

    async def run(self, blocks: list[CodeBlock], results: CodeResults) -> None:
        """Fills `results` as it goes, so an interrupt keeps what already ran."""
        self._names = results.calls
        for number, block in enumerate(blocks, 1):
            output = await self._action(block)
            results.outputs.append(output)
            results.parts.append(_described(number, len(blocks), block, output))
            if output.is_error:
                if number < len(blocks):
                    results.parts.append(
                        f"Blocks {number + 1} to {len(blocks)} were not run, because block {number} failed."
                    )
                return

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """One call through the executor, with this reply's id prefix."""
        self._calls += 1
        self._names.append(name)
        call = ToolCall(f"{self.prefix}_{self._calls}", name, arguments)
        return (await self.executor.run_calls([call]))[0]

    async def _action(self, block: CodeBlock) -> ToolOutput:
        if block.language == "file":
            return await self._file(block)
        return await (self._python(block) if block.language == "python" else self._bash(block))

    async def _file(self, block: CodeBlock) -> ToolOutput:
        path = self._context().resolve_path(block.path)
        if path.is_file() and not self.session.file_reads.was_read(path):
            read = await self.call("Read", {"file_path": str(path)})
            if read.is_error:
                return read
        return await self.call("Write", {"file_path": str(path), "content": block.source + "\n"})

    async def _bash(self, block: CodeBlock) -> ToolOutput:
        return await self.call("Bash", {"command": block.source})

    async def _python(self, block: CodeBlock) -> ToolOutput:
        path = await self.notebook()
        if path is None:
            return ToolOutput(NO_NOTEBOOK, is_error=True)
        if await self._needs_read(path):  # the file, not JupyterLab: edits need a read first
            await self.call("Read", {"file_path": str(path)})
        inserted = await self.call(
            "NotebookEdit",
            {
                "notebook_path": str(path),
                "new_source": block.source,
                "cell_type": "code",
                "edit_mode": "insert",
            },
        )
        cell_id = inserted.metadata.get("cell_id")
        if inserted.is_error or not isinstance(cell_id, str):
            return inserted
        return await self.call("RunCell", {"notebook_path": str(path), "cell_id": cell_id})

    def _context(self) -> ToolContext:
        return ToolContext(self.session, services=self.executor.services)

    async def notebook(self) -> Path | None:
        """This kernel's notebook, or None (no kernel, or a notebook goat cannot tell)."""
        if self.executor.services.kernel is None:
            return None
        try:
            return await resolve_notebook(None, self._context())
        except GoatError:
            return None

    async def _needs_read(self, path: Path) -> bool:
        try:
            backend = await choose_backend(path, self._context())
            if not backend.live:
                self.session.file_reads.check_writable(path)
        except ConflictError:
            return True
        except GoatError:
            return False  # NotebookEdit says what is wrong
        return False


def _described(number: int, count: int, block: CodeBlock, output: ToolOutput) -> str:
    """One block's result as the model reads it."""
    if count == 1:
        which = f"your file block for {block.path}" if block.path else f"your {block.language} block"
    else:
        which = f"block {number} ({f'file {block.path}' if block.path else block.language})"
    content = bounded_error(output.content) if output.is_error else output.content
    if block.path and not output.is_error:
        content += f"\nThe file was saved, not run.{_how_to_run(block.path)}"
    return f"Result of {which}:\n{content}"


def _how_to_run(path: str) -> str:
    """The next step, as the block to write: a small model copies an example better than a rule."""
    if not path.endswith((".py", ".sh")):
        return ""
    command = f"python {path}" if path.endswith(".py") else f"bash {path}"
    return f" To run it, reply with:\n```bash\n{command}\n```"
