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
