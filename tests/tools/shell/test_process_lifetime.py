"""No process outlives the Bash call or background task that started it: timeout, interrupt and
TaskStop end `setsid` children and double-forked grandchildren too (real processes, real cgroups)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goat_jupyter.processes.owner import cgroup_root, kill_everything
from goat_jupyter.tools import Registry, default_registry
from tests.process_helpers import wait_marker_gone, with_marker

DETACHING = {
    "setsid child": "setsid sleep {m} & sleep {m}",
    "double fork": "(setsid sleep {m} &); sleep {m}",
    "nohup and disown": "nohup setsid sleep {m} >/dev/null 2>&1 & disown; sleep {m}",
    "python start_new_session": (
        'python -c \'import subprocess; subprocess.Popen(["sleep", "{m}"], start_new_session=True)\'; sleep {m}'
    ),
}
REPO = str(Path(__file__).resolve().parents[3])
needs_cgroup = pytest.mark.skipif(cgroup_root() is None, reason="no writable pids cgroup here")


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()
    kill_everything()


@pytest.fixture
def marker() -> str:
    return f"3000.{uuid.uuid4().int % 10**9}"


async def sleepers(marker: str, count: int) -> int:
    found = 0
    for _ in range(200):
        found = sum(proc.name() == "sleep" for proc in with_marker(marker))
        if found >= count:
            break
        await asyncio.sleep(0.05)
    return found


@pytest.mark.parametrize("shape", DETACHING)
async def test_bash_timeout_kills_detached_children(registry: Registry, marker: str, shape: str) -> None:
    out = await registry.call("Bash", {"command": DETACHING[shape].format(m=marker), "timeout": 1500})
    assert out.is_error and out.error_code == "TIMEOUT"
    assert "killed together with every process it started" in out.content.splitlines()[0]
    assert await wait_marker_gone(marker) == []


@pytest.mark.parametrize("shape", DETACHING)
async def test_bash_interrupt_kills_detached_children(registry: Registry, marker: str, shape: str) -> None:
    call = asyncio.ensure_future(registry.call("Bash", {"command": DETACHING[shape].format(m=marker)}))
    assert await sleepers(marker, 2) == 2
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await wait_marker_gone(marker) == []


@needs_cgroup
async def test_a_child_that_clears_its_environment_is_still_found(registry: Registry, marker: str) -> None:
    command = f"(env -i setsid sleep {marker} &); (env -i setsid -f sleep {marker}); sleep {marker}"
    out = await registry.call("Bash", {"command": command, "timeout": 1500})
    assert out.is_error and out.error_code == "TIMEOUT"
    assert await wait_marker_gone(marker) == []


async def test_task_stop_kills_detached_children(registry: Registry, marker: str) -> None:
    command = f"setsid sleep {marker} & (setsid sleep {marker} &); sleep {marker}"
    started = await registry.call("Bash", {"command": command, "run_in_background": True})
    assert not started.is_error, started.content
    assert await sleepers(marker, 3) == 3
    stopped = await registry.call("TaskStop", {"task_id": "bash_1"})
    assert not stopped.is_error, stopped.content
    assert await wait_marker_gone(marker) == []


async def test_leftovers_of_a_finished_call_keep_running_until_reset(registry: Registry, marker: str) -> None:
    out = await registry.call("Bash", {"command": f"(setsid sleep {marker} &); echo left"})
    assert out.content.startswith("left\n") and "%goat reset" in out.content
    assert await sleepers(marker, 1) == 1  # documented: `&` leftovers of a normal call keep running
    kill_everything()  # what `%goat reset` and the kernel's end do
    assert await wait_marker_gone(marker) == []


SPAWN_AND_DIE = """
import asyncio, os, signal, sys
from pathlib import Path
from goat_jupyter.processes.spawn import spawn_shell

async def main():
    spawn_shell(sys.argv[1], Path.cwd(), lambda text: None)
    await asyncio.sleep(float(sys.argv[2]))
    os.kill(os.getpid(), signal.SIGKILL)  # no Python cleanup runs: only the watchdog is left

asyncio.run(main())
"""


async def test_the_watchdog_sweeps_after_its_owner_is_sigkilled(marker: str, tmp_path: Path) -> None:
    command = f"setsid sleep {marker} & (setsid sleep {marker} &); sleep {marker}"
    owner = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SPAWN_AND_DIE,
        command,
        "3",
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": REPO},
    )
    assert await sleepers(marker, 3) == 3
    assert await owner.wait() == -signal.SIGKILL
    assert await wait_marker_gone(marker) == []
