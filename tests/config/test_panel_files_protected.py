"""What the settings panel writes (~/.goat/settings.json, ~/.goat/keys.json) the agent's tools cannot
change unasked, in any mode, under any spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.config.keys import key_store_path
from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.settings import user_settings_path

MODES = ("default", "acceptEdits", "bypassPermissions", "dontAsk")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".goat").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GOAT_HOME", raising=False)
    return home


def calls(target: str) -> list[tuple[str, dict[str, object], str]]:
    return [
        ("Write", {"file_path": target, "content": "{}"}, "mutating"),
        ("Edit", {"file_path": target, "old_string": "a", "new_string": "b"}, "mutating"),
        ("Delete", {"path": target}, "mutating"),
        ("Move", {"from": target, "to": "/tmp/x.json"}, "mutating"),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_the_panels_files_are_never_changed_unasked(home: Path, tmp_path: Path, mode: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    context = PermissionContext(workspace=workspace, mode=mode, home=home)  # pyright: ignore[reportArgumentType]
    files = [key_store_path(), user_settings_path()]
    assert all(path.parent == home / ".goat" for path in files)
    for path in files:
        path.write_text("{}")
        spellings = [
            str(path),
            f"~/.goat/{path.name}",
            str(home / ".goat/../.goat" / path.name),
            str(home / ".GOAT" / path.name),
        ]
        for spelling in spellings:
            for name, args, side_effect in calls(spelling):
                decision = evaluate(name, args, side_effect, context)
                assert decision.behavior != "allow", (mode, name, spelling)
                assert "settings folder" in decision.reason, (mode, name, spelling, decision.reason)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    [
        "echo {} > ~/.goat/keys.json",
        "cp x ~/.goat/settings.json",
        "rm ~/.goat/keys.json",
        "sed -i s/a/b/ ~/.goat/settings.json",
    ],
)
def test_shell_commands_naming_the_panels_files_ask_in_every_mode(
    home: Path, tmp_path: Path, mode: str, command: str
) -> None:
    context = PermissionContext(workspace=tmp_path, mode=mode, home=home)  # pyright: ignore[reportArgumentType]
    decision = evaluate("Bash", {"command": command}, "spawns", context)
    assert decision.behavior != "allow" and "protected configuration" in decision.reason
