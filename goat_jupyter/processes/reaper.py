"""Watchdog: when the process that started us dies (even by SIGKILL), kill every process it spawned.

Run as `python -m goat_jupyter.processes.reaper <owner pid> [<cgroup root>]`; `ensure_reaper()` starts one per
process on its first spawn. It waits on a pidfd (no polling), then sweeps by cgroup and env marker.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from goat_jupyter.processes.owner import OWNER_ENV, cgroup_root, kill_everything

POLL_S = 1.0  # only without pidfds (Linux < 5.3)


class _Started:
    pid: int | None = None  # the process that started the running watchdog (a fork resets it)
    watchdog: subprocess.Popen[bytes] | None = None  # kept, so it is never reported as abandoned


def ensure_reaper() -> None:
    """Start this process's watchdog once (again in a forked child, which is another owner)."""
    if _Started.pid == os.getpid() or not sys.platform.startswith("linux"):
        return
    root = cgroup_root()
    env = {key: value for key, value in os.environ.items() if key != OWNER_ENV}
    argv = [sys.executable, "-m", "goat_jupyter.processes.reaper", str(os.getpid()), str(root or "")]
    _Started.watchdog = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # an interrupt or group kill aimed at us must not reach it
    )
    _Started.pid = os.getpid()


def wait_for_death(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        while _exists(pid):
            time.sleep(POLL_S)
        return
    select.select([fd], [], [])
    os.close(fd)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str]) -> None:
    owner = int(argv[0])
    root = Path(argv[1]) if len(argv) > 1 and argv[1] else None
    wait_for_death(owner)
    kill_everything(owner, root)


if __name__ == "__main__":
    main(sys.argv[1:])
