"""No lost updates: concurrent changes from sessions of one kernel and from two processes.

Sources: issue 16 (two Edits at once both reported success, one change vanished); opencode's edit tool
serialises writes per file (`FileTime.withLock` around read-check-write in packages/opencode/src/tool/edit.ts,
its test "edit.test.ts > concurrent edits"); Claude Code's docs: "Edit fails if the file was modified
since it was last read". Written in our own words and code.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from goat_jupyter.errors import ConflictError
from goat_jupyter.file_lock import locked, locked_async
from goat_jupyter.fileio import ABSENT, DiskVersion, atomic_write_bytes
from tests.peer_cases.helpers import Sessions, error_code

ROOT = Path(__file__).resolve().parents[2]


def numbered(count: int) -> str:
    return "".join(f"line{i} = 0\n" for i in range(count))


# opencode edit.test.ts "concurrent edits to the same file are serialised": every edit lands.
async def test_parallel_subagents_editing_one_file_keep_every_change(tmp_path: Path) -> None:
    target = tmp_path / "shared.py"
    target.write_text(numbered(8))
    sessions = Sessions(tmp_path)
    parent = sessions.new()
    children = [sessions.new(parent.file_reads) for _ in range(8)]  # subagents share the read records
    await sessions.call(parent, "Read", {"file_path": str(target)})
    for round_no in range(1, 6):
        edits = [
            sessions.call(
                child,
                "Edit",
                {
                    "file_path": str(target),
                    "old_string": f"line{i} = {round_no - 1}\n",
                    "new_string": f"line{i} = {round_no}\n",
                },
            )
            for i, child in enumerate(children)
        ]
        results = await asyncio.gather(*edits)
        assert [r.is_error for r in results] == [False] * 8, [r.content for r in results if r.is_error]
        assert target.read_text() == "".join(f"line{i} = {round_no}\n" for i in range(8))


# Claude Code docs (Edit: the file must not have changed since it was read) applied to two
# independent conversations in one kernel: the later one gets a conflict, never a silent overwrite.
async def test_independent_sessions_keep_both_changes_or_report_the_conflict(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    for attempt in range(10):
        target.write_text("alpha = 1\nbeta = 1\n")
        sessions = Sessions(tmp_path)
        one, two = sessions.new(), sessions.new()
        for session in (one, two):
            await sessions.call(session, "Read", {"file_path": str(target)})
        results = await asyncio.gather(
            sessions.call(
                one, "Edit", {"file_path": str(target), "old_string": "alpha = 1", "new_string": "alpha = 2"}
            ),
            sessions.call(
                two, "Edit", {"file_path": str(target), "old_string": "beta = 1", "new_string": "beta = 2"}
            ),
        )
        final = target.read_text()
        for result, change in zip(results, ("alpha = 2", "beta = 2"), strict=True):
            if result.is_error:
                assert error_code(result) == "CONFLICT", (attempt, result.content)
            else:
                assert change in final, (attempt, final)  # a reported success is never lost
        assert sum(not r.is_error for r in results) >= 1


# gemini-cli write-file.test.ts "detects the file changed on disk since it was read": a concurrent
# Write of the whole file and an Edit from a subagent must not interleave halfway.
async def test_write_and_edit_racing_from_shared_sessions_never_mix(tmp_path: Path) -> None:
    target = tmp_path / "cfg.ini"
    target.write_text("[a]\nx = 1\n")
    sessions = Sessions(tmp_path)
    parent = sessions.new()
    child = sessions.new(parent.file_reads)
    await sessions.call(parent, "Read", {"file_path": str(target)})
    write, edit = await asyncio.gather(
        sessions.call(parent, "Write", {"file_path": str(target), "content": "[b]\ny = 2\n"}),
        sessions.call(
            child, "Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 5"}
        ),
    )
    assert not write.is_error
    final = target.read_text()
    if edit.is_error:  # the Write went first: x = 1 is gone, so the Edit finds nothing
        assert final == "[b]\ny = 2\n"
    else:  # the Edit went first, then the Write (whose session saw the Edit's record) replaced it all
        assert final == "[b]\ny = 2\n"


WORKER = textwrap.dedent(
    """
    import asyncio, re, sys
    from goat_jupyter.tools import default_registry

    async def main(path, name, wanted):
        registry = default_registry(cwd=sys.argv[4])
        done = conflicts = 0
        while done < wanted:
            await registry.call("Read", {"file_path": path})
            with open(path) as handle:
                value = int(re.search(name + r" = (\\d+)", handle.read()).group(1))
            out = await registry.call(
                "Edit", {"file_path": path, "old_string": f"{name} = {value}\\n", "new_string": f"{name} = {value + 1}\\n"}
            )
            if out.is_error:
                assert out.metadata["error_code"] in ("CONFLICT", "INVALID_INPUT"), out.content
                conflicts += 1
            else:
                done += 1
        print(done, conflicts)

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


