"""RunCell and KernelInspect in a real kernel: outputs land in the (fake) frontend's cells and reach
the model bounded; KernelInspect summarises live objects without touching the notebook."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.notebook_view import strip_ansi
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"
IMAGE_CELL = (
    "import io\nfrom PIL import Image as PILImage\nfrom IPython.display import Image, display\n"
    "buffer = io.BytesIO()\nPILImage.new('RGB', (40, 30), 'red').save(buffer, 'PNG')\n"
    "display(Image(buffer.getvalue()))"
)
TURNS = [
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[run]"),
    tool_turn("RunCell", {"cell_id": "cell-1"}, match="[run]"),
    tool_turn("RunCell", {"notebook_path": NB, "cell_id": "cell-2"}, match="[run]"),
    tool_turn("KernelInspect", {"expression": "answer"}, match="[run]"),
    text_turn("Ran them.", match="[run]"),
]
# In the kernel: call the KernelInspect tool through an executor and print what the model gets.
INSPECT_HELPER = """
import json
from pathlib import Path
from goat_jupyter.kernel_tools import KernelService
from goat_jupyter.state import SessionState
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.runner import Executor, ToolCall

async def inspect_for_test(expression):
    session = SessionState(workspace=Path.cwd())
    executor = Executor(default_registry(session=session), session, services={"kernel": KernelService(get_ipython())})
    [out] = await executor.run_calls([ToolCall("t", "KernelInspect", {"expression": expression})])
    print(json.dumps({"content": out.content, "code": out.metadata.get("error_code")}))

class Table:
    "Duck-typed DataFrame: shape, dtypes and head(), as pandas has them."
    def __init__(self, rows):
        self.rows = rows
        self.shape = (rows, 2)
        self.dtypes = Text("a    int64\\nb    object")
    def head(self, n=5):
        return Text("\\n".join(f"{i}  {i * 10}  row{i}" for i in range(min(n, self.rows))))
    def to_string(self):
        return self.head(self.rows).to_string()

class Text:
    def __init__(self, text):
        self.text = text
    def to_string(self):
        return self.text

class Grid:
    "Duck-typed array: shape and dtype."
    shape = (2, 3)
    dtype = "float32"
    def __repr__(self):
        return "Grid([[0, 1, 2], [3, 4, 5]])"

class Noisy:
    def __repr__(self):
        return "N" * 50_000

numbers = [1, 2, 3]
config = {"alpha": 0.5, "names": ["a", "b"]}
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("kernel-tools")
    prepare_workspace(workspace)
    async with KernelSession(
        workspace, replay_kernel_env(workspace.parent / "home-tools", server.url)
    ) as session:
        helper = await session.execute(INSPECT_HELPER)  # before %load_ext: its warm-up imports on a thread
        assert helper.status == "ok", helper.error
        loaded = await session.execute("%load_ext goat_jupyter")
        assert loaded.status == "ok", loaded.error
        yield session


async def inspect(kernel: KernelSession, expression: str) -> dict[str, Any]:
    result = await kernel.execute(f"await inspect_for_test({expression!r})")
    assert result.status == "ok", result.error
    return json.loads(result.stdout)


