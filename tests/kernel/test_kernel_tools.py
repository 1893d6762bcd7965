"""RunCell and KernelInspect in a real kernel: outputs land in the (fake) frontend's cells and reach
the model bounded; KernelInspect summarises live objects without touching the notebook."""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.notebook.notebook_view import strip_ansi
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
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[plot]"),
    tool_turn("RunCell", {"cell_id": "cell-1"}, match="[plot]"),
    text_turn("Plotted.", match="[plot]"),
    tool_turn("RunCell", {"cell_id": "cell-0"}, match="[figs]"),
    tool_turn("RunCell", {"cell_id": "cell-1"}, match="[figs]"),
    text_turn("Looked.", match="[figs]"),
    tool_turn("RunCell", {"cell_id": "cell-2"}, match="[agg]"),
    tool_turn("RunCell", {"cell_id": "cell-3"}, match="[agg]"),
    tool_turn("RunCell", {"cell_id": "cell-2"}, match="[agg]"),
    text_turn("Plotted headless.", match="[agg]"),
]
PLOT_CELL = (
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(8, 6), dpi=200)\n"
    "ax.plot([1, 3, 2])\nax.set_title('trend');"
)
# In the kernel: call the KernelInspect tool through an executor and print what the model gets.
INSPECT_HELPER = """
import json
from pathlib import Path
from goat_jupyter.kernel.services import KernelService
from goat_jupyter.state import SessionState
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor, ToolCall

async def inspect_for_test(expression):
    session = SessionState(workspace=Path.cwd())
    executor = Executor(default_registry(session=session), session, services=Services(kernel=KernelService(get_ipython())))
    [out] = await executor.run_calls([ToolCall("t", "KernelInspect", {"expression": expression})])
    print(json.dumps({"content": out.content, "code": out.metadata.get("error_code")}))

import numpy as np
import pandas as pd

class Broken:
    def __repr__(self):
        raise RuntimeError("repr exploded")

class Noisy:
    def __repr__(self):
        return "N" * 50_000

sales = pd.DataFrame({
    "month": pd.date_range("2025-01-01", periods=12, freq="MS"),
    "region": ["North", "South", None, "West"] * 3,
    "revenue": [120.5, None, 99.0, 101.25, 87.0, 93.5, None, 110.0, 105.0, 98.0, 91.0, 130.0],
})
wide = pd.DataFrame(np.arange(30 * 100).reshape(30, 100), columns=[f"c{i}" for i in range(100)])
big = pd.DataFrame({"x": np.arange(2_000_000), "y": np.random.default_rng(0).random(2_000_000)})
big["label"] = "row"
grid = np.arange(12.0).reshape(3, 4)
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
    # Every cell run gets its own number, none skipped: the %%goat cell, each cell it ran, the next one.
    ran = [c["execution_count"] for c in (first, second, third)]
    goat = result.execution_count
    assert isinstance(goat, int) and ran == [goat + 1, goat + 2, goat + 3]
    following = await kernel.execute("1 + 1")
    assert following.execution_count == goat + 4

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


async def test_inspect_dataframe_shape_dtypes_nulls_memory_head(kernel: KernelSession) -> None:
    out = (await inspect(kernel, "sales"))["content"]
    assert out.startswith("pandas.DataFrame with shape (12, 3), memory ")
    assert re.search(r"month\s+datetime64\[\w+\]\s+0 null", out)
    assert re.search(r"region\s+\S+\s+3 null", out) and re.search(r"revenue\s+float64\s+2 null", out)
    assert "all rows:" in out and "2025-12-01" in out, "a 12-row frame is shown whole"
    head = (await inspect(kernel, "pd.concat([sales] * 3)"))["content"]
    assert "head():" in head and head.count("2025-") == 5 + 2, "head() only (+ the month's min and max)"


async def test_inspect_wide_and_large_frames_stay_bounded(kernel: KernelSession) -> None:
    wide_out = (await inspect(kernel, "wide"))["content"]
    assert "... 60 more columns" in wide_out and "c39" in wide_out and "  c40 " not in wide_out
    assert len(wide_out) < 12_000
    big_out = (await inspect(kernel, "big"))["content"]
    assert big_out.startswith("pandas.DataFrame with shape (2000000, 3), memory ")
    assert "counted shallowly" in big_out, "object columns of a big frame are not walked string by string"
    assert len(big_out) < 3_000 and "1999999" not in big_out


async def test_inspect_series_and_ndarray(kernel: KernelSession) -> None:
    series = (await inspect(kernel, "sales.revenue"))["content"]
    assert series.startswith("pandas.Series 'revenue' with 12 values, dtype float64\nnulls: 2, memory ")
    array = (await inspect(kernel, "grid"))["content"]
    assert array.startswith(
        "numpy.ndarray with shape (3, 4) and dtype float64, 96 bytes\nstats: min 0 mean 5.5 max 11 std 3.452\ncorner:\narray([[ 0.,"
    )
    huge = (await inspect(kernel, "np.zeros((3000, 3000))"))["content"]
    assert "72000000 bytes" not in huge and "68.7 MB" in huge and len(huge) < 2_000


async def test_inspect_containers_of_frames_and_broken_reprs(kernel: KernelSession) -> None:
    nested = (await inspect(kernel, "{'sales': sales, 'parts': [sales.revenue, grid], 'n': 1}"))["content"]
    assert nested.startswith("dict with 3 items")
    assert "<DataFrame shape=(12, 3) columns=[month, region, revenue]>" in nested
    assert (
        "<Series 'revenue' len=12 dtype=float64>" in nested
        and "<ndarray shape=(3, 4) dtype=float64>" in nested
    )
    frames = (await inspect(kernel, "[big] * 500"))["content"]
    assert frames.startswith("list with 500 items") and len(frames) < 10_000
    broken = await inspect(kernel, "Broken()")
    assert broken["code"] is None and broken["content"].startswith("__main__.Broken\n<Broken instance at")
    inside = (await inspect(kernel, "[1, Broken()]"))["content"]
    assert inside.startswith("list with 2 items\n[1, <Broken instance at")


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


def tool_results(server: ReplayServer, match: str) -> list[str]:
    requests = [r for r in server.requests if match in json.dumps(r["messages"])]
    return [str(m["content"]) for m in requests[-1]["messages"] if m["role"] == "tool"]


def image_sizes(server: ReplayServer, match: str) -> list[tuple[int, int]]:
    """Sizes of the images the model's last request for `match` carries."""
    from PIL import Image

    last = [r for r in server.requests if match in json.dumps(r["messages"])][-1]
    urls = re.findall(r"data:image/\w+;base64,([A-Za-z0-9+/=]+)", json.dumps(last["messages"]))
    return [Image.open(io.BytesIO(base64.b64decode(url))).size for url in urls]


