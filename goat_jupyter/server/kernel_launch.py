"""Kernels this Jupyter server starts do not run modules planted in their working folder.

`python -m ipykernel_launcher` puts the working folder first on sys.path, so an
`ipykernel_launcher.py`, `json.py` or `traitlets/` there runs in the new kernel, with its keys.
The server extension rewrites such kernel specs to `python -c SAFE_LAUNCH`, which drops the working
folder from sys.path before it imports the launcher (Python 3.10's -c and -m both add it; `-P` /
PYTHONSAFEPATH need 3.11 and the latter would reach the kernel's own subprocesses). IPython adds the
folder back after the standard library once the kernel is up, so a notebook still imports its
neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from goat_jupyter.config.keys import update_launch_env

SAFE_LAUNCH = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "import runpy; runpy.run_module('ipykernel_launcher', run_name='__main__', alter_sys=True)"
)

_WITH_VALUE = frozenset({"-X", "-W", "--check-hash-based-pycs"})


def safe_argv(argv: list[str]) -> list[str] | None:
    """The same command without the working folder first on sys.path; None when it is not a
    `-m ipykernel_launcher` command (other kernels are left as they are)."""
    index = 1
    while index < len(argv) - 1:
        word = argv[index]
        if word == "-m":
            if argv[index + 1] != "ipykernel_launcher":
                return None
            return [*argv[:index], "-c", SAFE_LAUNCH, *argv[index + 2 :]]
        if not word.startswith("-") or word == "-c":
            return None  # a script or a command: not ours to rewrite
        index += 2 if word in _WITH_VALUE else 1
    return None


def harden_kernel_specs(manager: Any) -> None:
    """Wrap the server's KernelSpecManager so every spec it hands out launches safely."""
    original: Callable[..., Any] = manager.get_kernel_spec
    if getattr(original, "goat_safe_launch", False):
        return

    def get_kernel_spec(kernel_name: str, *args: Any, **kwargs: Any) -> Any:
        spec = original(kernel_name, *args, **kwargs)
        argv = getattr(spec, "argv", None)
        safe = safe_argv(list(argv)) if isinstance(argv, list) else None  # pyright: ignore[reportUnknownArgumentType]
        if safe is not None:
            spec.argv = safe
        return spec

    get_kernel_spec.goat_safe_launch = True  # pyright: ignore[reportFunctionMemberAccess]
    manager.get_kernel_spec = get_kernel_spec


def refresh_launch_envs(kernels: Any, added: Mapping[str, str], removed: Mapping[str, str]) -> int:
    """Running kernels' launch environments after a key store change, so Kernel → Restart brings the
    store as it is now (jupyter_client reuses the environment of the first start). Returns how many."""
    count = 0
    for kernel_id in list(kernels.list_kernel_ids()):
        launch: object = getattr(kernels.get_kernel(kernel_id), "_launch_args", None)
        env = cast("dict[str, object]", launch).get("env") if isinstance(launch, dict) else None
        if isinstance(env, dict):
            update_launch_env(cast("dict[str, str]", env), added, removed)
            count += 1
    return count
