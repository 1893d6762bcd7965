"""No process outlives the kernel that started it: `%goat reset`, shutdown and SIGKILL of the kernel
end every Bash, background and RunCode process, `setsid` and double-forked ones included."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goat_jupyter.processes.owner import CGROUPS_ENV
from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env
from tests.process_helpers import wait_marker_gone, with_marker

pytestmark = [pytest.mark.timeout(240)]


def detaching_command(marker: str, cgroups: bool) -> str:
    """A setsid child, a double-forked setsid grandchild and (with cgroups) one that also clears its
    environment: without a cgroup only the env marker finds a double-forked process."""
    env_i = f"(env -i setsid sleep {marker} &); " if cgroups else f"(setsid sleep {marker} &); "
    return f"setsid sleep {marker} & (setsid sleep {marker} &); {env_i}sleep {marker}"


def turns(marker: str, cgroups: bool) -> list[dict[str, object]]:
    return [
        tool_turn(
            "Bash",
            {"command": detaching_command(marker, cgroups), "run_in_background": True},
            match="[start]",
        ),
        tool_turn("Bash", {"command": f"(setsid sleep {marker} &); echo left"}, match="[start]"),
        text_turn("Started.", match="[start]"),
    ]


async def sleeping(marker: str, count: int) -> int:
    """Wait until `count` sleep processes with the marker run; their number."""
    import asyncio

    for _ in range(200):
        found = sum(proc.name() == "sleep" for proc in with_marker(marker))
        if found >= count:
            return found
        await asyncio.sleep(0.05)
    return sum(proc.name() == "sleep" for proc in with_marker(marker))


@pytest.fixture
async def marker() -> str:
    return f"3000.{uuid.uuid4().int % 10**9}"


@pytest.fixture
async def kernel(tmp_path: Path, marker: str, request: pytest.FixtureRequest) -> AsyncIterator[KernelSession]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    prepare_workspace(workspace)
    cgroups = getattr(request, "param", "cgroups") == "cgroups"
    with ReplayServer(turns(marker, cgroups)) as server:
        env = replay_kernel_env(tmp_path / "home", server.url)
        if not cgroups:
            env[CGROUPS_ENV] = "0"
        async with KernelSession(workspace, env) as session:
            loaded = await session.execute("%load_ext goat_jupyter")
            assert loaded.status == "ok", loaded.error
            started = await session.execute("%%goat\n[start] start the sleepers")
            assert started.status == "ok", started.error
            assert "Started." in started.text(), started.text()
            yield session
    assert await wait_marker_gone(marker) == []


async def kernel_pid(kernel: KernelSession) -> int:
    result = await kernel.execute("import os; print(os.getpid())")
    return int(result.stdout)


@pytest.mark.parametrize("kernel", ["cgroups", "marker only"], indirect=True)
async def test_sigkill_of_the_kernel_leaves_no_process(kernel: KernelSession, marker: str) -> None:
    assert await sleeping(marker, 5) == 5
    os.kill(await kernel_pid(kernel), signal.SIGKILL)
    left = await wait_marker_gone(marker)
    assert left == [], [proc.cmdline() for proc in left]


async def test_goat_reset_leaves_no_process(kernel: KernelSession, marker: str) -> None:
    assert await sleeping(marker, 5) == 5
    reset = await kernel.execute("%goat reset")
    assert reset.status == "ok", reset.error
    left = await wait_marker_gone(marker)
    assert left == [], [proc.cmdline() for proc in left]


async def test_kernel_shutdown_leaves_no_process(kernel: KernelSession, marker: str) -> None:
    assert await sleeping(marker, 5) == 5
    await kernel.km.shutdown_kernel(now=False)
    left = await wait_marker_gone(marker)
    assert left == [], [proc.cmdline() for proc in left]
