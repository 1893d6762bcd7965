"""TaskOutput / BashOutput against real background shells."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, default_registry


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()


async def start(registry: Registry, command: str) -> str:
    out = await registry.call("Bash", {"command": command, "run_in_background": True})
    assert not out.is_error, out.content
    return registry.session.tasks.all()[-1].id


async def test_block_waits_for_the_end(registry: Registry) -> None:
    task_id = await start(registry, "sleep 0.2; echo done")
    out = await registry.call("TaskOutput", {"task_id": task_id})
    assert not out.is_error
    assert "Status: completed" in out.content and "Exit code: 0" in out.content
    assert out.content.endswith("done\n")


async def test_non_blocking_shows_output_so_far(registry: Registry) -> None:
    task_id = await start(registry, "echo started; sleep 300")
    task = registry.session.tasks.get(task_id)
    for _ in range(200):
        if task.output:
            break
        await asyncio.sleep(0.02)
    out = await registry.call("TaskOutput", {"task_id": task_id, "block": False})
    assert "Status: running" in out.content and "Exit code: -" in out.content
    assert out.content.endswith("started\n")


async def test_block_gives_up_after_timeout(registry: Registry) -> None:
    task_id = await start(registry, "sleep 300")
    out = await registry.call("TaskOutput", {"task_id": task_id, "timeout": 100})
    assert "Status: running (still running after waiting 0.1 s)" in out.content
    assert "(no output yet)" in out.content


async def test_failed_task_reports_status_and_exit_code(registry: Registry) -> None:
    task_id = await start(registry, "echo bad; exit 4")
    out = await registry.call("TaskOutput", {"task_id": task_id})
    assert "Status: failed" in out.content and "Exit code: 4" in out.content
    assert registry.session.tasks.drain_notices() == []  # the model has just seen the end


async def test_long_output_is_stored_whole_like_bash(registry: Registry) -> None:
    task_id = await start(registry, "seq 1 100000")
    out = await registry.call("TaskOutput", {"task_id": task_id})
    assert len(out.content) < 9_000 and "99999\n100000\n" in out.content
    stored = Path(out.metadata["full_output"]).read_text()
    assert stored.endswith("".join(f"{i}\n" for i in range(1, 100001))), "nothing lost"


async def test_unknown_id_is_an_error(registry: Registry) -> None:
    out = await registry.call("TaskOutput", {"task_id": "bash_42"})
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert "bash_42" in out.content


async def test_bash_output_alias_takes_bash_id(registry: Registry) -> None:
    task_id = await start(registry, "echo via alias")
    out = await registry.call("BashOutput", {"bash_id": task_id})
    assert "Status: completed" in out.content and out.content.endswith("via alias\n")
    offered = [t["function"]["name"] for t in registry.llm_tools()]
    assert "TaskOutput" in offered and "BashOutput" not in offered
