"""Files that run code later (git folders, .pth, start-up hooks, shadowing modules, IPython's and
Jupyter's configuration) are protected like configuration: every file tool asks, in every mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.config.code_files import candidates, code_file_reason, entry_reason, name_key
from goat_jupyter.config.kernel_modules import KERNEL_START_MODULES
from goat_jupyter.permissions.engine import PermissionContext, evaluate, suggest_rule
from goat_jupyter.permissions.policy import RulePolicy
from goat_jupyter.settings import PermissionMode
from goat_jupyter.tools import ToolCall, default_registry
from goat_jupyter.tools.runner import Executor

MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "bypassPermissions")

CODE_FILES = [
    ".git",
    ".git/HEAD",
    "sub/.git",
    "sub/.git/config",
    "deep/er/.Git/hooks/pre-commit",
    "vendor/lib/.git",  # a .git file (gitdir: pointer) counts too
    ".vscode/tasks.json",
    "sub/.idea/workspace.xml",
    ".venv/lib/python3.11/site-packages/evil.pth",
    ".venv/lib/python3.11/site-packages/EVIL.PTH",
    ".venv/lib/python3.11/site-packages/sitecustomize.py",
    "usercustomize.py",
    "sub/sitecustomize/__init__.py",
    "ipykernel_launcher.py",
    "notebooks/ipykernel_launcher.py",
    "ipykernel_launcher.pyc",
    "ipykernel_launcher/__init__.py",
    "json.py",
    "asyncio/__init__.py",
    "IPython/__init__.py",
    "traitlets.py",
    "zmq.cpython-311-x86_64-linux-gnu.so",
    "tornado/__init__.pyc",
    "ipython_config.py",
    "ipython_config.json",
    "ipython_kernel_config.json",
    "conf/ipython_kernel_config.py",
    "jupyter_server_config.json",
    "jupyter_notebook_config.py",
    "jupyter_config.json",
    ".venv/etc/jupyter/jupyter_server_config.d/evil.json",
    ".ipython/profile_default/startup/00-run.py",
    "ipy/profile_work/startup",
    ".venv/share/jupyter/kernels/python3/kernel.json",
]
ORDINARY = [
    "utils.py",
    "notebook.ipynb",
    "sub/json.py",  # only the workspace's top level shadows a kernel's module
    "json/data.csv",  # a folder without __init__ does not shadow json
    "src/mypkg/types.py",
    "git/notes.txt",
    ".gitignore",
    ".github/workflows/ci.yml",
    "startup/run.py",
    "kernel.json",
    "data.pth.csv",
    "analysis/config.py",
]


def context(ws: Path, mode: PermissionMode = "default", allow: tuple[str, ...] = ()) -> PermissionContext:
    return PermissionContext(ws, home=ws.parent / "home", mode=mode, allow=allow)


@pytest.mark.parametrize("rel", CODE_FILES)
@pytest.mark.parametrize("mode", MODES)
def test_every_file_tool_asks_for_a_code_file_in_every_mode(
    rel: str, mode: PermissionMode, tmp_path: Path
) -> None:
    ctx = context(tmp_path, mode, allow=("Edit", "Write", "Delete", "Move", "NotebookEdit", "Edit(./**)"))
    calls = [
        ("Write", {"file_path": rel, "content": "import os"}),
        ("Edit", {"file_path": rel, "old_string": "a", "new_string": "b"}),
        ("NotebookEdit", {"notebook_path": rel, "new_source": "x"}),
        ("Delete", {"path": rel}),
        ("Move", {"from": "harmless.py", "to": rel}),
        ("Move", {"from": rel, "to": "elsewhere"}),
    ]
    for tool, args in calls:
        decision = evaluate(tool, args, "mutating", ctx)
        assert decision.behavior == "ask", (tool, rel, decision)
        assert suggest_rule(tool, args, ctx, "mutating") is None  # only "allow once"


@pytest.mark.parametrize("rel", ORDINARY)
def test_ordinary_files_stay_ordinary(rel: str, tmp_path: Path) -> None:
    decision = evaluate(
        "Write", {"file_path": rel, "content": "x"}, "mutating", context(tmp_path, "acceptEdits")
    )
    assert decision.behavior == "allow", decision


def test_the_reason_says_the_file_would_run_at_the_next_kernel_start(tmp_path: Path) -> None:
    reason = evaluate(
        "Write", {"file_path": "ipykernel_launcher.py", "content": ""}, "mutating", context(tmp_path)
    ).reason
    assert "would run the next time a kernel starts here" in reason
    git = evaluate(
        "Write", {"file_path": "sub/.git/config", "content": ""}, "mutating", context(tmp_path)
    ).reason
    assert "git repository folder" in git


def test_headless_dont_ask_denies_even_with_broad_allow_rules(tmp_path: Path) -> None:
    ctx = context(tmp_path, "dontAsk", allow=("Write", "Edit(./**)"))
    decision = evaluate("Write", {"file_path": ".venv/x.pth", "content": ""}, "mutating", ctx)
    assert decision.behavior == "deny"


def test_moving_a_folder_that_holds_a_git_folder_or_becomes_a_shadowing_package_asks(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.csv").write_text("")
    ctx = context(tmp_path, "bypassPermissions")
    assert evaluate("Move", {"from": "repo", "to": "repo2"}, "mutating", ctx).behavior == "ask"
    assert evaluate("Delete", {"path": "repo"}, "mutating", ctx).behavior == "ask"
    assert evaluate("Move", {"from": "pkg", "to": "json"}, "mutating", ctx).behavior == "ask"
    assert (
        evaluate("Move", {"from": "pkg", "to": "sub/ipykernel_launcher"}, "mutating", ctx).behavior == "ask"
    )
    assert evaluate("Move", {"from": "data", "to": "json"}, "mutating", ctx).behavior == "allow"
    assert evaluate("Move", {"from": "pkg", "to": "mypkg"}, "mutating", ctx).behavior == "allow"


def test_a_symlink_to_a_code_file_is_protected(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "innocent").symlink_to(tmp_path / ".git")
    ctx = context(tmp_path, "bypassPermissions")
    assert (
        evaluate("Write", {"file_path": "innocent/config", "content": ""}, "mutating", ctx).behavior == "ask"
    )


def test_every_measured_kernel_module_shadows_at_the_top_level_only() -> None:
    assert {
        "ipykernel_launcher",
        "ipykernel",
        "IPython",
        "traitlets",
        "jupyter_client",
        "zmq",
        "tornado",
    } <= (KERNEL_START_MODULES)
    assert {"json", "asyncio"} <= KERNEL_START_MODULES and "sys" not in KERNEL_START_MODULES  # built in
    for module in sorted(KERNEL_START_MODULES):
        assert code_file_reason([f"{module}.py"]) is not None, module
        assert code_file_reason([module, "__init__.py"]) is not None, module


@given(st.lists(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True), min_size=1, max_size=4))
def test_names_nobody_runs_are_never_code_files(parts: list[str]) -> None:
    parts = [p for p in parts if p.casefold() not in {"startup", "kernels"}] or ["x"]
    if parts[0] in {m.casefold() for m in KERNEL_START_MODULES}:
        parts = ["my" + parts[0], *parts[1:]]
    assert code_file_reason([*parts[:-1], parts[-1] + ".txt"]) is None


async def test_a_hostile_model_in_bypass_mode_cannot_plant_a_kernel_start_file_headless(
    tmp_path: Path,
) -> None:
    registry = default_registry(cwd=tmp_path)
    registry.session.settings.permission_mode = "bypassPermissions"
    registry.session.settings.permissions.allow.extend(["Write", "Edit(./**)", "Move"])
    executor = Executor(registry, registry.session, policy=RulePolicy(None))
    (tmp_path / "innocent.py").write_text("open('PWNED', 'w')\n")
    attempts = [
        ("Write", {"file_path": "ipykernel_launcher.py", "content": "open('PWNED', 'w')\n"}),
        ("Write", {"file_path": "sub/.git/config", "content": "[core]\n\tfsmonitor = touch PWNED\n"}),
        ("Write", {"file_path": ".venv/lib/python3.11/site-packages/x.pth", "content": "import os\n"}),
        (
            "Write",
            {"file_path": "ipython_kernel_config.json", "content": '{"IPKernelApp": {"exec_lines": []}}'},
        ),
        ("Write", {"file_path": ".vscode/tasks.json", "content": "{}"}),
        ("Move", {"from": "innocent.py", "to": "json.py"}),
    ]
    for index, (tool, args) in enumerate(attempts):
        out = await executor.run_one(ToolCall(f"c{index}", tool, args))
        assert out.error_code == "PERMISSION_DENIED", (tool, args, out.content)
        assert "Only the user may approve" in out.content and "do not retry" in out.content
        assert (
            "would run the next time a kernel starts here" in out.content
            or "git" in out.content
            or ("editor" in out.content)
        )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".goat") == ["innocent.py"]


SPELLINGS = [
    ".git",
    ".vscode",
    "x.pth",
    "sitecustomize.py",
    "ipykernel_launcher.py",
    "json.py",
    "ipython_config.json",
]


@pytest.mark.parametrize("name", SPELLINGS)
def test_other_spellings_of_a_code_file_are_code_files(name: str) -> None:
    for spelled in (name.upper(), name + ".", name + " ", name.title(), name + ". ."):
        assert code_file_reason([spelled]) is not None, spelled
        assert candidates([spelled], top_level=True) == [spelled], spelled


_piece = st.sampled_from(
    [
        *SPELLINGS,
        "__init__.py",
        "startup",
        "profile_x",
        "kernels",
        "k",
        "kernel.json",
        "a",
        "B.PY",
        ".",
        " ",
        "_",
    ]
)
_part = st.lists(_piece, min_size=1, max_size=3).map("".join).filter(lambda p: p not in (".", ".."))


@given(st.lists(st.lists(_part, min_size=1, max_size=4).map("/".join), min_size=1, max_size=6), st.booleans())
def test_the_quick_filter_never_misses_what_the_precise_check_flags(names: list[str], top: bool) -> None:
    """`candidates` (one regex pass over a folder's names) is a superset of `entry_reason` (each name)."""
    base = [] if top else ["sub"]
    found = set(candidates(names, top_level=top))
    for name in names:
        keys = [*base, *(name_key(part) for part in name.split("/"))]
        if entry_reason(keys) is not None:
            assert name in found, name
