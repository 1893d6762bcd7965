"""Shell output over the budget is stored whole (tools/runner.py) and read back by Read and Grep:
real bash processes, real files, the real executor."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.processes.spawn import OutputBuffer
from goat_jupyter.tools import Executor, Registry, ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.events import Event, ToolProgress

TWO_MB = "python3 -c \"import sys; sys.stdout.write(''.join(f'row {i:07d} ' + 'v' * 40 + '\\n' for i in range(40000)))\""


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()


async def bash(registry: Registry, command: str) -> ToolOutput:
    return await registry.call("Bash", {"command": command})


def stored(out: ToolOutput) -> Path:
    return Path(out.metadata["full_output"])


async def test_two_megabytes_are_stored_and_any_range_reads_back(registry: Registry) -> None:
    out = await bash(registry, TWO_MB)
    path = stored(out)
    assert path.stat().st_size == 40_000 * 53 and len(out.content) < 9_000
    assert out.content.startswith("row 0000000 ") and "row 0039999 " in out.content
    assert f"stored whole at {path}" in out.content
    for first in (1, 17_321, 39_990):
        page = await registry.call("Read", {"file_path": str(path), "offset": first, "limit": 3})
        assert not page.is_error, page.content
        assert all(f"row {n - 1:07d} " in page.content for n in range(first, first + 3))
        assert f"row {first + 2:07d} " not in page.content


async def test_grep_finds_a_line_near_the_end_of_the_stored_output(registry: Registry) -> None:
    path = stored(await bash(registry, TWO_MB))
    args = {"pattern": "row 0039998 ", "path": str(path), "output_mode": "content", "-n": True}
    found = await registry.call("Grep", args)
    assert not found.is_error and "39999:" in found.content and "row 0039998 " in found.content


async def test_a_failed_command_with_huge_output_is_stored_too(registry: Registry) -> None:
    out = await bash(registry, f"{TWO_MB}; exit 3")
    assert out.is_error and out.content.startswith("Error: Command failed with exit code 3.")
    assert stored(out).read_text().endswith("row 0039999 " + "v" * 40)


async def test_invalid_utf8_is_stored_as_readable_text(registry: Registry) -> None:
    out = await bash(registry, "head -c 200000 /dev/urandom; printf '\\nEND-MARK\\n'")
    text = stored(out).read_bytes().decode("utf-8")  # strict: the stored file is valid UTF-8
    assert "\ufffd" in text and text.endswith("END-MARK\n")
    assert "END-MARK" in out.content


async def test_encoded_surrogates_and_control_characters(registry: Registry) -> None:
    command = (
        "for i in $(seq 1 3000); do printf 'a\\xed\\xa0\\x80b\\x1b[31m\\x07\\x01c\\r\\n'; done; echo TAIL"
    )
    out = await bash(registry, command)
    text = stored(out).read_bytes().decode("utf-8")
    assert "\x1b[31m\x07\x01c" in text and text.rstrip().endswith("TAIL")
    assert all(not 0xD800 <= ord(ch) <= 0xDFFF for ch in out.content + text)


async def test_a_very_long_single_line_is_split_so_read_reaches_all_of_it(registry: Registry) -> None:
    out = await bash(registry, "python3 -c \"print('a' * 99999 + 'Z')\"")
    path = stored(out)
    lines = path.read_text().rstrip("\n").split("\n")
    assert len(lines) == 50 and all(len(line) == 2_000 for line in lines)
    last = await registry.call("Read", {"file_path": str(path), "offset": 50, "limit": 1})
    assert "aZ" in last.content


async def test_the_same_output_twice_is_one_file(registry: Registry) -> None:
    first, second = await bash(registry, "seq 1 50000"), await bash(registry, "seq 1 50000")
    assert stored(first) == stored(second)
    assert [p.name for p in registry.session.large_outputs_dir.iterdir()] == [stored(first).name]


async def test_an_unwritable_session_folder_cuts_as_before_and_says_so(registry: Registry) -> None:
    folder = registry.session.large_outputs_dir
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the folder should be")  # even root cannot create files in it
    out = await bash(registry, "seq 1 50000")
    assert "full_output" not in out.metadata and len(out.content) < 9_000
    assert out.content.startswith("1\n2\n") and "50000" in out.content
    assert "characters cut: it could not be stored" in out.content


async def test_an_interrupted_command_keeps_its_partial_output_stored(registry: Registry) -> None:
    seen: list[Event] = []
    executor = Executor(registry, registry.session, emit=seen.append)
    command = "seq 1 300000; sleep 300"
    call = asyncio.ensure_future(executor.run_one(ToolCall("c1", "Bash", {"command": command})))
    for _ in range(1000):
        shown = "".join(e.output or "" for e in seen if isinstance(e, ToolProgress))
        if shown.endswith("300000\n"):
            break
        await asyncio.sleep(0.02)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    out = executor.settled["c1"]
    assert out.is_error and out.content.startswith("Error: interrupted by the user")
    assert stored(out).read_text().endswith("".join(f"{i}\n" for i in range(1, 300001)))
    assert len(out.content) < 9_000


async def test_task_output_of_a_background_task_with_huge_output(registry: Registry) -> None:
    started = await registry.call("Bash", {"command": TWO_MB, "run_in_background": True})
    assert not started.is_error
    task_id = registry.session.tasks.all()[-1].id
    out = await registry.call("TaskOutput", {"task_id": task_id})
    assert "Status: completed" in out.content and len(out.content) < 9_000
    page = await registry.call("Read", {"file_path": str(stored(out)), "offset": 40_005, "limit": 1})
    assert "row 0039999 " in page.content  # five header lines come first


@given(st.lists(st.text(max_size=40), max_size=30), st.integers(min_value=1, max_value=60))
def test_the_buffer_loses_nothing_it_does_not_count(chunks: list[str], keep: int) -> None:
    buffer = OutputBuffer(keep=keep)
    for chunk in chunks:
        buffer.append(chunk)
    whole = "".join(chunks)
    if not buffer.dropped_chars:
        assert buffer.described() == whole
        return
    assert buffer.head == whole[:keep] and whole.endswith(buffer.tail)
    assert len(buffer.head) + buffer.dropped_chars + len(buffer.tail) == len(whole)
    assert f"[{buffer.dropped_chars:,} characters" in buffer.described()
