"""Which processes a spawn started, even after `setsid` or a double fork: a cgroup, else an env marker.

Every process goat starts carries `GOAT_PROCESS_OWNER=<our pid>.<n>` and, where the cgroup file system
is writable, runs in its own cgroup `goat-<our pid>-<n>` (children cannot leave it). Killing a spawn
kills its cgroup, its marker and its process tree; a watchdog (`goat_jupyter.processes.reaper`) does the same
for every spawn of ours when this process dies, even by SIGKILL.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil

OWNER_ENV = "GOAT_PROCESS_OWNER"
CGROUPS_ENV = "GOAT_PROCESS_CGROUPS"  # "0" turns cgroups off (the env marker alone is used)
CGROUP_FS = Path("/sys/fs/cgroup")
SWEEP_ROUNDS = 50
# sh: enter the cgroup, then become the program (should joining fail, the env marker still finds it)
_JOIN = '{ echo $$ > "$1"; } 2>/dev/null; shift; exec "$@"'
_numbers = itertools.count(1)
_ended: set[Path] = set()  # cgroups of ended spawns that still held processes (removed once empty)


def owner_prefix(pid: int | None = None) -> str:
    return f"{pid or os.getpid()}."


@dataclass(frozen=True)
class Cgroup:
    """One cgroup folder; `max_pids` caps how many processes it may hold (None: no cap)."""

    path: Path
    max_pids: int | None = None

    @classmethod
    def create(cls, root: Path, name: str, max_pids: int | None = None) -> Cgroup:
        path = root / name
        path.mkdir()
        if max_pids is not None:
            try:
                (path / "pids.max").write_text(str(max_pids))
            except OSError:
                path.rmdir()
                raise
        return cls(path, max_pids)

    def wrap(self, argv: list[str]) -> list[str]:
        return ["sh", "-c", _JOIN, "goat-cgroup", str(self.path / "cgroup.procs"), *argv]

    def join_script(self) -> str:
        """Shell text that moves the running shell into this cgroup (saves `wrap`'s extra exec)."""
        return f"{{ echo $$ > {shlex.quote(str(self.path / 'cgroup.procs'))}; }} 2>/dev/null; "

    def pids(self) -> list[int]:
        with contextlib.suppress(OSError, ValueError):
            return [int(line) for line in (self.path / "cgroup.procs").read_text().split()]
        return []

    def try_remove(self) -> bool:
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


def _own_cgroup_dirs() -> list[Path]:
    """Where this process sits in the v1 `pids` hierarchy and in the v2 hierarchy."""
    dirs: list[Path] = []
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, where = line.split(":", 2)
            relative = where.lstrip("/")
            if "pids" in controllers.split(","):
                dirs.append(CGROUP_FS / "pids" / relative)
            elif controllers == "":
                dirs += [CGROUP_FS / relative, CGROUP_FS / "unified" / relative]
    return dirs


@functools.lru_cache(maxsize=1)
def cgroup_root() -> Path | None:
    """The first cgroup folder where we may create a pids cgroup and move a process into it."""
    if os.environ.get(CGROUPS_ENV) == "0" or not sys.platform.startswith("linux"):
        return None
    return next((root for root in _own_cgroup_dirs() if _usable(root)), None)


def _usable(root: Path) -> bool:
    try:
        cgroup = Cgroup.create(root, f"goat-{os.getpid()}-probe", max_pids=4)
    except OSError:
        return False
    try:
        done = subprocess.run(cgroup.wrap(["true"]), capture_output=True, timeout=10, check=False)
        return done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        kill_until_gone(cgroup.pids)
        cgroup.try_remove()


@dataclass(frozen=True)
class Owner:
    """How to find every process of one spawn: its marker, its cgroup if any, its first pid."""

    marker: str
    cgroup: Cgroup | None = None

    @classmethod
    def new(cls, max_pids: int | None = None) -> Owner:
        marker = f"{owner_prefix()}{next(_numbers)}"
        root = cgroup_root()
        cgroup = None
        if root is not None:
            prune_ended()
            with contextlib.suppress(OSError):
                cgroup = Cgroup.create(root, "goat-" + marker.replace(".", "-"), max_pids)
        return cls(marker, cgroup)

    def env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return {**(os.environ if env is None else env), OWNER_ENV: self.marker}

    def wrap(self, argv: list[str]) -> list[str]:
        return self.cgroup.wrap(argv) if self.cgroup is not None else argv

    def join_script(self) -> str:
        """For a shell script goat writes itself: its first command joins the cgroup ("" without one)."""
        return self.cgroup.join_script() if self.cgroup is not None else ""

    def pids(self, root_pid: int | None = None) -> set[int]:
        found = set(self.cgroup.pids()) if self.cgroup is not None else set[int]()
        found.update(marked_pids(self.marker, exact=True))
        if root_pid is not None:
            found.update(descendants(root_pid))
        return found

    def kill(self, root_pid: int | None = None) -> None:
        """SIGKILL every process of this spawn (repeatedly, so a fork loop cannot outrun it)."""
        kill_until_gone(lambda: self.pids(root_pid))
        self.release()

    def release(self) -> None:
        """The spawn ended: drop its cgroup if nothing of it runs any more (else prune it later)."""
        if self.cgroup is not None and not self.cgroup.try_remove():
            _ended.add(self.cgroup.path)


def descendants(pid: int) -> list[int]:
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def marked_pids(marker: str, *, exact: bool) -> list[int]:
    """Processes whose environment holds our marker (exactly, or starting with it)."""
    wanted = f"{OWNER_ENV}={marker}".encode()
    found: list[int] = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit() and _has_marker(entry, wanted, exact):
            found.append(int(entry))
    return found


def _has_marker(pid: str, wanted: bytes, exact: bool) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            items = handle.read().split(b"\0")
    except OSError:
        return False
    return any(item == wanted or (not exact and item.startswith(wanted)) for item in items)


def kill_until_gone(find: Callable[[], Iterable[int]]) -> None:
    """SIGKILL what `find` lists until it lists nothing alive (zombies count as gone)."""
    me = os.getpid()
    for _ in range(SWEEP_ROUNDS):
        alive = [pid for pid in find() if pid != me and _alive(pid)]
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def own_cgroups(root: Path, owner_pid: int) -> list[Cgroup]:
    with contextlib.suppress(OSError):
        return [Cgroup(path) for path in root.glob(f"goat-{owner_pid}-*") if path.is_dir()]
    return []


def prune_ended() -> None:
    """Remove cgroups of ended spawns whose leftover processes have exited since."""
    for path in list(_ended):
        if Cgroup(path).try_remove():
            _ended.discard(path)


def kill_everything(owner_pid: int | None = None, root: Path | None = None) -> None:
    """Every process any spawn of `owner_pid` (default: us) started: `%goat reset`, shutdown, death."""
    if owner_pid is None:
        owner_pid, root = os.getpid(), cgroup_root()
    cgroups = own_cgroups(root, owner_pid) if root is not None else []

    def find() -> list[int]:
        pids = marked_pids(owner_prefix(owner_pid), exact=False)
        return pids + [pid for cgroup in cgroups for pid in cgroup.pids()]

    kill_until_gone(find)
    for cgroup in cgroups:
        cgroup.try_remove()
