"""Autoload entry in the IPython kernel configuration; the provider key store."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.config import autoload
from goat_jupyter.config.keys import apply_keys, check_name, read_keys, update_keys, write_keys

ORIGINALS = ["", "c = get_config()\n", "x = 1", "a = 1\r\nb = 2\r\n", "# é ünïcode\n\n\n", "\n"]


@pytest.mark.parametrize("original", [None, *ORIGINALS])
def test_off_restores_the_kernel_configuration_byte_for_byte(tmp_path: Path, original: str | None) -> None:
    path = tmp_path / "profile_default" / "ipython_kernel_config.py"
    if original is not None:
        path.parent.mkdir(parents=True)
        path.write_bytes(original.encode())
    assert not autoload.is_enabled(path)
    autoload.enable(path)
    autoload.enable(path)  # twice: still one entry
    text = path.read_text(encoding="utf-8")
    assert autoload.is_enabled(path) and text.count("extensions.append") == 1
    compile(text, str(path), "exec")  # still valid Python
    autoload.disable(path)
    if original is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == original.encode()
    assert "already off" in autoload.disable(path)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_round_trip_for_any_existing_content(tmp_path_factory: pytest.TempPathFactory, original: str) -> None:
    path = tmp_path_factory.mktemp("cfg") / "ipython_kernel_config.py"
    path.write_bytes(original.encode())
    autoload.enable(path)
    autoload.disable(path)
    assert path.read_bytes() == original.encode()


def test_lines_the_user_added_after_on_are_kept_by_off(tmp_path: Path) -> None:
    path = tmp_path / "ipython_kernel_config.py"
    autoload.enable(path)
    with path.open("a") as out:
        out.write("c.Foo.bar = 1\n")
    autoload.disable(path)
    assert path.read_text() == "c.Foo.bar = 1\n"


def test_the_entry_loads_the_extension_through_traitlets(tmp_path: Path) -> None:
    from traitlets.config.loader import PyFileConfigLoader

    for before in ("", "c.InteractiveShellApp.extensions = ['foo']\n"):
        path = tmp_path / "ipython_kernel_config.py"
        path.write_text(before)
        autoload.enable(path)
        config = PyFileConfigLoader(path.name, str(tmp_path)).load_config()
        extensions = config.InteractiveShellApp.extensions
        value = extensions if isinstance(extensions, list) else extensions.get_value([])  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
        assert value[-1] == "goat_jupyter" and ("foo" in value) == bool(before)  # pyright: ignore[reportIndexIssue, reportOperatorIssue]
        autoload.disable(path)


def test_key_store_is_user_only_and_never_wider(tmp_path: Path) -> None:
    path = tmp_path / "goat" / "keys.json"
    os.umask(0o022)
    update_keys({"OPENAI_API_KEY": "sk-1"}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)  # someone widened it: the next write narrows it again
    update_keys({"ANTHROPIC_API_KEY": "sk-2"}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_keys(path) == {"ANTHROPIC_API_KEY": "sk-2", "OPENAI_API_KEY": "sk-1"}
    assert [p.name for p in path.parent.iterdir()] == ["keys.json"]  # no temp files left


@pytest.mark.parametrize(
    "name",
    ["PATH", "LD_PRELOAD", "PYTHONPATH", "GOAT_HOME", "HOME", "lower_key", "A", "X=Y_KEY", "JUPYTER_TOKEN"],
)
def test_names_that_are_not_provider_keys_are_refused(tmp_path: Path, name: str) -> None:
    assert check_name(name) is not None
    with pytest.raises(ValueError):
        update_keys({name: "v"}, tmp_path / "keys.json")
    assert not (tmp_path / "keys.json").exists()


@pytest.mark.parametrize("value", ["a\nb", "a\x00", "   "])
def test_multiline_or_empty_values_are_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValueError):
        update_keys({"OPENAI_API_KEY": value}, tmp_path / "keys.json")


def test_apply_keys_respects_the_environment_until_reload_and_forgets_removed_keys(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    write_keys({"OPENAI_API_KEY": "stored", "GROQ_API_KEY": "g"}, path)
    env = {"OPENAI_API_KEY": "from-env"}
    assert apply_keys(env, override=False, path=path) == ["GROQ_API_KEY"]
    assert env == {"OPENAI_API_KEY": "from-env", "GROQ_API_KEY": "g"}
    update_keys({"GROQ_API_KEY": None}, path)
    apply_keys(env, override=True, path=path)
    assert env == {"OPENAI_API_KEY": "stored"}


def test_a_broken_store_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    for content in ("", "[1]", '{"PATH": "/evil", "OPENAI_API_KEY": 5}'):
        path.write_text(content)
        assert read_keys(path) == {}


def test_a_kernel_follows_the_store_it_inherited_its_keys_from(tmp_path: Path) -> None:
    """Issue 33 point 10: a kernel that got a stored key through its launch environment drops it when
    the key is removed in the panel; a value set elsewhere (another value) stays."""
    from goat_jupyter.config.keys import sync_keys

    path = tmp_path / "keys.json"
    write_keys({"OPENAI_API_KEY": "stored-key", "GROQ_API_KEY": "stored-groq"}, path)
    env = {"OPENAI_API_KEY": "stored-key", "GROQ_API_KEY": "exported-in-the-shell"}  # as inherited
    sync_keys(env, path)
    assert env == {"OPENAI_API_KEY": "stored-key", "GROQ_API_KEY": "exported-in-the-shell"}
    update_keys({"OPENAI_API_KEY": None, "GROQ_API_KEY": None, "MISTRAL_API_KEY": "new-mistral"}, path)
    sync_keys(env, path)
    assert env == {"GROQ_API_KEY": "exported-in-the-shell", "MISTRAL_API_KEY": "new-mistral"}
    env["MISTRAL_API_KEY"] = "set-in-a-cell"
    sync_keys(env, path)  # the store did not change: nothing to do (one stat)
    assert env["MISTRAL_API_KEY"] == "set-in-a-cell"


@pytest.mark.parametrize(
    ("launch", "expected"),
    [
        ({"OPENAI_API_KEY": "old", "PATH": "/bin"}, {"PATH": "/bin", "GROQ_API_KEY": "g"}),
        ({"OPENAI_API_KEY": "from-the-shell"}, {"OPENAI_API_KEY": "from-the-shell", "GROQ_API_KEY": "g"}),
        ({}, {"GROQ_API_KEY": "g"}),
    ],
)
def test_a_restart_gets_the_store_as_it_is_now(launch: dict[str, str], expected: dict[str, str]) -> None:
    from goat_jupyter.config.keys import launch_env_changes, update_launch_env

    added, removed = launch_env_changes({"OPENAI_API_KEY": "old"}, {"GROQ_API_KEY": "g"})
    update_launch_env(launch, added, removed)
    assert launch == expected