def goat_cell_images(result: Any) -> list[Any]:
    return [
        m for m in result.of_type("display_data", "execute_result") if "image/png" in m["content"]["data"]
    ]


async def test_run_cell_plots_reach_the_model_downscaled_and_the_cell(
    kernel: KernelSession, server: ReplayServer
) -> None:
    cells = [
        new_cell("code", PLOT_CELL),
        new_cell("code", "print('no plot here')"),
        new_cell("code", "%%goat"),
    ]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    # The user keeps figures open (close_figures off) and leaves one open in a cell of their own.
    for code in (
        "%config InlineBackend.close_figures = False",
        "import matplotlib.pyplot as plt\nleft = plt.figure(); plt.plot([5, 5]);",
    ):
        assert (await kernel.execute(code)).status == "ok"
    result = await kernel.execute(
        "%%goat --new\n[plot] plot it", timeout=120, metadata={"cellId": cells[2]["id"]}
    )
    assert result.status == "ok", result.error
    plot_outputs = frontend.cells()[0]["outputs"]
    assert [o["output_type"] for o in plot_outputs] == ["display_data"] and "image/png" in plot_outputs[0][
        "data"
    ]
    from PIL import Image

    shown = Image.open(io.BytesIO(base64.b64decode(plot_outputs[0]["data"]["image/png"]))).size
    assert shown[0] > 1024, "the cell keeps the full-size figure"
    plotted, printed = tool_results(server, "[plot]")[-2:]
    assert plotted.count("(image ") == 1 and "attached" in plotted
    assert "(image" not in printed and "no plot here" in printed, "the figure left open is not sent again"
    sizes = image_sizes(server, "[plot]")
    assert len(sizes) == 1 and max(sizes[0]) == 1024, sizes
    assert goat_cell_images(result) == [], "the figure did not land in the %%goat cell"
    assert (await kernel.execute("%config InlineBackend.close_figures = True")).status == "ok"


