"""The background warm-up leaves nothing for the first real turn to import (a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

FIRST_TURN_AFTER_WARM_UP = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from goat_jupyter.agent import litellm_loader as llm
    from goat_jupyter.replay import ReplayServer
    from tests.agent_helpers import make_agent

    llm.prewarm_now()
    assert llm.warmed.is_set()
    with ReplayServer([{"text": "hello"}]) as server:
        rig = make_agent(Path(sys.argv[1]), server.url)
        before = set(sys.modules)
        result = asyncio.run(rig.agent.run("hi"))
    print(json.dumps({"text": result.text, "imported": sorted(set(sys.modules) - before)}))
    """
)


def test_first_turn_after_warm_up_imports_no_more_packages(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", FIRST_TURN_AFTER_WARM_UP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["text"] == "hello"
    # The first turn sends ~25 tool schemas; litellm's tool handling imports the MCP SDK, its
    # streaming and cost modules on first use. The warm-up must have paid for all of them.
    heavy = [
        name for name in report["imported"] if name.split(".")[0] in {"litellm", "openai", "mcp", "aiohttp"}
    ]
    assert heavy == [], heavy


# What `%load_ext goat_jupyter` imports on the calling (kernel) thread; the warm-up thread's own
# imports are left out, so the check does not depend on how far that thread got.
LOAD_EXT_ON_THE_KERNEL_THREAD = textwrap.dedent(
    """
    import json, sys, threading
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    main = threading.get_ident()
    imported = []
    recording = [True]

    def hook(event, args):
        if event == "import" and recording[0] and threading.get_ident() == main:
            imported.append(args[0])

    sys.addaudithook(hook)
    ip.run_line_magic("load_ext", "goat_jupyter")
    recording[0] = False
    print(json.dumps(imported))
    """
)


def test_load_ext_imports_no_tool_agent_or_model_library_on_the_kernel_thread() -> None:
    run = subprocess.run(
        [sys.executable, "-c", LOAD_EXT_ON_THE_KERNEL_THREAD],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert run.returncode == 0, run.stderr[-3000:]
    imported = set(json.loads(run.stdout.strip().splitlines()[-1]))
    assert "goat_jupyter.kernel.extension" in imported  # the hook saw the load
    heavy = sorted(
        name
        for name in imported
        if name.split(".")[0] in {"litellm", "openai", "pydantic", "httpx", "mcp", "nbformat"}
        or (
            name.startswith(("goat_jupyter.tools.", "goat_jupyter.agent", "goat_jupyter.permissions"))
            and name != "goat_jupyter.tools.events"
        )
    )
    assert heavy == [], heavy
