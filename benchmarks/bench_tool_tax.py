"""The per-request tool tax (issue 34): cl100k tokens of the first request goat sends, per profile.

Each profile's first request (system prompt, the workspace's facts, the prompt, the reminder and the
tool definitions) is captured by the replay server over real HTTP, with a kernel attached so that
every built-in is usable (RunCell, KernelInspect). The baseline is the same request with every tool's
schema sent (nothing deferred), counted in the same run; the figure measured before ToolSearch
(issue 34: 5,638) is printed beside it. Lists which tools wait behind ToolSearch.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goat_jupyter.agent.context import request_tokens, tools_tokens
from goat_jupyter.kernel.services import KernelService
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.offer import offered_tools, unusable_tools
from tests.agent_helpers import AgentRig, make_agent, text_turn

BEFORE = 5_638  # the full profile's first request before issue 34, as the issue measured it
TARGET = 4_200


async def first_request(profile: str) -> tuple[AgentRig, dict[str, Any]]:
    workspace = Path(tempfile.mkdtemp(prefix="goat-tax-"))
    with ReplayServer([text_turn("hi")]) as server:
        rig = make_agent(workspace, server.url)
        rig.session.persist = False
        rig.session.settings.tool_profile = profile  # type: ignore[assignment]
        rig.agent.executor.services.kernel = KernelService(shell=None)  # the tools are offered, not run
        await rig.agent.run("Load sales.csv and plot the three worst months.")
        return rig, server.requests[0]


def tokens(request: dict[str, Any]) -> int:
    return request_tokens(request["messages"], request.get("tools", []))


async def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    rig, full = await first_request("full")
    _, lean = await first_request("lean")
    usable = offered_tools(rig.agent.registry, unusable_tools(rig.agent.executor.services))
    every = [t for t in usable if t["function"]["name"] != "ToolSearch"]
    eager = {**full, "tools": every}  # the same request with every schema sent, as before issue 34
    sent = {t["function"]["name"] for t in full["tools"]}
    print("request: cl100k tokens of the first request; tools: of which tool definitions (how many)")
    print(f"{'profile':<10} {'request':>8} {'tools':>12}  {'vs all eager':>12}  {'vs before':>9}")
    for name, request in (("full", full), ("lean", lean), ("all eager", eager)):
        count, defined = tokens(request), tools_tokens(request["tools"])
        print(
            f"{name:<10} {count:>8,} {defined:>7,} ({len(request['tools']):>2})"
            f"  {count / tokens(eager):>11.2f}x  {count / BEFORE:>8.2f}x"
        )
    print(f"before issue 34 (issue's figure): {BEFORE:,}")
    deferred = sorted(t["function"]["name"] for t in every if t["function"]["name"] not in sent)
    print(f"deferred behind ToolSearch ({len(deferred)}): {', '.join(deferred)}")
    print(f"full profile's first request <= {TARGET:,}: {'yes' if tokens(full) <= TARGET else 'NO'}")


if __name__ == "__main__":
    asyncio.run(main())
