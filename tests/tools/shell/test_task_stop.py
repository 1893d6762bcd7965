"""TaskStop / KillShell against real background shells."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry
from tests.process_helpers import wait_all_gone


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()


async def start_and_get_pids(registry: Registry, command: str, count: int) -> tuple[str, list[int]]:
    await registry.call("Bash", {"command": command, "run_in_background": True})
    task = registry.session.tasks.all()[-1]
    for _ in range(200):
        if len(task.output.split()) >= count:
            break
        await asyncio.sleep(0.02)
    return task.id, [int(p) for p in task.output.split()]


async def test_stop_kills_the_task_and_its_children(registry: Registry) -> None:
    task_id, pids = await start_and_get_pids(registry, "echo $$; sleep 300 & echo $!; wait", 2)
    out = await registry.call("TaskStop", {"task_id": task_id})
    assert not out.is_error
    assert task_id in out.content and "Stopped" in out.content
    assert await wait_all_gone(pids)
    status = await registry.call("TaskOutput", {"task_id": task_id, "block": False})
    assert "Status: stopped" in status.content


async def test_stopping_a_finished_task_is_an_error_naming_its_status(registry: Registry) -> None:
    task_id, _ = await start_and_get_pids(registry, "echo 1", 1)
    await registry.session.tasks.wait(task_id, 10)
    out = await registry.call("TaskStop", {"task_id": task_id})
    assert out.is_error and "completed" in out.content


async def test_unknown_id_is_an_error(registry: Registry) -> None:
    out = await registry.call("TaskStop", {"task_id": "nope"})
    assert out.is_error and out.error_code == "INVALID_INPUT"


async def test_kill_shell_alias_takes_shell_id(registry: Registry) -> None:
    task_id, pids = await start_and_get_pids(registry, "echo $$; sleep 300", 1)
    out = await registry.call("KillShell", {"shell_id": task_id})
    assert not out.is_error and "Stopped" in out.content
    assert await wait_all_gone(pids)


async def test_session_wide_stop_all_ends_every_background_task(registry: Registry) -> None:
    first, first_pids = await start_and_get_pids(registry, "echo $$; sleep 300", 1)
    second, second_pids = await start_and_get_pids(registry, "echo $$; sleep 300", 1)
    await registry.session.tasks.stop_all()
    assert await wait_all_gone(first_pids + second_pids)
    for task_id in (first, second):
        assert registry.session.tasks.get(task_id).status == "stopped"
