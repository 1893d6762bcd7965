"""Provider keys in a real kernel's environment and in goat's key store never reach the model, the
cell's output or the saved session: `env`, KernelInspect of `os.environ`, a key streamed in pieces by
Bash, the model echoing one, a key stored after the kernel started. Short values stay readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goat_jupyter.replay import ReplayServer
from tests.agent_helpers import text_turn, tool_turn
from tests.kernel_harness import KernelSession, prepare_workspace, replay_kernel_env

pytestmark = pytest.mark.timeout(240)
OPENAI_KEY = "sk-test-7fQ2mZ9xLr4Kp8Vw3Ny6Bt1Hc5Jd0Ge"
HF_TOKEN = "hf_0aB1cD2eF3gH4iJ5kL6mN7oP8"
STORED = "gsk_storedOnly_9Zy8Xw7Vu6Ts5Rq4"
SHORT = "abc12345"  # 8 characters: left alone
# Bash prints the key in three pieces, apart in time, so progress events cut it (the command itself
# names no piece of it).
SPLIT_PRINT = (
    'printf %s "${OPENAI_API_KEY:0:10}"; sleep 0.3; printf %s "${OPENAI_API_KEY:10:10}"; sleep 0.3; '
    'echo "${OPENAI_API_KEY:20}"'
)
TURNS = [
    tool_turn("Bash", {"command": "env"}),
    tool_turn("KernelInspect", {"expression": "__import__('os').environ"}),
    tool_turn("Bash", {"command": SPLIT_PRINT}),
    tool_turn("Read", {"file_path": "config.json"}),
    text_turn(f"Your key is {OPENAI_KEY} and the token {HF_TOKEN}."),
    tool_turn("Bash", {"command": "cat stored.txt"}),
    text_turn("Done."),
]


def published(messages: list[dict[str, object]]) -> str:
    return json.dumps([m["content"] for m in messages], ensure_ascii=False)


async def test_keys_are_redacted_everywhere_goat_writes(tmp_path: Path) -> None:
    """The acceptance case: the workspace is the home folder, the model runs `env` and inspects
    `os.environ`; the key store sits in ~/.goat."""
    prepare_workspace(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"api_key": OPENAI_KEY, "short": SHORT}))
    home = tmp_path / ".goat"
    with ReplayServer(TURNS) as server:
        env = replay_kernel_env(home, server.url)
        env |= {"OPENAI_API_KEY": OPENAI_KEY, "HF_TOKEN": HF_TOKEN, "SHORT_TOKEN": SHORT}
        env["HOME"] = str(tmp_path)  # Jupyter started in the home folder: the workspace is ~
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            first = await kernel.execute("%%goat\nshow me the environment")
            assert first.status == "ok", first.messages
            # A key saved in the settings panel after this kernel started: in the store, not in env.
            (home / "keys.json").write_text(json.dumps({"GROQ_API_KEY": STORED}))
            (tmp_path / "stored.txt").write_text(f"groq={STORED}\n")
            second = await kernel.execute("%%goat\nand the stored file")
            assert second.status == "ok", second.messages
    sent = json.dumps(server.requests, ensure_ascii=False)
    shown = published(first.messages + second.messages)
    saved = "".join(p.read_text() for p in (tmp_path / ".goat" / "sessions").glob("*.jsonl"))
    for where, text in {"model": sent, "cell": shown, "session": saved}.items():
        for value in (OPENAI_KEY, HF_TOKEN, STORED, OPENAI_KEY[:10], OPENAI_KEY[10:20]):
            assert value not in text, (where, value)
        for name in ("OPENAI_API_KEY", "HF_TOKEN", "GROQ_API_KEY"):
            assert f"[redacted: {name}]" in text, (where, name)
    assert f"SHORT_TOKEN={SHORT}" in sent  # a short value is not worth wrecking output for
    assert not server.remaining


async def test_a_key_split_across_progress_events_never_shows(tmp_path: Path) -> None:
    """Each progress event goes to the cell as it comes; none may carry a piece of the key."""
    prepare_workspace(tmp_path)
    turns = [tool_turn("Bash", {"command": SPLIT_PRINT}), text_turn("Printed.")]
    with ReplayServer(turns) as server:
        env = replay_kernel_env(tmp_path / "home", server.url) | {"OPENAI_API_KEY": OPENAI_KEY}
        async with KernelSession(tmp_path, env) as kernel:
            assert (await kernel.execute("%load_ext goat_jupyter")).status == "ok"
            result = await kernel.execute("%%goat\nprint it")
    assert result.status == "ok", result.messages
    for message in result.messages:
        text = json.dumps(message["content"], ensure_ascii=False)
        assert OPENAI_KEY[:10] not in text and OPENAI_KEY[10:20] not in text, text[:500]
    assert "[redacted: OPENAI_API_KEY]" in published(result.messages)