# Two kernels on one workspace (issue 16: "two kernels"): two real processes each make 25 counted
# Edits; any lost update would leave a counter below the number of successes reported.
def test_two_processes_editing_one_file_lose_no_update(tmp_path: Path) -> None:
    target = tmp_path / "counters.txt"
    target.write_text("first = 0\nsecond = 0\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(target), name, "25", str(tmp_path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outputs = [worker.communicate(timeout=240) for worker in workers]
    assert [w.returncode for w in workers] == [0, 0], [err for _, err in outputs]
    assert [int(out.split()[0]) for out, _ in outputs] == [25, 25]
    assert target.read_text() == "first = 25\nsecond = 25\n"
    assert not [p for p in tmp_path.iterdir() if ".goat-" in p.name]  # no temp file left behind


# Compare-before-rename: a writer that ignores our locks (an editor, a script) changes the file while
# goat prepares its write; goat reports the conflict and the other change stays.
def test_a_change_made_during_the_write_is_kept_and_reported(tmp_path: Path) -> None:
    target = tmp_path / "data.txt"
    target.write_text("mine\n")
    version = DiskVersion.of(target.stat())
    with target.open("a") as handle:  # in place: same inode, new size and ctime
        handle.write("theirs\n")
    with pytest.raises(ConflictError, match="changed by another process"):
        atomic_write_bytes(target, b"goat\n", expected=version)
    assert target.read_text() == "mine\ntheirs\n"
    assert [p.name for p in tmp_path.iterdir()] == ["data.txt"]


def test_creating_a_file_someone_else_just_created_is_a_conflict(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    target.write_text("created elsewhere\n")
    with pytest.raises(ConflictError):
        atomic_write_bytes(target, b"goat\n", expected=ABSENT)
    assert target.read_text() == "created elsewhere\n"
    assert [p.name for p in tmp_path.iterdir()] == ["new.txt"]


HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


# Across processes the advisory lock makes goat wait; a holder that never lets go gives a clear
# CONFLICT after the timeout instead of a hang.
def test_a_lock_held_by_another_process_is_waited_for_then_reported(tmp_path: Path) -> None:
    target = tmp_path / "busy.txt"
    target.write_text("x\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(target), "30"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ConflictError, match="another session or process"), locked(target, timeout=0.3):
            pass
    finally:
        holder.kill()
        holder.wait()
    with locked(target, timeout=5):  # released with the process
        pass


async def test_in_kernel_lock_waits_without_blocking_the_event_loop(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("")
    order: list[str] = []
    release = threading.Event()

    def hold() -> None:
        with locked(target):
            order.append("thread has it")
            release.wait(5)
        order.append("thread released")

    thread = threading.Thread(target=hold)
    thread.start()
    while not order:
        await asyncio.sleep(0.01)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while not release.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async def waiter() -> None:
        async with locked_async(target):
            order.append("coroutine has it")

    async def let_go() -> None:
        await asyncio.sleep(0.2)
        release.set()

    await asyncio.gather(ticker(), waiter(), let_go())
    thread.join()
    assert order == ["thread has it", "thread released", "coroutine has it"]
    assert ticks > 3  # the loop kept running while the coroutine waited


# issue 10 point 7: a change that keeps size and mtime is still caught by the content hash.
async def test_same_size_same_mtime_change_is_caught_by_the_hash(tmp_path: Path) -> None:
    target = tmp_path / "h.txt"
    target.write_text("value = 1\n")
    sessions = Sessions(tmp_path)
    session = sessions.new()
    await sessions.call(session, "Read", {"file_path": str(target)})
    before = target.stat()
    target.write_text("value = 2\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_mtime_ns == before.st_mtime_ns and target.stat().st_size == before.st_size
    out = await sessions.call(
        session, "Edit", {"file_path": str(target), "old_string": "value", "new_string": "v"}
    )
    assert error_code(out) == "CONFLICT" and target.read_text() == "value = 2\n"


# issue 10 point 7: temp files of an interrupted atomic write are removed (the writer was killed).
def test_temp_files_of_a_killed_writer_are_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "doc.txt"
    target.write_text("v1\n")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stale = tmp_path / f".doc.txt.goat-{dead.pid}-0123abcd.tmp"
        in_flight = tmp_path / f".doc.txt.goat-{alive.pid}-4567abcd.tmp"
        other = tmp_path / f".other.txt.goat-{dead.pid}-89abcdef.tmp"
        for leftover in (stale, in_flight, other):
            leftover.write_text("partial")
        old = time.time() - 2 * 24 * 3600
        ancient = tmp_path / f".doc.txt.goat-{os.getpid()}-ffffffff.tmp"
        ancient.write_text("partial")
        os.utime(ancient, (old, old))
        atomic_write_bytes(target, b"v2\n")
        assert not stale.exists() and not ancient.exists()
        assert in_flight.exists() and other.exists()  # a live writer's temp, and another file's
        assert target.read_text() == "v2\n"
    finally:
        alive.kill()
        alive.wait()


def test_a_write_interrupted_inside_the_process_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("old\n")

    class Boom:  # a buffer whose reading fails halfway, like an interrupt during the write
        def __len__(self) -> int:
            raise KeyboardInterrupt

    with pytest.raises((KeyboardInterrupt, TypeError)):
        atomic_write_bytes(target, Boom())  # type: ignore[arg-type]
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"] and target.read_text() == "old\n"
