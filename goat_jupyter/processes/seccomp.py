"""A seccomp filter for bwrap: refuses socket(AF_UNIX) and the kernel keyring calls.

Abstract unix sockets already belong to the network namespace; path-based ones are files, and the
workspace is visible, so a server listening there would be reachable without this. socketpair()
(no path, no host reach) keeps working. The keyring is per user id, not per namespace: a sandbox
running as root could read root's keys. Classic BPF, written out because no seccomp library is at hand.
"""

from __future__ import annotations

import os
import platform
import struct

# (audit arch, socket, (add_key, request_key, keyctl)) per machine; elsewhere no filter is applied.
_ARCHES = {"x86_64": (0xC000003E, 41, (248, 249, 250)), "aarch64": (0xC00000B7, 198, (217, 218, 219))}
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


def unix_socket_filter(*, block_unix: bool = True) -> bytes | None:
    """The compiled filter for this machine, or None when its syscall numbers are not known here."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit_arch, socket_nr, keyring = arch
    program = [
        _op(_LD_W_ABS, 4),  # seccomp_data.arch
        _op(_JEQ_K, audit_arch, jt=1),
        _op(_RET_K, _RET_KILL_PROCESS),  # another ABI (i386 socketcall) could go around the checks
        _op(_LD_W_ABS, 0),  # seccomp_data.nr
        _op(_JSET_K, _X32_BIT, jf=1),
        _op(_RET_K, _RET_KILL_PROCESS),  # x32 syscall numbers
    ]
    for number in keyring:
        program += [_op(_JEQ_K, number, jf=1), _op(_RET_K, _RET_EPERM)]
    if block_unix:
        program += [
            _op(_JEQ_K, socket_nr, jf=3),
            _op(_LD_W_ABS, 16),  # low half of args[0], the address family
            _op(_JEQ_K, _AF_UNIX, jf=1),
            _op(_RET_K, _RET_EPERM),
        ]
    program.append(_op(_RET_K, _RET_ALLOW))
    return b"".join(program)


def filter_fd(program: bytes) -> int:
    """A file descriptor bwrap reads the filter from (`--seccomp FD`); the caller closes it."""
    fd = os.memfd_create("goat-seccomp")
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
