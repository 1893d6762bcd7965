"""Bash: real bash processes, real process groups, real output pipes."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goat_jupyter.tools import Executor, Registry, ToolCall, default_registry
from goat_jupyter.tools.events import Event, ToolFinished, ToolProgress
from goat_jupyter.tools.shell.bash import last_command_name
from tests.process_helpers import wait_all_gone


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()


async def bash(registry: Registry, command: str, **extra: object):
    return await registry.call("Bash", {"command": command, **extra})


async def test_stdout_and_stderr_are_merged_in_order(registry: Registry) -> None:
    out = await bash(registry, "echo one; echo two >&2; echo three")
    assert not out.is_error
    assert out.content == "one\ntwo\nthree\n"


async def test_stdin_is_dev_null(registry: Registry) -> None:
    out = await bash(registry, 'cat; read line; echo "read exit $?"')
    assert out.content == "read exit 1\n"


async def test_runs_in_its_own_process_group(registry: Registry) -> None:
    out = await bash(registry, "echo $$ $(ps -o pgid= -p $$)")
    pid, pgid = out.content.split()
    assert pid == pgid
    assert int(pgid) != os.getpgid(0)


async def test_empty_output_becomes_the_no_output_line(registry: Registry) -> None:
    out = await bash(registry, "true")
    assert not out.is_error
    assert out.content == "(Tool completed with no output)"


async def test_non_zero_exit_is_an_error_naming_the_code_then_the_output(registry: Registry) -> None:
    out = await bash(registry, "echo partial; echo oops >&2; exit 3")
    assert out.is_error
    assert out.error_code == "EXECUTION_ERROR"
    first, *rest = out.content.splitlines()
    assert first.startswith("Error: ") and "exit code 3" in first
    assert rest == ["partial", "oops"]


async def test_syntax_error_shows_bash_message(registry: Registry) -> None:
    out = await bash(registry, "if then")
    assert out.is_error and "exit code 2" in out.content.splitlines()[0]
    assert "syntax error" in out.content
    assert "pwd -P" not in out.content  # our cwd marker never leaks into output


@pytest.mark.parametrize(
    "command",
    [
        "grep zzz data.txt",
        "cat data.txt | grep zzz",
        "true && rg zzz data.txt",
        "diff data.txt other.txt",
        "test -f missing.txt",
        "[ -f missing.txt ]",
        "find missing_dir",
        "LANG=C /usr/bin/grep -c zzz data.txt 2>/dev/null",
        "diff <(echo a) <(echo b)",
        "diff <(sort data.txt) other.txt > diff.out 2>&1",
        "cat <<EOF | grep zzz\nalpha\nEOF",
        "timeout 5 grep zzz data.txt",
        "bash -c 'grep zzz data.txt'",
    ],
)
async def test_exit_one_of_search_and_test_commands_is_not_an_error(
    registry: Registry, tmp_path: Path, command: str
) -> None:
    (tmp_path / "data.txt").write_text("alpha\nbeta\n")
    (tmp_path / "other.txt").write_text("alpha\n")
    out = await bash(registry, command)
    assert not out.is_error, out.content
    assert "exit code 1" in out.content


@pytest.mark.parametrize(
    "command",
    [
        "grep zzz data.txt; false",
        "grep zzz missing.txt",
        "grep alpha data.txt | false",
        "ls missing.txt",
        "! grep alpha data.txt",
        "grep zzz <(false) && false",
        "if grep zzz data.txt; then :; else false; fi",
    ],
)
async def test_other_failures_stay_errors(registry: Registry, tmp_path: Path, command: str) -> None:
    (tmp_path / "data.txt").write_text("alpha\n")
    out = await bash(registry, command)
    assert out.is_error and out.error_code == "EXECUTION_ERROR"


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("grep x f", "grep"),
        ("cd /tmp && grep -r x . | sort", "sort"),
        ("echo 'a|b' | /usr/bin/rg x", "rg"),
        ("grep 'x|y' file", "grep"),
        ("FOO=1 time grep x f 2>&1 >|out", "grep"),
        ("(cd sub; diff a b)", "diff"),
        ("ls\n# a comment\n", "ls"),
        ("echo a#b; [ -f x ]", "["),
        ("test -d x &", "test"),
        ("echo 'unclosed", None),
    ],
)
def test_last_command_name(command: str, name: str | None) -> None:
    assert last_command_name(command) == name


async def test_long_output_is_stored_whole_and_shown_head_and_tail(registry: Registry) -> None:
    out = await bash(registry, "seq 1 20000")
    full = "".join(f"{i}\n" for i in range(1, 20001))
    assert len(out.content) < 9_000
    assert out.content.startswith("1\n2\n3\n") and "19999\n20000\n" in out.content
    assert Path(out.metadata["full_output"]).read_text() == full, "nothing lost"


async def test_runaway_output_keeps_both_ends_and_counts_the_middle(registry: Registry) -> None:
    out = await bash(registry, "yes abcd | head -c 50000000")
    stored = Path(out.metadata["full_output"]).read_text()
    assert len(out.content) < 9_000 and out.content.startswith("abcd\nabcd\n")
    # 16 M characters are kept (both ends of the buffer); the middle is said to be gone, not silently.
    assert stored.startswith("abcd\n" * 1000) and stored.endswith("abcd\n" * 1000)
    note = re.search(r"\n\n\.\.\. \[([\d,]+) characters \(([\d,]+) lines\) not kept\] \.\.\.\n\n", stored)
    assert note is not None
    dropped = int(note.group(1).replace(",", ""))
    assert len(stored) - len(note.group(0)) + dropped == 50_000_000
    assert int(note.group(2).replace(",", "")) == dropped // 5


async def test_multibyte_output_split_across_reads_decodes_cleanly(registry: Registry) -> None:
    out = await bash(registry, "for i in $(seq 1 9000); do printf 'é€'; done")
    assert "\ufffd" not in out.content
    assert out.content.startswith("é€é€")


async def test_output_streams_to_the_cell_while_running(registry: Registry, tmp_path: Path) -> None:
    seen_before_done: list[bool] = []
    events: list[Event] = []

    def emit(event: Event) -> None:
        events.append(event)
        if isinstance(event, ToolProgress) and event.output and "first" in event.output:
            seen_before_done.append(not (tmp_path / "done").exists())

    executor = Executor(registry, registry.session, emit=emit)
    command = "echo first; sleep 0.3; touch done; echo second"
    result = await executor.run_one(ToolCall("c1", "Bash", {"command": command}))
    assert result.content == "first\nsecond\n"
    assert seen_before_done == [True]
    streamed = "".join(e.output or "" for e in events if isinstance(e, ToolProgress))
    assert streamed == "first\nsecond\n"
    assert isinstance(events[-1], ToolFinished)


async def test_timeout_kills_every_process_of_the_group(registry: Registry) -> None:
    command = "sleep 300 & echo $!; sleep 300 & echo $!; echo $$; wait"
    out = await bash(registry, command, timeout=500)
    assert out.is_error and out.error_code == "TIMEOUT"
    assert "timed out after 0.5 s" in out.content.splitlines()[0]
    pids = [int(p) for p in re.findall(r"^\d+$", out.content, re.M)]
    assert len(pids) == 3  # partial output survives the timeout
    assert await wait_all_gone(pids)


async def test_interrupt_kills_the_group_before_cancelling(registry: Registry, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    command = f"echo $$ > {pid_file}; sleep 300 & echo $! >> {pid_file}; wait"
    call = asyncio.ensure_future(bash(registry, command))
    for _ in range(500):
        if pid_file.exists() and len(pid_file.read_text().split()) == 2:
            break
        await asyncio.sleep(0.02)
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 2
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await wait_all_gone(pids)


async def test_huge_timeout_is_clamped_not_rejected(registry: Registry) -> None:
    out = await bash(registry, "echo ok", timeout=10**9)
    assert out.content == "ok\n"


async def test_cd_persists_inside_the_workspace(registry: Registry, tmp_path: Path) -> None:
    await bash(registry, "mkdir -p sub/deeper && cd sub")
    assert registry.session.cwd == tmp_path / "sub"
    assert (await bash(registry, "pwd")).content == f"{tmp_path / 'sub'}\n"
    await bash(registry, "cd deeper; exit 0")
    assert registry.session.cwd == tmp_path / "sub" / "deeper"


async def test_cd_is_ignored_when_the_command_fails(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    out = await bash(registry, "cd sub && false")
    assert out.is_error
    assert registry.session.cwd == tmp_path


async def test_leaving_the_workspace_resets_the_cwd_and_says_so(registry: Registry, tmp_path: Path) -> None:
    out = await bash(registry, "cd / && echo moved")
    assert not out.is_error
    assert out.content.startswith("moved\n")
    assert "outside the workspace" in out.content and str(tmp_path) in out.content
    assert registry.session.cwd == tmp_path


async def test_workspace_reached_through_a_symlink_keeps_its_logical_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    registry = default_registry(cwd=tmp_path / "link")
    out = await bash(registry, "mkdir a && cd a")
    assert not out.is_error
    assert registry.session.cwd == tmp_path / "link" / "a"


async def test_vanished_cwd_falls_back_to_the_workspace(registry: Registry, tmp_path: Path) -> None:
    await bash(registry, "mkdir gone && cd gone")
    (tmp_path / "gone").rmdir()
    out = await bash(registry, "pwd")
    assert out.content.startswith(f"{tmp_path}\n")
    assert "no longer exists" in out.content
    assert registry.session.cwd == tmp_path


async def test_environment_variables_do_not_persist(registry: Registry) -> None:
    await bash(registry, "export GOAT_TEST_VAR=1")
    out = await bash(registry, 'echo "${GOAT_TEST_VAR:-unset}"')
    assert out.content == "unset\n"


async def test_background_children_are_left_running_and_reported(registry: Registry) -> None:
    out = await bash(registry, "sleep 30 & echo started")
    assert out.content.startswith("started\n")
    match = re.search(r"process group (\d+)", out.content)
    assert match is not None
    pgid = int(match.group(1))
    os.killpg(pgid, 0)  # raises if nothing of the group is alive any more
    os.killpg(pgid, signal.SIGKILL)
    await asyncio.sleep(0.2)  # let the loop see the pipe close before the test's loop ends


async def test_run_in_background_returns_at_once_with_a_task_id(registry: Registry) -> None:
    out = await bash(registry, "sleep 0.3; echo finished", run_in_background=True)
    assert not out.is_error
    assert registry.session.tasks.get("bash_1").status == "running"
    assert "bash_1" in out.content and "TaskOutput" in out.content
    task = await registry.session.tasks.wait("bash_1", 10)
    assert task.status == "completed" and task.output == "finished\n"


async def test_title_prefers_the_description(registry: Registry) -> None:
    out = await bash(registry, "echo hi", description="Say hi")
    assert out.title == "Say hi"
