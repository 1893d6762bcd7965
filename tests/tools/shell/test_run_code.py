"""RunCode: real sandboxed subprocesses (rlimits, network namespace when available)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from goat_jupyter.processes.owner import cgroup_root
from goat_jupyter.processes.sandbox import BWRAP_ENV, isolation
from goat_jupyter.tools import Registry, default_registry
from tests.process_helpers import wait_marker_gone, with_marker

CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("connected")
except OSError as exc:
    print("blocked:", exc)
"""


PASSWD = """
try:
    open("/etc/passwd").read()
    print("passwd: read")
except OSError as exc:
    print("passwd:", type(exc).__name__)
"""

_SANDBOX = isolation()
pytestmark = pytest.mark.skipif(not _SANDBOX.isolated, reason=f"no sandbox here: {_SANDBOX.reason}")


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


async def test_cpu_memory_and_file_size_limits_are_set_in_the_child(registry: Registry) -> None:
    out = await run(registry, language="bash", code="ulimit -t; ulimit -v; ulimit -f", timeout=5)
    assert section(out.content, "stdout").split() == ["6", str(2 << 20), str(1 << 20)]


async def test_file_size_limit_stops_a_huge_write(registry: Registry, tmp_path: Path) -> None:
    code = "with open('big', 'wb') as f:\n    f.write(b'x' * (1 << 30))\n    f.write(b'x' * (1 << 20))"
    out = await run(registry, language="python", code=code)
    assert out.is_error
    assert (tmp_path / "big").stat().st_size <= 1 << 30


async def test_timeout_kills_the_program_and_its_setsid_children(registry: Registry) -> None:
    marker = f"300.{uuid.uuid4().int % 10**9}"
    code = (
        "import subprocess, time\n"
        f"subprocess.Popen(['setsid', 'sleep', '{marker}'])\n"
        f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    out = await run(registry, language="python", code=code, timeout=1)
    assert out.is_error and out.error_code == "TIMEOUT"
    assert "timed out after 1 s" in out.content.splitlines()[0]
    assert section(out.content, "stdout") == "started"
    assert await wait_marker_gone(marker) == []


async def test_a_detached_child_does_not_outlive_a_normal_exit(registry: Registry) -> None:
    marker = f"300.{uuid.uuid4().int % 10**9}"
    out = await run(registry, language="bash", code=f"(setsid sleep {marker} &) ; echo done")
    assert section(out.content, "stdout") == "done"
    assert await wait_marker_gone(marker) == []


async def test_interrupt_kills_every_process_of_the_program(registry: Registry) -> None:
    marker = f"300.{uuid.uuid4().int % 10**9}"
    call = asyncio.ensure_future(
        run(registry, language="bash", code=f"setsid sleep {marker} & sleep {marker}")
    )
    for _ in range(200):
        if sum(proc.name() == "sleep" for proc in with_marker(marker)) >= 2:
            break
        await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await wait_marker_gone(marker) == []


async def test_network_is_blocked(registry: Registry, listener: socket.socket) -> None:
    port = str(listener.getsockname()[1])
    probe = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CONNECT, port, stdout=asyncio.subprocess.PIPE
    )
    outside, _ = await probe.communicate()
    assert outside.startswith(b"connected")  # the probe works without the sandbox
    out = await run(registry, language="python", code=CONNECT, args=[port])
    assert not out.is_error, out.content
    assert section(out.content, "stdout").startswith("blocked:")
    assert "Network: none" in out.content
    assert "Isolation: bubblewrap sandbox" in out.content


async def test_only_loopback_exists_inside_the_sandbox(registry: Registry) -> None:
    code = "import socket; print(sorted(name for _, name in socket.if_nameindex()))"
    out = await run(registry, language="python", code=code)
    assert section(out.content, "stdout") == "['lo']"


async def test_network_true_lifts_only_the_network(registry: Registry, listener: socket.socket) -> None:
    port = str(listener.getsockname()[1])
    out = await run(registry, language="python", code=CONNECT + PASSWD, args=[port], network=True)
    assert section(out.content, "stdout").splitlines() == ["connected", "passwd: FileNotFoundError"]
    assert "Network: allowed (network: true)" in out.content


@pytest.mark.parametrize("language", ["python", "bash"])
async def test_etc_passwd_is_not_visible(registry: Registry, language: str) -> None:
    code = PASSWD if language == "python" else "cat /etc/passwd; ls /etc"
    out = await run(registry, language=language, code=code)
    assert "root:" not in out.content
    if language == "python":
        assert section(out.content, "stdout") == "passwd: FileNotFoundError"