async def test_run_cell_fills_outputs_in_the_frontend_and_returns_them(
    kernel: KernelSession, server: ReplayServer
) -> None:
    cells = [
        new_cell("code", "print('hello from the cell')\nanswer = 6 * 7\nanswer"),
        new_cell("code", "def broken():\n    return 1 / 0\nbroken()"),
        new_cell("code", IMAGE_CELL),
        new_cell("code", "%%goat\n[run] ..."),
    ]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    result = await kernel.execute(
        "%%goat --new\n[run] run the cells", timeout=120, metadata={"cellId": cells[3]["id"]}
    )
    assert result.status == "ok", result.error
    first, second, third = frontend.cells()[:3]
    assert first["outputs"][0] == {"output_type": "stream", "name": "stdout", "text": "hello from the cell\n"}
    assert (
        first["outputs"][1]["output_type"] == "execute_result"
        and first["outputs"][1]["data"]["text/plain"] == "42"
    )
    assert (
        isinstance(first["execution_count"], int)
        and first["outputs"][1]["execution_count"] == first["execution_count"]
    )
    assert (
        second["outputs"][0]["output_type"] == "error"
        and second["outputs"][0]["ename"] == "ZeroDivisionError"
    )
    assert "return 1 / 0" in strip_ansi("\n".join(second["outputs"][0]["traceback"]))
    assert "image/png" in third["outputs"][0]["data"]
    assert "hello from the cell" not in result.stdout, "the cell's print went to its own outputs"
    # Every cell run gets its own number: the %%goat cell, each cell it ran, the next cell run.
    ran = [c["execution_count"] for c in (first, second, third)]
    assert result.execution_count not in ran and len(set(ran)) == 3
    following = await kernel.execute("1 + 1")
    assert following.execution_count is not None and following.execution_count > max(ran)

    requests = [r for r in server.requests if "[run]" in json.dumps(r["messages"])]
    tools = [str(m["content"]) for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert "[stdout]\nhello from the cell" in tools[0] and "[result]\n42" in tools[0]
    assert tools[1].startswith("Error:") and "ZeroDivisionError: division by zero" in tools[1]
    assert "broken()" in tools[1] and "\x1b[" not in tools[1]
    assert "(image 1: " in tools[2] and "attached" in tools[2]
    assert "int" in tools[3] and "42" in tools[3]
    images = [
        m for r in requests for m in r["messages"] if m["role"] == "user" and isinstance(m["content"], list)
    ]
    assert any("image_url" in json.dumps(m) for m in images), "the image reached the model"
    after = await kernel.execute("answer + 1")
    assert after.text().strip().startswith("43"), "the cell ran in the user's namespace"


async def test_inspect_generic_objects(kernel: KernelSession) -> None:
    numbers = await inspect(kernel, "numbers")
    assert numbers["content"] == "list with 3 items\n[1, 2, 3]"
    config = await inspect(kernel, "config")
    assert "dict with 2 items" in config["content"] and "'alpha': 0.5" in config["content"]
    noisy = await inspect(kernel, "Noisy()")
    assert noisy["content"].startswith("__main__.Noisy") and len(noisy["content"]) < 10_000


async def test_inspect_duck_typed_frames_and_arrays(kernel: KernelSession) -> None:
    big = (await inspect(kernel, "Table(100)"))["content"]
    assert big.startswith("__main__.Table with shape (100, 2)")
    assert "dtypes:\na    int64\nb    object" in big and "head():\n0  0  row0" in big and "row5" not in big
    small = (await inspect(kernel, "Table(8)"))["content"]
    assert "all rows:" in small and "row7" in small
    grid = (await inspect(kernel, "Grid()"))["content"]
    assert grid.startswith("__main__.Grid with shape (2, 3) and dtype float32") and "Grid([[0, 1, 2]" in grid


async def test_inspect_numpy_array_when_numpy_is_installed(kernel: KernelSession) -> None:
    pytest.importorskip("numpy")
    out = await inspect(kernel, "__import__('numpy').arange(12.0).reshape(3, 4)")
    assert out["content"].startswith("numpy.ndarray with shape (3, 4) and dtype float64")


async def test_inspect_errors_and_printed_output(kernel: KernelSession) -> None:
    missing = await inspect(kernel, "not_defined_anywhere")
    assert missing["code"] == "EXECUTION_ERROR" and "NameError" in missing["content"]
    statement = await inspect(kernel, "x = 1")
    assert statement["code"] == "INVALID_INPUT" and "RunCell" in statement["content"]
    printed = await inspect(kernel, "print('side note') or 5")
    assert (
        printed["content"].startswith("int\n5")
        and "Output while evaluating:\n[stdout]\nside note" in printed["content"]
    )
