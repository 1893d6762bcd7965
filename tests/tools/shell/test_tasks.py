"""TaskManager and its process machinery: real background shells and coroutines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest

from goat_jupyter.processes.spawn import OutputBuffer, describe_exit
from goat_jupyter.processes.tasks import BackgroundTask, TaskManager


@pytest.fixture
async def manager() -> AsyncIterator[TaskManager]:
    manager = TaskManager()
    yield manager
    await manager.stop_all()


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def wait_for_output(task: BackgroundTask, lines: int) -> list[str]:
    for _ in range(200):
        if len(task.output.split()) >= lines:
            break
        await asyncio.sleep(0.02)
    return task.output.split()


async def wait_all_dead(pids: list[int]) -> bool:
    for _ in range(100):
        if not any(alive(pid) for pid in pids):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_shell_task_completes_with_its_output(manager: TaskManager, tmp_path: Path) -> None:
    task = await manager.start_shell("echo out; echo err >&2; pwd", tmp_path)
    assert task.id == "bash_1" and task.status == "running"
    await manager.wait(task.id, 10)
    assert task.status == "completed" and task.exit_code == 0
    assert task.output == f"out\nerr\n{tmp_path}\n"


async def test_non_zero_exit_marks_the_task_failed(manager: TaskManager, tmp_path: Path) -> None:
    task = await manager.start_shell("exit 4", tmp_path)
    await manager.wait(task.id, 10)
    assert task.status == "failed" and task.exit_code == 4


async def test_task_runs_until_its_background_children_release_the_output(
    manager: TaskManager, tmp_path: Path
) -> None:
    task = await manager.start_shell("(sleep 0.3; echo late) & echo early", tmp_path)
    await manager.wait(task.id, 10)
    assert task.output == "early\nlate\n"


async def test_notices_name_id_status_and_exit_code_once(manager: TaskManager, tmp_path: Path) -> None:
    first = await manager.start_shell("exit 2", tmp_path, description="failing job")
    second = await manager.start_shell("true", tmp_path)
    await manager.wait(first.id, 10)
    await manager.wait(second.id, 10)
    notices = manager.drain_notices()
    assert len(notices) == 2
    failing = next(n for n in notices if first.id in n)
    assert "failing job" in failing and "failed" in failing and "exit code 2" in failing
    assert manager.drain_notices() == []


async def test_mark_reported_suppresses_the_notice(manager: TaskManager, tmp_path: Path) -> None:
    task = await manager.start_shell("true", tmp_path)
    await manager.wait(task.id, 10)
    manager.mark_reported(task.id)
    assert manager.drain_notices() == []


async def test_stop_kills_the_whole_process_group(manager: TaskManager, tmp_path: Path) -> None:
    task = await manager.start_shell("echo $$; sleep 300 & echo $!; wait", tmp_path)
    pids = [int(p) for p in await wait_for_output(task, 2)]
    stopped = await manager.stop(task.id)
    assert stopped.status == "stopped"
    assert await wait_all_dead(pids)
    assert any("stopped" in n for n in manager.drain_notices())


async def test_stopping_a_finished_task_names_its_status(manager: TaskManager, tmp_path: Path) -> None:
    task = await manager.start_shell("true", tmp_path)
    await manager.wait(task.id, 10)
    with pytest.raises(Exception, match="completed"):
        await manager.stop(task.id)


async def test_unknown_id_lists_the_known_ones(manager: TaskManager, tmp_path: Path) -> None:
    await manager.start_shell("true", tmp_path)
    with pytest.raises(Exception, match="bash_1"):
        manager.get("bash_99")


async def test_stop_all_stops_shells_and_coroutines(manager: TaskManager, tmp_path: Path) -> None:
    shells = [await manager.start_shell("echo $$; sleep 300", tmp_path) for _ in range(3)]

    async def forever(task: BackgroundTask) -> str:
        await asyncio.sleep(300)
        return "never"

    agent = manager.start_coroutine("agent", "sleepy subagent", forever)
    pids = [int((await wait_for_output(shell, 1))[0]) for shell in shells]
    await manager.stop_all()
    assert [t.status for t in manager.all()] == ["stopped"] * 4
    assert agent.status == "stopped"
    assert await wait_all_dead(pids)


async def test_kill_all_now_is_synchronous(manager: TaskManager, tmp_path: Path) -> None:
    task = await manager.start_shell("echo $$; sleep 300", tmp_path)
    pid = int((await wait_for_output(task, 1))[0])
    manager.kill_all_now()
    assert await wait_all_dead([pid])
    await manager.wait(task.id, 10)
    assert task.status != "running"


async def test_coroutine_result_and_failure(manager: TaskManager) -> None:
    async def succeed(task: BackgroundTask) -> str:
        return f"answer from {task.id}"

    async def fail(task: BackgroundTask) -> str:
        raise RuntimeError("subagent broke")

    good = manager.start_coroutine("agent", "good", succeed)
    bad = manager.start_coroutine("agent", "bad", fail)
    await manager.wait(good.id, 10)
    await manager.wait(bad.id, 10)
    assert (good.status, good.output) == ("completed", "answer from agent_1")
    assert bad.status == "failed" and "RuntimeError: subagent broke" in bad.output


def test_output_buffer_keeps_both_ends_and_counts_the_middle() -> None:
    buffer = OutputBuffer(keep=10)
    for index in range(100):
        buffer.append(f"{index:02d}\n")
    assert buffer.head == "00\n01\n02\n0"
    assert buffer.tail.endswith("98\n99\n") and len(buffer.tail) >= 10
    assert buffer.total_chars == 300 and buffer.total_newlines == 100
    assert buffer.dropped_chars == 300 - len(buffer.head) - len(buffer.tail)


def test_output_buffer_is_exact_below_its_limit() -> None:
    buffer = OutputBuffer(keep=100)
    buffer.append("abc")
    buffer.append("def")
    assert buffer.text() == "abcdef" and buffer.dropped_chars == 0


def test_describe_exit_names_signals() -> None:
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-9) == "killed by SIGKILL (exit code -9)"
