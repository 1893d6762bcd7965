"""RunCode's sandbox: bubblewrap (filesystem, network, PID namespace, clean env) plus resource limits."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from goat_jupyter.processes.limits import Limits

BWRAP_ENV = "GOAT_BWRAP"  # path of the bwrap binary to use; a missing path means "no isolation"
PROBE_TIMEOUT_S = 10
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime")
NETWORK_ETC_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
)
SANDBOX_HOME = "/tmp/home"
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Isolation:
    """What this machine offers RunCode: bubblewrap that works, or why there is none."""

    bwrap: str | None
    reason: str  # why there is no isolation ("" when there is)

    @property
    def isolated(self) -> bool:
        return self.bwrap is not None


def bwrap_path() -> str | None:
    """The bubblewrap binary: $GOAT_BWRAP when set (even to a missing file), else `bwrap` on PATH."""
    configured = os.environ.get(BWRAP_ENV)
    if configured is not None:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("bwrap")


def isolation() -> Isolation:
    """Detected once per bwrap path (the probe starts one tiny sandbox)."""
    return _detect(bwrap_path() or "", os.environ.get(BWRAP_ENV))


@functools.lru_cache(maxsize=8)
def _detect(bwrap: str, configured: str | None) -> Isolation:
    if not sys.platform.startswith("linux"):
        return Isolation(None, f"sandboxing needs bubblewrap on Linux; this is {sys.platform}")
    if not bwrap:
        where = f"at {configured} (set by ${BWRAP_ENV})" if configured is not None else "on PATH"
        return Isolation(None, f"bubblewrap (bwrap) was not found {where}")
    problem = _probe(bwrap)
    if problem:
        return Isolation(None, f"bubblewrap cannot create a sandbox here ({problem})")
    return Isolation(bwrap, "")


def _probe(bwrap: str) -> str:
    argv = [bwrap, *_namespace_args(network=False), *_system_binds(), "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return done.stderr.decode(errors="replace").strip()[:300] if done.returncode else ""


def _namespace_args(*, network: bool) -> list[str]:
    shared = ["--share-net"] if network else []
    return ["--unshare-all", *shared, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def _system_binds() -> list[str]:
    """System folders read-only; merged-/usr symlinks such as /bin -> usr/bin stay symlinks."""
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    # bwrap leaves /proc/sys writable when run as real root (its directory mode hides that), and
    # uid 0 may write sysctls such as kernel.core_pattern without any capability: cover it read-only.
    proc = ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    proc += ["--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
    return [*args, *proc, "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]


def interpreter_dirs() -> list[str]:
    """Where the running Python lives (a pyenv or venv prefix), when that is outside the system folders."""
    candidates = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(Path(sys.executable).resolve().parents[1]),
    }
    return sorted(d for d in candidates if d and not _under_system(d))


def _under_system(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d + "/") for d in ("/usr", "/bin", "/lib", "/lib64"))


@dataclass(frozen=True)
class SandboxSpec:
    """One run: where, with which environment and limits, and whether the network stays on."""

    workspace: Path
    env: dict[str, str]
    limits: Limits
    network: bool = False
    protect: tuple[str, ...] = ()  # bwrap arguments keeping protected paths read-only (sandbox_guard)


def sandbox_env(extra: dict[str, str] | None) -> dict[str, str]:
    """A clean environment: PATH, HOME, LANG and unbuffered Python, then the call's own variables."""
    path = f"{Path(sys.executable).parent}:{BASE_PATH}"
    return {"PATH": path, "HOME": SANDBOX_HOME, "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", **(extra or {})}


def bwrap_argv(bwrap: str, spec: SandboxSpec, program: list[str], seccomp_fd: int | None = None) -> list[str]:
    """bubblewrap around `program`: only the system, the interpreter and the workspace are visible."""
    workspace = os.path.realpath(spec.workspace)
    args = [bwrap, *_namespace_args(network=spec.network), *_system_binds()]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    for path in [*ETC_FILES, *(NETWORK_ETC_FILES if spec.network else ())]:
        args += ["--ro-bind-try", path, path]
    for folder in interpreter_dirs():
        args += ["--ro-bind", folder, folder]
    args += ["--bind", workspace, workspace, *spec.protect]
    # The sandbox's own root stays read-only: only the workspace and a private /tmp take writes.
    args += ["--remount-ro", "/", "--chdir", workspace, "--clearenv"]
    for key, value in spec.env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *spec.limits.wrap(program)]


def applied(iso: Isolation, spec: SandboxSpec, max_pids: int | None, unix_blocked: bool) -> str:
    """The lines of the result that say what isolation this run really had."""
    limits = spec.limits.describe(max_pids)
    if not iso.isolated:
        return (
            f"Isolation: NOT ISOLATED ({iso.reason}). The program ran as the kernel's user with its "
            f"file and network access; only the environment was cleaned.\nLimits: {limits}"
        )
    network = "allowed (network: true)" if spec.network else "none (own network namespace, no host sockets)"
    if not spec.network and not unix_blocked:
        network += "; a unix socket file inside the workspace stays reachable (no seccomp filter here)"
    return (
        "Isolation: bubblewrap sandbox. Files: the workspace read-write, system and Python folders "
        f"read-only, nothing else (no home, no /etc/passwd); goat's configuration, .git folders and files "
        "that run code later read-only, new ones removed after the run; credential stores hidden. "
        "Environment: clean. Processes: own PID "
        f"namespace, all killed when the run ends.\nNetwork: {network}\nLimits: {limits}"
    )
