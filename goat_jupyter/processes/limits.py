"""Resource limits for RunCode: rlimits set inside the program, a pids cgroup for the process count."""

from __future__ import annotations

import os
from dataclasses import dataclass

import psutil

MEMORY_LIMIT_BYTES = 2 << 30
FILE_SIZE_LIMIT_BYTES = 1 << 30
MAX_PROCESSES = 128
CPU_GRACE_S = 1  # the CPU-time limit is the wall-clock timeout plus this


@dataclass(frozen=True)
class Limits:
    """CPU seconds, address space, file size and (without a cgroup) RLIMIT_NPROC, set with ulimit."""

    cpu_s: int
    memory_bytes: int = MEMORY_LIMIT_BYTES
    file_size_bytes: int = FILE_SIZE_LIMIT_BYTES
    nproc: int | None = None  # None: the process count is capped by a cgroup, or not at all

    def wrap(self, program: list[str]) -> list[str]:
        ulimit = f"ulimit -t {self.cpu_s} -v {self.memory_bytes >> 10} -f {self.file_size_bytes >> 10}"
        if self.nproc is not None:
            ulimit += f" -u {self.nproc}"
        return ["bash", "-c", f'{ulimit} && exec "$@"', "goat-sandbox", *program]

    def describe(self, max_pids: int | None) -> str:
        text = (
            f"CPU time {self.cpu_s} s, memory {self.memory_bytes >> 30} GiB, "
            f"file size {self.file_size_bytes >> 30} GiB, "
        )
        if max_pids is not None:
            return text + f"at most {max_pids} processes (pids cgroup)"
        if self.nproc is not None:
            return text + f"RLIMIT_NPROC {self.nproc} (it counts every process of this user)"
        return text + "process count NOT limited (no writable pids cgroup; RLIMIT_NPROC does not bind root)"


def limits_for(timeout_s: int, capped_by_cgroup: bool) -> Limits:
    """RLIMIT_NPROC only where it binds: not for root, and not needed when a pids cgroup caps the run."""
    if capped_by_cgroup or os.geteuid() == 0:
        return Limits(timeout_s + CPU_GRACE_S)
    mine = sum(1 for proc in psutil.process_iter() if _same_user(proc))
    return Limits(timeout_s + CPU_GRACE_S, nproc=mine + MAX_PROCESSES)


def _same_user(proc: psutil.Process) -> bool:
    try:
        return proc.uids().real == os.getuid()
    except psutil.Error:
        return False
