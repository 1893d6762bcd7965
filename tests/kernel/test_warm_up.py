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
    from goat_jupyter.agent import llm
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