async def test_run_cell_figures_shown_explicitly_or_before_an_error(
    kernel: KernelSession, server: ReplayServer
) -> None:
    shown_then_open = (
        "import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\nplt.figure(); plt.plot([2, 1]);"
    )
    cells = [
        new_cell("code", shown_then_open),
        new_cell("code", "plt.plot([3, 3])\nraise ValueError('after drawing')"),
        new_cell("code", "%%goat"),
    ]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    assert (await kernel.execute("plt.close('all')")).status == "ok"  # figures earlier tests left open
    result = await kernel.execute(
        "%%goat --new\n[figs] look", timeout=120, metadata={"cellId": cells[2]["id"]}
    )
    assert result.status == "ok", result.error
    both, failed = frontend.cells()[:2]
    assert [o["output_type"] for o in both["outputs"]] == ["display_data", "display_data"], "each figure once"
    assert [o["output_type"] for o in failed["outputs"]] == ["error", "display_data"]
    assert "image/png" in failed["outputs"][1]["data"], "drawn before the error: shown, as in a notebook"
    shown, error = tool_results(server, "[figs]")[-2:]
    assert shown.count("(image ") == 2
    assert error.startswith("Error:") and "ValueError: after drawing" in error
    assert goat_cell_images(result) == []


async def test_run_cell_plots_headless_with_agg(kernel: KernelSession, server: ReplayServer) -> None:
    cells = [
        new_cell("code", "x = 1"),
        new_cell("code", "x = 2"),
        new_cell("code", "print('still no plot')"),
        new_cell(
            "code",
            "import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3))\nplt.bar(['a', 'b'], [3, 4]);",
        ),
        new_cell("code", "%%goat"),
    ]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    setup = "import matplotlib.pyplot as plt\nplt.switch_backend('Agg')\nleft = plt.figure(); plt.plot([1, 2])\nfigures_before = len(plt.get_fignums())"
    assert (await kernel.execute(setup)).status == "ok"
    result = await kernel.execute(
        "%%goat --new\n[agg] plot it", timeout=120, metadata={"cellId": cells[4]["id"]}
    )
    assert result.status == "ok", result.error
    first, plotted, again = tool_results(server, "[agg]")[-3:]
    assert "(image" not in first and "still no plot" in first, "an open, untouched figure is not sent"
    assert plotted.count("(image ") == 1
    assert "(image" not in again, "a figure already sent is not sent again"
    bar = frontend.cells()[3]["outputs"]
    assert len(bar) == 1 and bar[0]["output_type"] == "display_data" and "image/png" in bar[0]["data"]
    [size] = image_sizes(server, "[agg]")
    assert 300 <= size[0] <= 400 and 200 <= size[1] <= 300, size
    assert goat_cell_images(result) == []
    open_count = await kernel.execute("len(plt.get_fignums()) - figures_before")
    assert open_count.text().strip() == "1", "the run's figure stays open, like a script's under Agg"
