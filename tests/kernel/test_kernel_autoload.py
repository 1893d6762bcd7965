"""`%goat autoload on` in a real kernel: the next kernel answers %%goat without %load_ext; `off`
restores the user's kernel configuration byte for byte. A temporary IPYTHONDIR keeps ~ untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

pytestmark = pytest.mark.timeout(240)

WAIT_FOR_LITELLM = """
import sys, time
deadline = time.monotonic() + 90
while "litellm" not in sys.modules and time.monotonic() < deadline:
    time.sleep(0.1)
print("litellm" in sys.modules)
"""
USER_CONFIG = b"# my kernel settings\r\nc.InteractiveShell.ast_node_interactivity = 'all'"  # no final newline


async def test_autoload_on_loads_goat_in_new_kernels_and_off_restores_the_file(tmp_path: Path) -> None:
    prepare_workspace(tmp_path)
    ipython_dir = tmp_path / "ipython"
    config = ipython_dir / "profile_default" / "ipython_kernel_config.py"
    config.parent.mkdir(parents=True)
    config.write_bytes(USER_CONFIG)
    with ReplayServer([text_turn("warm and ready")]) as server:
        env = {
            **replay_kernel_env(tmp_path / "goat", server.url),
            "HOME": str(tmp_path),
            "IPYTHONDIR": str(ipython_dir),
        }
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            on = await kernel.execute("%goat autoload on")
            assert "Autoload is on" in on.stdout and str(config) in on.stdout
        async with KernelSession(tmp_path, env) as fresh:
            loaded = await fresh.execute("import sys; print('goat_jupyter.kernel.extension' in sys.modules)")
            assert loaded.stdout.strip() == "True"  # loaded at kernel start, before any cell
            # The warm-up (agent import, then litellm) runs on its own with no goat cell sent yet.
            warm = await fresh.execute(WAIT_FOR_LITELLM, timeout=120)
            assert warm.stdout.strip() == "True"
            setting = await fresh.execute("get_ipython().ast_node_interactivity")
            assert setting.status == "ok"
            cell = await fresh.execute("%%goat\nhello")
            assert cell.status == "ok", cell.error
            assert "warm and ready" in cell.text("text/plain") + cell.text("text/markdown")
            off = await fresh.execute("%goat autoload off")
            assert "Autoload is off" in off.stdout
        assert config.read_bytes() == USER_CONFIG
        async with KernelSession(tmp_path, env) as after:
            plain = await after.execute("%%goat\nhello")
            assert plain.status == "error"  # no goat any more without %load_ext
