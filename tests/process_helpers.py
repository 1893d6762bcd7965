"""Checks that processes are really gone (exited or reaped zombies), for kill and timeout tests."""

from __future__ import annotations

import asyncio

import psutil


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_all_gone(pids: list[int]) -> bool:
    for _ in range(100):
        if all(gone(pid) for pid in pids):
            return True
        await asyncio.sleep(0.05)
    return False


def with_marker(marker: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose command line contains `marker`."""
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if marker in cmdline and not gone(proc.pid):
            found.append(proc)
    return found


async def wait_marker_gone(marker: str, timeout_s: float = 10.0) -> list[psutil.Process]:
    """The processes with `marker` still alive after waiting up to `timeout_s` (empty: all gone)."""
    left = with_marker(marker)
    for _ in range(int(timeout_s / 0.05)):
        if not left:
            break
        await asyncio.sleep(0.05)
        left = with_marker(marker)
    return left
