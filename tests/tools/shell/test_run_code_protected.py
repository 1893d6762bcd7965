"""A sandboxed RunCode program cannot rename or plant `.git`, nor leave behind a file that runs code
later (ipykernel_launcher.py, a .pth, a shadowing module, IPython/Jupyter configuration), however
it tries; credential stores in a workspace at home are hidden from it. Real bubblewrap."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goat_jupyter.processes.sandbox import isolation
from goat_jupyter.processes.sandbox_guard import GRACE_NS
from goat_jupyter.tools import Registry, ToolOutput, default_registry

_SANDBOX = isolation()
pytestmark = pytest.mark.skipif(not _SANDBOX.isolated, reason=f"no sandbox here: {_SANDBOX.reason}")
SITE = ".venv/lib/python3.11/site-packages"


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Registry]:
    registry = default_registry(cwd=tmp_path)
    yield registry
    await registry.session.tasks.stop_all()


async def bash(registry: Registry, code: str) -> ToolOutput:
    return await registry.call("RunCode", {"language": "bash", "code": code + "\necho end"})


def files_below(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


async def test_git_cannot_be_renamed_replaced_or_planted(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "sub").mkdir()
    code = (
        "mv .git old-git; rm -rf .git; echo x > .git/HEAD\n"
        "mkdir -p sub/.git/hooks && printf '#!/bin/sh\\ntouch PWN\\n' > sub/.git/hooks/pre-commit\n"
        "printf '[core]\\nfsmonitor = touch PWN\\n' > sub/.git/config\n"
        "mkdir -p deep/er && echo 'gitdir: ../../evil' > deep/er/.git\n"
        "mkdir -p a/b && ln -s ../../sub/.git a/b/.GIT\n"
    )
    out = await bash(registry, code)
    assert out.content.count("end") >= 1
    assert (tmp_path / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert not (tmp_path / "old-git").exists()
    for planted in ("sub/.git", "deep/er/.git", "a/b/.GIT"):
        assert not os.path.lexists(tmp_path / planted), planted
    assert "Removed what the program left at protected paths" in out.content and "sub/.git" in out.content


async def test_a_nested_repository_moved_away_is_kept_and_a_new_one_in_its_place_removed(
    registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / "lib" / ".git").mkdir(parents=True)
    (tmp_path / "lib" / ".git" / "config").write_text("[core]\n")
    code = (
        "echo evil >> lib/.git/config; mv lib/.git lib/old\n"
        "mv lib lib2 && mkdir -p lib/.git && echo '[core] fsmonitor = x' > lib/.git/config\n"
    )
    await bash(registry, code)
    moved = tmp_path / "lib2" / ".git" / "config"
    assert moved.read_text() == "[core]\n"  # the user's repository, unchanged, where the program moved it
    assert not (tmp_path / "lib" / ".git").exists()


async def test_pth_files_cannot_be_left_in_a_virtual_environment(registry: Registry, tmp_path: Path) -> None:
    site = tmp_path / SITE
    site.mkdir(parents=True)
    (site / "distutils-precedence.pth").write_text("import _distutils_hack\n")
    (tmp_path / "notes.txt").write_text("notes\n")
    code = (
        f"echo 'import os; os.system(\"touch PWN\")' > {SITE}/evil.pth\n"
        f"echo 'import os' >> {SITE}/distutils-precedence.pth\n"
        f"ln {SITE}/distutils-precedence.pth hard.txt; echo more >> hard.txt\n"
        f"ln notes.txt {SITE}/linked.PTH\n"
        f"ln -s ../../../../notes.txt {SITE}/sym.pth\n"
        f"mv .venv venv-moved; mkdir -p {SITE} && echo 'import os' > {SITE}/again.pth\n"
    )
    out = await bash(registry, code)
    below = files_below(tmp_path)
    assert not any(name.casefold().endswith(".pth") and "distutils" not in name for name in below), below
    original = next(p for p in tmp_path.rglob("distutils-precedence.pth"))
    assert original.read_text() == "import _distutils_hack\n"
    assert (tmp_path / "notes.txt").read_text() == "notes\n"  # a hard link's other name stays
    assert "evil.pth" in out.content


async def test_kernel_start_files_cannot_be_left_behind(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "nb").mkdir()
    (tmp_path / "helper.py").write_text("x = 1\n")
    code = (
        'echo \'open("PWN","w")\' > ipykernel_launcher.py\n'
        'echo \'open("PWN","w")\' > nb/ipykernel_launcher.py\n'
        "mkdir -p ipykernel_launcher && touch ipykernel_launcher/__init__.py\n"
        "echo x > json.py; mkdir -p asyncio && touch asyncio/__init__.py; echo x > traitlets.pyc\n"
        "ln -s helper.py zmq.py; ln helper.py sitecustomize.py\n"
        "echo x > nb/json.py; echo x > utils.py\n"  # ordinary: stay
        "echo '{}' > ipython_kernel_config.json; echo '{}' > nb/jupyter_server_config.json\n"
        "mkdir -p .ipython/profile_default/startup && echo 'x' > .ipython/profile_default/startup/0.py\n"
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json\n"
        "mkdir -p locked/.idea && chmod 000 locked\n"
    )
    await bash(registry, code)
    below = files_below(tmp_path)
    assert below >= {"nb/json.py", "utils.py", "helper.py", "asyncio", "locked"}
    for gone in (
        "ipykernel_launcher.py",
        "nb/ipykernel_launcher.py",
        "ipykernel_launcher/__init__.py",
        "json.py",
        "asyncio/__init__.py",
        "traitlets.pyc",
        "zmq.py",
        "sitecustomize.py",
        "ipython_kernel_config.json",
        "nb/jupyter_server_config.json",
        ".ipython/profile_default/startup",
        ".vscode",
        "locked/.idea",
    ):
        assert gone not in below, gone
    assert (tmp_path / "helper.py").read_text() == "x = 1\n"


async def test_existing_code_files_are_read_only_inside(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "tasks.json").write_text("{}")
    (tmp_path / "ipython_config.py").write_text("c = get_config()\n")
    (tmp_path / "target.py").write_text("safe\n")
    (tmp_path / "x.pth").symlink_to("target.py")
    code = (
        "echo evil > .vscode/tasks.json; echo evil >> ipython_config.py; rm -f ipython_config.py\n"
        "echo evil > target.py; mv target.py t2.py\n"
    )
    out = await bash(registry, code)
    assert (tmp_path / ".vscode" / "tasks.json").read_text() == "{}"
    assert (tmp_path / "ipython_config.py").read_text() == "c = get_config()\n"
    assert (tmp_path / "target.py").read_text() == "safe\n"  # what an existing .pth link points at
    assert "Read-only file system" in out.content


async def test_credential_stores_in_a_workspace_at_home_are_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / ".goat"))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-123\n")
    (tmp_path / ".netrc").write_text("machine x password NETRC-456\n")
    (tmp_path / ".goat").mkdir()
    (tmp_path / ".goat" / "keys.json").write_text('{"OPENAI_API_KEY": "sk-KEYS-789"}')
    registry = default_registry(cwd=tmp_path)
    out = await bash(registry, "cat .ssh/id_ed25519 .netrc .goat/keys.json; ls -a .ssh; grep -r KEY . ; true")
    await registry.session.tasks.stop_all()
    for secret in ("PRIVATE-KEY-123", "NETRC-456", "sk-KEYS-789"):
        assert secret not in out.content
    assert (tmp_path / ".ssh" / "id_ed25519").read_text() == "PRIVATE-KEY-123\n"


async def test_a_folder_whose_times_the_program_sets_back_is_still_checked(
    registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    await bash(registry, "true")
    await asyncio.sleep(GRACE_NS / 1e9 + 0.2)  # now the index trusts folders whose times did not change
    await bash(registry, "true")
    code = (  # each folder's times put back exactly as they were
        "touch -r sub /tmp/sub; touch -r sub/deeper /tmp/deeper\n"
        "echo 'import os' > sub/deeper/evil.pth; touch -r /tmp/deeper sub/deeper\n"
        "mkdir -p sub/new/.git; touch -r /tmp/sub sub/new sub\n"
    )
    out = await bash(registry, code)
    assert not (tmp_path / "sub" / "deeper" / "evil.pth").exists()
    assert not (tmp_path / "sub" / "new" / ".git").exists()
    assert "evil.pth" in out.content


async def test_a_kernel_started_after_the_run_does_not_run_what_the_program_planted(
    registry: Registry, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    planted = f"open({str(marker)!r}, 'w').write('ran')"
    site = f"{tmp_path}/{SITE}"
    code = (
        f'echo "{planted}" > ipykernel_launcher.py; cp ipykernel_launcher.py json.py\n'
        f'mkdir -p {site} && echo "import os; {planted}" > {site}/zz.pth\n'
    )
    await bash(registry, code)
    argv = [sys.executable, "-m", "ipykernel_launcher", "--version"]
    started = await asyncio.to_thread(subprocess.run, argv, cwd=tmp_path, capture_output=True, check=False)
    assert started.returncode == 0 and not marker.exists()
