"""A seccomp filter for bwrap that refuses socket(AF_UNIX): a socket file in the workspace stays out of reach.

Abstract unix sockets already belong to the network namespace; path-based ones are files, and the
workspace is visible, so a server listening there would be reachable without this. socketpair()
(no path, no host reach) keeps working. Classic BPF, written out because no seccomp library is at hand.
"""

from __future__ import annotations

import os
import platform
import struct

# (audit arch, socket syscall number) per machine; elsewhere no filter is applied (the result says so).
_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_EPERM = 0x00050000 | 1
_AF_UNIX = 1
_X32_BIT = 0x40000000


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def unix_socket_filter() -> bytes | None:
    """The compiled filter for this machine, or None when its syscall numbers are not known here."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit_arch, socket_nr = arch
    program = [
        _op(_LD_W_ABS, 4),  # seccomp_data.arch
        _op(_JEQ_K, audit_arch, jt=1),
        _op(_RET_K, _RET_KILL_PROCESS),  # another ABI (i386 socketcall) could go around the check
        _op(_LD_W_ABS, 0),  # seccomp_data.nr
        _op(_JSET_K, _X32_BIT, jf=1),
        _op(_RET_K, _RET_KILL_PROCESS),  # x32 syscall numbers
        _op(_JEQ_K, socket_nr, jf=3),
        _op(_LD_W_ABS, 16),  # low half of args[0], the address family
        _op(_JEQ_K, _AF_UNIX, jf=1),
        _op(_RET_K, _RET_EPERM),
        _op(_RET_K, _RET_ALLOW),
    ]
    return b"".join(program)


def filter_fd(program: bytes) -> int:
    """A file descriptor bwrap reads the filter from (`--seccomp FD`); the caller closes it."""
    fd = os.memfd_create("goat-seccomp")
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
