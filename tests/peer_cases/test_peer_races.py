"""Adversarial races around the per-file lock: other spellings of a path, Move and Delete racing an Edit,
NotebookEdit from two subagents. Derived from issue 16's lost-update case and opencode's per-file write
lock (packages/opencode/src/tool/edit.ts, `FileTime.withLock`); our own code."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.peer_cases.helpers import Sessions, error_code


async def test_a_symlink_and_the_real_path_share_one_lock(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    sessions = Sessions(tmp_path)
    parent = sessions.new()
    children = [sessions.new(parent.file_reads) for _ in range(2)]
    for round_no in range(1, 8):
        real.write_text("left = 0\nright = 0\n")
        for path in (real, link):
            await sessions.call(parent, "Read", {"file_path": str(path)})
        results = await asyncio.gather(
            sessions.call(
                children[0],
                "Edit",
                {"file_path": str(real), "old_string": "left = 0", "new_string": "left = 1"},
            ),
            sessions.call(
                children[1],
                "Edit",
                {"file_path": str(link), "old_string": "right = 0", "new_string": "right = 1"},
            ),
        )
        final = real.read_text()
        for result, change in zip(results, ("left = 1", "right = 1"), strict=True):
            assert error_code(result) == "CONFLICT" if result.is_error else change in final, (round_no, final)
        assert link.is_symlink()


async def test_move_racing_an_edit_never_loses_or_duplicates_the_file(tmp_path: Path) -> None:
    sessions = Sessions(tmp_path)
    session = sessions.new()
    mover = sessions.new()
    for round_no in range(8):
        source, moved = tmp_path / f"a{round_no}.py", tmp_path / f"b{round_no}.py"
        source.write_text("x = 1\n")
        await sessions.call(session, "Read", {"file_path": str(source)})
        edited, move = await asyncio.gather(
            sessions.call(
                session, "Edit", {"file_path": str(source), "old_string": "x = 1", "new_string": "x = 2"}
            ),
            sessions.call(mover, "Move", {"from": str(source), "to": str(moved)}),
        )
        assert not move.is_error
        assert not source.exists()  # an Edit finishing after the Move never re-creates the old path
        assert moved.read_text() == ("x = 1\n" if edited.is_error else "x = 2\n")


async def test_delete_racing_an_edit_never_resurrects_the_file(tmp_path: Path) -> None:
    sessions = Sessions(tmp_path)
    session = sessions.new()
    deleter = sessions.new()
    for round_no in range(8):
        target = tmp_path / f"gone{round_no}.py"
        target.write_text("x = 1\n")
        await sessions.call(session, "Read", {"file_path": str(target)})
        _, deleted = await asyncio.gather(
            sessions.call(
                session, "Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2"}
            ),
            sessions.call(deleter, "Delete", {"path": str(target)}),
        )
        assert not deleted.is_error and not target.exists()


def notebook(cells: int) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "id": f"c{i}",
                    "metadata": {},
                    "source": f"x{i} = {i}",
                    "outputs": [],
                    "execution_count": None,
                }
                for i in range(cells)
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


async def test_notebook_edits_from_two_subagents_are_both_kept(tmp_path: Path) -> None:
    target = tmp_path / "nb.ipynb"
    target.write_text(notebook(4))
    sessions = Sessions(tmp_path)
    parent = sessions.new()
    children = [sessions.new(parent.file_reads) for _ in range(4)]
    await sessions.call(parent, "Read", {"file_path": str(target)})
    results = await asyncio.gather(
        *(
            sessions.call(
                child,
                "NotebookEdit",
                {"notebook_path": str(target), "cell_id": f"c{i}", "new_source": f"y{i} = {i}"},
            )
            for i, child in enumerate(children)
        )
    )
    assert [r.is_error for r in results] == [False] * 4, [r.content for r in results]
    sources = ["".join(cell["source"]) for cell in json.loads(target.read_text())["cells"]]
    assert sources == [f"y{i} = {i}" for i in range(4)]


async def test_writing_to_a_fifo_does_not_hang_in_the_lock(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sessions = Sessions(tmp_path)
    session = sessions.new()
    out = await asyncio.wait_for(
        sessions.call(session, "Write", {"file_path": str(fifo), "content": "x"}), 10
    )
    assert out.is_error  # never read, so refused; the point is that it returns at once
