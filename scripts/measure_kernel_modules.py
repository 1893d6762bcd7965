"""Regenerate goat_jupyter/config/kernel_modules.py: the top-level modules a freshly started kernel
has imported (from a real `python3` kernel's sys.modules), less those Python cannot take from a
folder (built-in and frozen ones). A workspace file or package with one of these names would run
in a kernel that starts there with the folder first on sys.path.

    python scripts/measure_kernel_modules.py
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from jupyter_client.manager import start_new_kernel

TARGET = Path(__file__).resolve().parent.parent / "goat_jupyter" / "config" / "kernel_modules.py"
PROBE = "import sys, json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
ALSO = ("goat_jupyter", "ipykernel_launcher")  # goat when autoload is on; the launcher itself


def kernel_modules() -> list[str]:
    manager, client = start_new_kernel(kernel_name="python3")
    printed: list[str] = []

    def collect(message: dict[str, object]) -> None:
        content = message["content"]
        if message["msg_type"] == "stream" and isinstance(content, dict):
            printed.append(str(content.get("text", "")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]

    try:
        client.execute_interactive(PROBE, output_hook=collect, timeout=60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return json.loads("".join(printed))


def from_a_folder(name: str) -> bool:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in ("built-in", "frozen")


def main() -> None:
    names = sorted({n for n in kernel_modules() if from_a_folder(n)} | set(ALSO))
    lines = "".join(f"        {name!r},\n" for name in names)
    TARGET.write_text(
        '"""Top-level modules a freshly started kernel imports (measured by\n'
        'scripts/measure_kernel_modules.py; built-in and frozen modules left out)."""\n\n'
        f"KERNEL_START_MODULES = frozenset(\n    {{\n{lines}    }}\n)\n"
    )
    print(f"{len(names)} modules -> {TARGET}")


if __name__ == "__main__":
    main()
