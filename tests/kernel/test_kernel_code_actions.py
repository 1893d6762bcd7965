"""Code actions (issue 34) in a real kernel with the fake frontend and a scripted model.

A python block runs as a visible cell below the `%%goat` cell (its output reaching the next request),
a bash block as Bash, a failing block comes back with its traceback and stops the blocks after it.
Permission parity: each case runs twice, as a code action and as the NotebookEdit + RunCell calls a
tools-style model makes, each with a fresh notebook, and both must end the same (same cells, same
kernel names, same result text): deny rules, exact-source rules in dontAsk, plan mode, the user's
Deny, tag rules and locks, python that shells out past a Bash rule (RunCell decides, as for a cell),
and in a headless kernel an untrusted folder's mode and the headless denial.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from goat_jupyter.agent.code_style import FIX_NOTE
from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.notebook_frontend import FakeNotebookFrontend, new_cell

pytestmark = [pytest.mark.timeout(400), pytest.mark.asyncio(loop_scope="module")]
NB = "nb.ipynb"


def py(source: str) -> str:
    return f"```python\n{source}\n```"


def code_turns(tag: str, *sources: str) -> list[dict[str, Any]]:
    """A code-style model: one reply with the blocks, then the answer."""
    return [text_turn("\n".join(py(s) for s in sources), match=tag), text_turn("Done.", match=tag)]


def tool_turns(tag: str, source: str, index: int) -> list[dict[str, Any]]:
    """A tools-style model doing the same: insert below the %%goat cell, run the new cell."""
    insert = {"notebook_path": NB, "new_source": source, "cell_type": "code", "edit_mode": "insert"}
    return [
        tool_turn("NotebookEdit", insert, match=tag),
        tool_turn("RunCell", {"notebook_path": NB, "cell_id": f"cell-{index}"}, match=tag),
        text_turn("Done.", match=tag),
    ]


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    rules: dict[str, list[str]]
    mode: str = "bypassPermissions"
    tags: tuple[str, ...] = ()  # the tags of a cell above the %%goat cell holding the same source
    click_deny: bool = False
    runs: bool = False  # what both ways must do: run the cell, or not


CASES = [
    Case("deny-runcell", "ran_a = 1", {"deny": ["RunCell"]}),
    Case("deny-notebook-edit", "ran_b = 1", {"deny": ["Edit(nb.ipynb)"]}),
    Case("dontask", "ran_c = 1", {}, mode="dontAsk"),
    Case(
        "dontask-exact",
        "ran_d = 1",
        {"allow": ["NotebookEdit", "RunCell(ran_d = 1)"]},
        mode="dontAsk",
        runs=True,
    ),
    Case("dontask-other", "ran_e = 2", {"allow": ["NotebookEdit", "RunCell(ran_e = 1)"]}, mode="dontAsk"),
    Case("ask-rule-deny", "ran_f = 1", {"ask": ["RunCell"], "allow": ["NotebookEdit"]}, click_deny=True),
    Case(
        "shell-out",
        "import os, subprocess\nsubprocess.run(['rm', 'v1'])\nos.system('rm v2')\n!rm v3\nran_g = 1",
        {"deny": ["Bash(rm:*)"]},
        runs=True,  # RunCell decides a cell: Bash rules do not see into Python (README, Permissions)
    ),
    Case(  # the new cell carries no tag: the rule and the lock cover the tagged cell only
        "tag-rule", "ran_h = 1", {"deny": ["RunCell(tag:train)"]}, tags=("train", "goat:locked"), runs=True
    ),
]
TURNS = [
    text_turn("Adding up:\n" + py("total = sum(range(10))\nprint('total is', total)"), match="[run]"),
    text_turn("```bash\necho from-bash > said.txt && cat said.txt\n```", match="[run]"),
    text_turn("Both ran.", match="[run]"),
    *code_turns("[error]", "def f():\n    return 1 / 0\nf()", "after_error = 1"),
    text_turn("It divides by zero on purpose.", match="[error]"),  # after goat asks for the fix
    *code_turns("[plan]", "ran_plan = 1"),
    *code_turns("[plot]", "import matplotlib.pyplot as plt\nplt.plot([0, 1, 4, 9])\nplt.show()"),
    text_turn("It is fixed.", match="[look]"),
]
for case in CASES:
    TURNS += code_turns(f"[code {case.name}]", case.source) + tool_turns(
        f"[tool {case.name}]", case.source, 2
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer(TURNS) as replay:
        yield replay


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    server: ReplayServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[KernelSession]:
    workspace = tmp_path_factory.mktemp("code-actions") / "ws"
    workspace.mkdir()
    prepare_workspace(workspace)
    home = workspace.parent / "home"
    async with KernelSession(workspace, replay_kernel_env(home, server.url)) as session:
        user_settings(session, {})
        assert (await session.execute("%load_ext goat_jupyter")).status == "ok"
        yield session


def user_settings(kernel: KernelSession, rules: dict[str, list[str]]) -> None:
    home = Path(kernel.env["GOAT_HOME"])
    (home / "settings.json").write_text(json.dumps({"action_style": "code", "permissions": rules}))


def fresh_notebook(
    kernel: KernelSession, above: list[dict[str, Any]]
) -> tuple[FakeNotebookFrontend, dict[str, Any]]:
    goat = new_cell("code", "%%goat\n...")
    cells = [*above, goat]
    frontend = FakeNotebookFrontend(NB, cells, server_root=str(kernel.cwd)).attach(kernel)
    return frontend, goat


async def run_goat(
    kernel: KernelSession, goat: dict[str, Any], prompt: str, mode: str = "", click_deny: bool = False
) -> str:
    flag = f" --mode {mode}" if mode else ""
    running = asyncio.ensure_future(
        kernel.execute(f"%%goat --new{flag}\n{prompt}", timeout=150, metadata={"cellId": goat["id"]})
    )
    if click_deny:
        kernel.click(await kernel.wait_widget("ButtonModel", timeout=120, description="Deny"))
    result = await asyncio.wait_for(running, 160)
    assert result.status == "ok", result.error
    return result.text("text/plain") + result.text("text/markdown")


def last_user_or_tool(server: ReplayServer, tag: str) -> list[str]:
    requests = [r for r in server.requests if tag in json.dumps(r["messages"])]
    return [str(m["content"]) for m in requests[-1]["messages"] if m["role"] in ("user", "tool")]


async def names(kernel: KernelSession, *wanted: str) -> list[str]:
    result = await kernel.execute(f"print(sorted(n for n in {list(wanted)!r} if n in globals()))")
    return json.loads(result.stdout.strip().replace("'", '"'))


async def test_a_python_block_runs_as_a_visible_cell_and_its_output_reaches_the_model(
    kernel: KernelSession, server: ReplayServer
) -> None:
    user_settings(kernel, {})
    await kernel.execute("%goat config reload")
    frontend, goat = fresh_notebook(kernel, [])
    await run_goat(kernel, goat, "[run] add it up")
    cells = frontend.cells()
    assert [c["source"] for c in cells[1:]] == ["total = sum(range(10))\nprint('total is', total)"]
    outputs = json.dumps(cells[1]["outputs"])
    assert "total is 45" in outputs and cells[1]["execution_count"] is not None
    assert cells[1]["metadata"]["goat"]["cell"] == goat["id"]  # stamped as goat's, from this cell
    requests = [r for r in server.requests if "[run]" in json.dumps(r["messages"])]
    assert "tools" not in requests[1]
    seen = str(requests[1]["messages"][-1]["content"])
    assert seen.startswith("Result of your python block:") and "total is 45" in seen
    assert "from-bash" in str(requests[2]["messages"][-1]["content"])
    assert (kernel.cwd / "said.txt").read_text() == "from-bash\n"
    assert await names(kernel, "total") == ["total"]


async def test_the_model_first_sees_the_notebook_the_files_and_the_variables(
    kernel: KernelSession, server: ReplayServer
) -> None:
    await kernel.execute(
        "import pandas as pd\nprices = pd.DataFrame({'price': [1.5, 2.5]})\nlabel = 'x' * 500"
    )
    (kernel.cwd / "data.csv").write_text("a\n1\n")
    frontend, goat = fresh_notebook(kernel, [new_cell("code", "total = sum([1, 2])\nprint(totl)")])
    await run_goat(kernel, goat, "[look] fix the first cell")
    first = next(r for r in server.requests if "[look]" in json.dumps(r["messages"]))
    prompt = str(first["messages"][-1]["content"])
    assert prompt.index("The notebook you are in") < prompt.index("[look] fix the first cell")
    assert "print(totl)" in prompt and 'id="' in prompt  # the cell, as Read shows it
    assert "Files in the working folder" in prompt and "data.csv" in prompt
    assert "prices = <DataFrame shape=(2, 1) columns=[price]>" in prompt
    assert "label = 'xxxx" in prompt and "x" * 200 not in prompt  # a long value stays one short line
    assert "pd = " not in prompt and "pd:" not in prompt  # modules are not variables
    assert len(frontend.cells()) == 2  # looking changed nothing


async def test_a_failing_block_returns_its_traceback_and_stops_the_rest(
    kernel: KernelSession, server: ReplayServer
) -> None:
    frontend, goat = fresh_notebook(kernel, [])
    await run_goat(kernel, goat, "[error] try it")
    requests = [r for r in server.requests if "[error]" in json.dumps(r["messages"])]
    message = str(requests[1]["messages"][-1]["content"])
    assert FIX_NOTE in str(requests[2]["messages"][-1]["content"])  # "Done." did not fix it
    assert "Result of block 1 (python):\nError:" in message and "ZeroDivisionError" in message
    assert "return 1 / 0" in message  # the frame that failed
    assert "Blocks 2 to 2 were not run, because block 1 failed." in message
    assert await names(kernel, "after_error") == []
    assert len(frontend.cells()) == 2 and "ZeroDivisionError" in json.dumps(frontend.cells()[1]["outputs"])


async def test_a_figure_reaches_the_model_as_an_image_after_the_results(
    kernel: KernelSession, server: ReplayServer
) -> None:
    frontend, goat = fresh_notebook(kernel, [])
    await run_goat(kernel, goat, "[plot] plot it")
    assert "image/png" in json.dumps(frontend.cells()[1]["outputs"])
    request = [r for r in server.requests if "[plot]" in json.dumps(r["messages"])][-1]
    results, images = request["messages"][-2:]
    assert results["role"] == "user" and str(results["content"]).startswith("Result of your python block:")
    assert images["role"] == "user" and isinstance(images["content"], list)
    assert [part["type"] for part in images["content"]] == ["text", "image_url"]


async def test_in_plan_mode_nothing_is_inserted_or_run(kernel: KernelSession) -> None:
    frontend, goat = fresh_notebook(kernel, [])
    text = await run_goat(kernel, goat, "[plan] do it", mode="plan")
    assert len(frontend.cells()) == 1 and await names(kernel, "ran_plan") == []
    assert "plan mode" in text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_a_code_action_is_decided_as_the_cell_it_stands_for(
    kernel: KernelSession, server: ReplayServer, case: Case
) -> None:
    user_settings(kernel, case.rules)
    await kernel.execute("%goat config reload")
    outcomes: list[tuple[list[str], list[str], list[str], str, list[str]]] = []
    for way in ("code", "tool"):
        for victim in ("v1", "v2", "v3"):
            (kernel.cwd / victim).write_text("keep")
        above = [new_cell("code", case.source, {"tags": list(case.tags)})] if case.tags else []
        if not case.tags:
            above = [new_cell("markdown", "# Analysis")]
        frontend, goat = fresh_notebook(kernel, above)
        tag = f"[{way} {case.name}]"
        await run_goat(kernel, goat, f"{tag} go", mode=case.mode, click_deny=case.click_deny)
        ran = await names(kernel, case.source.split("\n")[-1].split(" = ")[0])
        await kernel.execute(f"globals().pop({ran[0]!r}, None)" if ran else "pass")
        result = outcome_text(server, tag, way)
        victims = sorted(v for v in ("v1", "v2", "v3") if (kernel.cwd / v).exists())
        cells = [f"{c['source']}|{bool(c.get('outputs'))}" for c in frontend.cells()]
        outcomes.append((cells, ran, victims, result, [c["source"] for c in frontend.cells()[:1]]))
    code, tool = outcomes
    assert bool(code[1]) is case.runs, (code, case)
    assert code[2] == ([] if case.name == "shell-out" else ["v1", "v2", "v3"])
    assert code[0] == tool[0], "the same cells, with and without outputs"
    assert code[1] == tool[1] and code[2] == tool[2]
    assert _same_start(code[3], tool[3]), (code[3], tool[3])


def outcome_text(server: ReplayServer, tag: str, way: str) -> str:
    """What decided the run: the code action's result, or the tools' first error (else the last
    result; a scripted tools-style model goes on after a denial, a code action stops)."""
    results = last_user_or_tool(server, tag)
    if way == "code":
        return results[-1].split(":\n", 1)[-1]
    tool_results = results[-2:]
    return next((r for r in tool_results if r.startswith("Error:")), tool_results[-1])


def _same_start(code: str, tool: str) -> bool:
    """The same decision: the same error text, or both ran the cell (ids and counts differ)."""
    if code.startswith("Error:") or tool.startswith("Error:"):
        return code == tool
    return code.startswith("Ran cell 3 ") and _without_ids(code) == _without_ids(tool)


def _without_ids(text: str) -> str:
    return re.sub(r"\(id \w+\)|\[\d+\]", "", text)


HEADLESS_TURNS = [
    *code_turns("[code untrusted]", "ran_u = 1"),
    *tool_turns("[tool untrusted]", "ran_u = 1", 1),
    *code_turns("[code trusted]", "ran_t = 1"),
    *tool_turns("[tool trusted]", "ran_t = 1", 1),
]


async def test_headless_an_untrusted_folders_mode_does_not_apply_to_code_actions(tmp_path: Path) -> None:
    """The folder's file says bypassPermissions; untrusted, the user's default mode holds, and with
    nobody to click the insert is denied, as the NotebookEdit call is. Trusted, both run."""
    workspace = tmp_path / "repo"
    prepare_workspace(workspace)
    project = json.loads((workspace / ".goat/settings.json").read_text())
    (workspace / ".goat/settings.json").write_text(
        json.dumps({**project, "permission_mode": "bypassPermissions"})
    )
    home = tmp_path / "home"
    env = {**replay_kernel_env(home, "unused", mode="default"), "GOAT_INTERACTIVE": "0"}
    del env["GOAT_PERMISSION_MODE"]
    (home / "settings.json").write_text(json.dumps({"action_style": "code"}))
    with ReplayServer(HEADLESS_TURNS) as replay:
        env["OPENAI_API_BASE"] = replay.url
        async with KernelSession(workspace, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            texts: dict[str, str] = {}
            for stage in ("untrusted", "trusted"):
                if stage == "trusted":
                    assert (await kernel.execute("%goat trust")).status == "ok"
                for way in ("code", "tool"):
                    frontend, goat = fresh_notebook(kernel, [])
                    await run_goat(kernel, goat, f"[{way} {stage}] go")
                    texts[f"{way} {stage}"] = outcome_text(replay, f"[{way} {stage}]", way)
                    ran = await names(kernel, f"ran_{stage[0]}")
                    assert bool(ran) is (stage == "trusted"), (way, stage, texts)
                    assert len(frontend.cells()) == (2 if stage == "trusted" else 1)
                    await kernel.execute(f"globals().pop('ran_{stage[0]}', None)")
    untrusted = texts["code untrusted"]
    assert untrusted == texts["tool untrusted"] and "headless" in untrusted and "NotebookEdit" in untrusted
    assert _without_ids(texts["code trusted"]) == _without_ids(texts["tool trusted"])


FILE_TURNS = [
    text_turn(py("on_disk = 6 * 7\nprint('on disk', on_disk)"), match="[file]"),
    text_turn(py("print(on_disk + 1)"), match="[file]"),
    text_turn("Done.", match="[file]"),
]


async def test_without_a_frontend_blocks_run_as_cells_of_the_notebook_file(tmp_path: Path) -> None:
    """nbclient, papermill, a kernel whose client has no labextension: the cells land in the .ipynb."""
    workspace = tmp_path / "ws"
    prepare_workspace(workspace)
    goat = new_cell("code", "%%goat\n[file] go")
    notebook = {"cells": [goat], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "disk.ipynb").write_text(json.dumps(notebook))
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"action_style": "code"}))
    with ReplayServer(FILE_TURNS) as replay:
        env = {
            **replay_kernel_env(home, replay.url),
            "JPY_SESSION_NAME": "disk.ipynb",
            "GOAT_INTERACTIVE": "0",
        }
        async with KernelSession(workspace, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            result = await kernel.execute("%%goat\n[file] go", timeout=150, metadata={"cellId": goat["id"]})
            assert result.status == "ok", result.error
        second = str(replay.requests[1]["messages"][-1]["content"])
        third = str(replay.requests[2]["messages"][-1]["content"])
    cells = json.loads((workspace / "disk.ipynb").read_text())["cells"]
    assert ["".join(c["source"]) for c in cells[1:]] == [
        "on_disk = 6 * 7\nprint('on disk', on_disk)",
        "print(on_disk + 1)",
    ]
    assert "on disk 42" in json.dumps(cells[1]["outputs"]) and "43" in json.dumps(cells[2]["outputs"])
    assert "on disk 42" in second and "43" in third
