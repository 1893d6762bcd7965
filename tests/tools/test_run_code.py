"""RunCode: real sandboxed subprocesses (rlimits, network namespace when available)."""

from __future__ import annotations

import asyncio
import re
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from goat_jupyter.tools import Registry, default_registry
from goat_jupyter.tools.run_code import network_isolation

CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("connected")
except OSError as exc:
    print("blocked:", exc)
"""


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server
    server.close()


async def run(registry: Registry, **args: object):
    return await registry.call("RunCode", args)


def section(content: str, name: str) -> str:
    match = re.search(rf"--- {name} ---\n(.*?)(?:\n\n--- |\Z)", content, re.S)
    assert match is not None, content
    return match.group(1)


async def test_python_reports_stdout_stderr_exit_code_and_duration(registry: Registry) -> None:
    code = "import sys\nprint('to out')\nprint('to err', file=sys.stderr)"
    out = await run(registry, language="python", code=code)
    assert not out.is_error, out.content
    assert "Exit: exit code 0" in out.content
    assert re.search(r"^Duration: \d+ ms$", out.content, re.M)
    assert section(out.content, "stdout") == "to out"
    assert section(out.content, "stderr") == "to err"


async def test_runs_in_the_workspace_not_the_session_cwd(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    registry.session.cwd = tmp_path / "sub"
    out = await run(registry, language="python", code="import os; print(os.getcwd())")
    assert section(out.content, "stdout") == str(tmp_path)


async def test_runs_outside_the_kernel_process(registry: Registry) -> None:
    out = await run(registry, language="python", code="import os; print(os.getpid(), os.getppid())")
    pid, _ = section(out.content, "stdout").split()
    assert int(pid) != psutil.Process().pid


async def test_args_and_env_are_passed(registry: Registry) -> None:
    code = "import os, sys; print(sys.argv[1:], os.environ['GOAT_RC_VAR'])"
    out = await run(registry, language="python", code=code, args=["a b", "c"], env={"GOAT_RC_VAR": "yes"})
    assert section(out.content, "stdout") == "['a b', 'c'] yes"
    bash_out = await run(
        registry,
        language="bash",
        code='echo "$1|$2|$GOAT_RC_VAR"',
        args=["x", "y z"],
        env={"GOAT_RC_VAR": "v"},
    )
    assert section(bash_out.content, "stdout") == "x|y z|v"


async def test_non_zero_exit_is_an_error_naming_the_code(registry: Registry) -> None:
    out = await run(registry, language="python", code="print('partial'); raise SystemExit(3)")
    assert out.is_error and out.error_code == "EXECUTION_ERROR"
    assert "exit code 3" in out.content.splitlines()[0]
    assert section(out.content, "stdout") == "partial"


async def test_exception_shows_the_traceback(registry: Registry) -> None:
    out = await run(registry, language="python", code="1/0")
    assert out.is_error and "exit code 1" in out.content.splitlines()[0]
    assert "ZeroDivisionError" in section(out.content, "stderr")


async def test_memory_limit_is_enforced(registry: Registry) -> None:
    small = await run(registry, language="python", code="b = bytearray(100 << 20); print(len(b))")
    assert section(small.content, "stdout") == str(100 << 20)
    big = await run(registry, language="python", code="b = bytearray(3 << 30); print('allocated')")
    assert big.is_error
    assert "MemoryError" in section(big.content, "stderr")
    assert section(big.content, "stdout") == "(empty)"


async def test_cpu_and_memory_limits_are_set_in_the_child(registry: Registry) -> None:
    out = await run(registry, language="bash", code="ulimit -t; ulimit -v", timeout=5)
    assert section(out.content, "stdout").split() == ["6", str(2 << 20)]


async def test_timeout_kills_the_program_and_its_children(registry: Registry) -> None:
    code = (
        "import subprocess, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    out = await run(registry, language="python", code=code, timeout=1)
    assert out.is_error and out.error_code == "TIMEOUT"
    assert "timed out after 1 s" in out.content.splitlines()[0]
    child = int(section(out.content, "stdout"))
    for _ in range(100):
        if not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail(f"child {child} survived the timeout")


async def test_network_is_blocked_when_namespaces_work(registry: Registry, listener: socket.socket) -> None:
    isolation = await network_isolation()
    if not isolation.isolated:
        pytest.skip(f"no network namespace on this machine: {isolation.note}")
    port = str(listener.getsockname()[1])
    probe = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CONNECT, port, stdout=asyncio.subprocess.PIPE
    )
    outside, _ = await probe.communicate()
    assert outside.startswith(b"connected")  # the probe works without the sandbox
    out = await run(registry, language="python", code=CONNECT, args=[port])
    assert not out.is_error, out.content
    assert section(out.content, "stdout").startswith("blocked:")
    assert "Network: isolated" in out.content


async def test_only_loopback_exists_inside_the_sandbox(registry: Registry) -> None:
    isolation = await network_isolation()
    if not isolation.isolated:
        pytest.skip(f"no network namespace on this machine: {isolation.note}")
    code = "import socket; print(sorted(name for _, name in socket.if_nameindex()))"
    out = await run(registry, language="python", code=code)
    assert section(out.content, "stdout") == "['lo']"