async def test_home_and_other_folders_are_not_visible(registry: Registry) -> None:
    secret = Path.home() / f".goat-sandbox-secret-{uuid.uuid4().hex}"
    secret.write_text("top secret")
    try:
        code = (
            "import os, sys\n"
            "for path in sys.argv[1:]:\n"
            "    try:\n"
            "        print(path, open(path).read())\n"
            "    except OSError as exc:\n"
            "        print(path, type(exc).__name__)\n"
            "print(sorted(os.listdir(os.path.expanduser('~'))))\n"
        )
        others = [str(secret), "/root/.bashrc", "/var/log/dpkg.log", "/home"]
        out = await run(registry, language="python", code=code, args=others)
    finally:
        secret.unlink()
    assert "top secret" not in out.content
    lines = section(out.content, "stdout").splitlines()
    assert all(line.endswith("Error") for line in lines[:-1]), lines
    assert lines[-1] == "[]"  # the sandbox's HOME is private and empty


async def test_writing_outside_the_workspace_fails(registry: Registry, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"outside-{uuid.uuid4().hex}"
    targets = [
        str(outside),
        f"/root/{outside.name}",
        f"/usr/{outside.name}",
        f"/{outside.name}",
        f"/etc/{outside.name}",
    ]
    code = 'for target in "$@"; do echo x > "$target" && echo "wrote $target"; done; echo in > inside.txt'
    out = await run(registry, language="bash", code=code, args=targets)
    wrote = [line.split()[1] for line in section(out.content, "stdout").splitlines()]
    assert wrote == [str(outside)]  # /tmp inside is a private, throw-away tmpfs ...
    assert not any(os.path.exists(target) for target in targets)  # ... so no host file changed
    assert (tmp_path / "inside.txt").read_text() == "in\n"  # the workspace itself is writable


async def test_provider_keys_in_the_kernel_environment_are_absent(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-goat-test-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-goat-test-secret")
    code = "import os; print(sorted(os.environ)); print(open('/proc/self/environ').read())"
    out = await run(registry, language="python", code=code, env={"MY_VAR": "1"})
    assert "goat-test-secret" not in out.content
    names = eval(section(out.content, "stdout").splitlines()[0])  # a printed list of names
    assert set(names) <= {
        "PATH",
        "HOME",
        "LANG",
        "PYTHONUNBUFFERED",
        "MY_VAR",
        "PWD",
        "SHLVL",
        "_",
        "LC_CTYPE",
    }


async def test_a_host_unix_socket_is_unreachable(registry: Registry, tmp_path: Path) -> None:
    code = (
        "import os, socket, sys\n"
        "for path in sys.argv[1:]:\n"
        "    print('visible' if os.path.exists(path) else 'invisible')\n"
        "    try:\n"
        "        s = socket.socket(socket.AF_UNIX); s.connect(path); print('connected', path)\n"
        "    except OSError as exc:\n"
        "        print('blocked', type(exc).__name__)\n"
    )
    outside_dir = Path(f"/tmp/goat-sock-{uuid.uuid4().hex}")
    outside_dir.mkdir()
    paths = [str(outside_dir / "host.sock"), str(tmp_path / "in-workspace.sock")]
    servers = [socket.socket(socket.AF_UNIX) for _ in paths]
    try:
        for server, path in zip(servers, paths, strict=True):
            server.bind(path)
            server.listen()
            socket.socket(socket.AF_UNIX).connect(path)  # reachable from outside the sandbox
        out = await run(registry, language="python", code=code, args=paths)
    finally:
        for server in servers:
            server.close()
        shutil.rmtree(outside_dir)
    # The host's socket is not even visible; the workspace's is, but no unix socket can be made.
    assert section(out.content, "stdout").splitlines() == [
        "invisible",
        "blocked PermissionError",
        "visible",
        "blocked PermissionError",
    ]


async def test_a_fork_loop_is_capped(registry: Registry) -> None:
    code = (
        "import os, time\n"
        "children, refused = 0, 0\n"
        "for _ in range(400):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30); os._exit(0)\n"
        "        children += 1\n"
        "    except OSError:\n"
        "        refused += 1\n"
        "print(children, refused, flush=True)\n"
        "os._exit(0)\n"
    )
    out = await run(registry, language="python", code=code, timeout=20)
    children, refused = map(int, section(out.content, "stdout").split())
    if cgroup_root() is None and os.geteuid() == 0:  # nothing can cap root's processes; it says so
        assert "process count NOT limited" in out.content
        return
    assert children < 128 and refused > 0
    assert "at most 128 processes" in out.content or "RLIMIT_NPROC" in out.content


async def test_the_interpreter_and_its_packages_work_inside(registry: Registry) -> None:
    code = "import json, sqlite3, ssl, pydantic, sys; print(sys.executable)"
    out = await run(registry, language="python", code=code)
    assert section(out.content, "stdout") == sys.executable
    bash = await run(registry, language="bash", code="python -c 'print(6 * 7)'; echo $HOME")
    assert section(bash.content, "stdout").split() == ["42", "/tmp/home"]


async def test_a_nul_byte_is_an_error_not_a_crash(registry: Registry) -> None:
    out = await run(registry, language="python", code="print(1)", args=["a\x00b"])
    assert out.is_error and "Could not start" in out.content


async def test_without_bubblewrap_the_result_says_not_isolated(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(BWRAP_ENV, str(tmp_path / "no-such-bwrap"))
    out = await run(registry, language="python", code="print('ran')")
    assert section(out.content, "stdout") == "ran"
    assert "Isolation: NOT ISOLATED (bubblewrap (bwrap) was not found at" in out.content
    assert "bubblewrap sandbox" not in out.content


async def test_protected_settings_cannot_be_changed_from_the_sandbox(
    registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / ".goat").mkdir(exist_ok=True)
    settings = tmp_path / ".goat" / "settings.json"
    settings.write_text('{"permission_mode": "default"}')
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    code = (
        'echo \'{"permission_mode": "bypassPermissions"}\' > .goat/settings.json\n'
        "echo x > .goat/new.json\n"
        "mv .goat moved; rm -rf .goat\n"
        "echo '#!/bin/sh' > .git/hooks/pre-commit\n"
        "echo '[core] hooksPath = /tmp' >> .git/config\n"
        "mkdir -p .claude && echo '{}' > .claude/settings.json\n"
        'echo \'{"mcpServers": {"x": {"command": "sh"}}}\' > .mcp.json\n'
        "echo done\n"
    )
    out = await run(registry, language="bash", code=code)
    assert section(out.content, "stdout") == "done"
    assert settings.read_text() == '{"permission_mode": "default"}'
    assert sorted(p.name for p in (tmp_path / ".goat").iterdir()) == ["settings.json"]
    assert not (tmp_path / "moved").exists()
    assert list((tmp_path / ".git" / "hooks").iterdir()) == []
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".mcp.json").exists()
    assert "Removed what the program left at protected paths" in out.content


async def test_symlinks_in_the_workspace_do_not_reach_outside(registry: Registry, tmp_path: Path) -> None:
    secret = Path.home() / f".goat-sandbox-link-{uuid.uuid4().hex}"
    secret.write_text("top secret")
    outside = tmp_path.parent / f"outside-{uuid.uuid4().hex}"
    outside.mkdir()
    try:
        (tmp_path / "to-secret").symlink_to(secret)
        (tmp_path / "to-passwd").symlink_to("/etc/passwd")
        (tmp_path / "to-dir").symlink_to(outside)
        code = "cat to-secret to-passwd; echo x > to-dir/new; ls /proc/1/root/root; echo end"
        out = await run(registry, language="bash", code=code)
        assert not (outside / "new").exists()
    finally:
        secret.unlink()
        shutil.rmtree(outside)
    assert "top secret" not in out.content and "root:" not in out.content
    assert section(out.content, "stdout").splitlines()[-1] == "end"


async def test_kernel_settings_under_proc_are_read_only(registry: Registry) -> None:
    code = (
        "import os, sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        os.close(os.open(path, os.O_WRONLY))\n"  # opening writes nothing
        "        print(path, 'writable')\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
    )
    paths = ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger"]
    out = await run(registry, language="python", code=code, args=paths)
    assert "writable" not in section(out.content, "stdout"), out.content


KEYCTL = """
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 250, "aarch64": 219}[platform.machine()]
result = libc.syscall(number, 0, -4, 0)  # KEYCTL_GET_KEYRING_ID of the user keyring, no creation
print(result, ctypes.get_errno())
"""


@pytest.mark.parametrize("network", [False, True])
async def test_the_kernel_keyring_is_out_of_reach(registry: Registry, network: bool) -> None:
    outside = await asyncio.create_subprocess_exec(
        sys.executable, "-c", KEYCTL, stdout=asyncio.subprocess.PIPE
    )
    result, _ = await outside.communicate()
    assert not result.startswith(b"-1 ")  # the call works without the sandbox
    out = await run(registry, language="python", code=KEYCTL, network=network)
    assert section(out.content, "stdout") == "-1 1"  # EPERM
