"""Credential stores are read-protected in every mode: with the workspace at the (fake) home folder,
Read, Grep and Glob of ~/.ssh, ~/.netrc, goat's key store or kernel connection files ask every time,
no rule broader than the file allows them, and searches over home leave them out unasked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.permissions.engine import PermissionContext, evaluate, suggest_rule
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.settings import PermissionMode
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.runner import Executor

MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "bypassPermissions", "plan")
SECRET = "s3cr3t-value-1234"
STORES = [
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".config/gcloud/application_default_credentials.json",
    ".netrc",
    ".docker/config.json",
    ".kube/config",
    ".pypirc",
    ".git-credentials",
    ".npmrc",
    ".goat/keys.json",
    "runtime/kernel-1234.json",
]

FOLDER_STORES = {".ssh", ".aws", ".config/gcloud", "runtime"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GOAT_HOME", str(home / ".goat"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(home / "runtime"))
    for rel in STORES:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"token={SECRET}\n")
    (home / "notes.txt").write_text("token=public\n")
    return home


def context(home: Path, mode: PermissionMode = "default", allow: tuple[str, ...] = ()) -> PermissionContext:
    return PermissionContext(home, home=home, mode=mode, allow=allow)


@pytest.mark.parametrize("rel", STORES)
@pytest.mark.parametrize("mode", MODES)
def test_reading_a_store_asks_in_every_mode_even_with_broad_rules(
    home: Path, rel: str, mode: PermissionMode
) -> None:
    ctx = context(
        home, mode, allow=("Read", "Read(~/**)", "Read(./**)", "Grep", "Glob", f"Read(**/{Path(rel).name})")
    )
    for tool, args in [
        ("Read", {"file_path": rel}),
        ("Read", {"file_path": str(home / rel)}),
        ("Grep", {"pattern": "token", "path": str(Path(rel).parent)}),
        ("Glob", {"pattern": "*", "path": str(home / Path(rel).parent)}),
        ("Glob", {"pattern": f"{rel}", "path": str(home)}),
    ]:
        if str(Path(rel).parent) not in FOLDER_STORES and tool != "Read":
            continue  # a search of a folder holding a store is filtered instead (below)
        decision = evaluate(tool, args, "read_only", ctx)
        assert decision.behavior == "ask", (tool, args, decision)
        assert "credential store" in decision.reason
        assert suggest_rule(tool, args, ctx, "read_only") is None


@pytest.mark.parametrize("mode", ("default", "bypassPermissions", "acceptEdits"))
def test_moving_deleting_or_changing_a_store_asks(home: Path, mode: PermissionMode) -> None:
    ctx = context(home, mode, allow=("Edit", "Delete", "Move", "Write"))
    for tool, args in [
        ("Move", {"from": ".ssh/id_ed25519", "to": "stolen"}),
        ("Move", {"from": ".ssh", "to": "x"}),
        ("Move", {"from": ".config", "to": "cfg"}),  # holds gcloud's store
        ("Delete", {"path": ".aws"}),
        ("Write", {"file_path": ".ssh/authorized_keys", "content": "ssh-ed25519 AAAA attacker"}),
        ("Edit", {"file_path": ".netrc", "old_string": "a", "new_string": "b"}),
    ]:
        assert evaluate(tool, args, "mutating", ctx).behavior == "ask", (tool, args)


def test_only_a_rule_naming_the_exact_file_allows_it(home: Path) -> None:
    exact = context(home, allow=("Read(~/.netrc)",))
    assert evaluate("Read", {"file_path": ".netrc"}, "read_only", exact).behavior == "allow"
    assert evaluate("Read", {"file_path": ".pypirc"}, "read_only", exact).behavior == "ask"
    for broad in ("Read(~/.ssh/**)", "Read(~/.ssh/*)", "Read(./.ssh/id_*)", "Read(~/.ssh)", "Read(//**)"):
        ctx = context(home, "bypassPermissions", allow=(broad,))
        assert evaluate("Read", {"file_path": ".ssh/id_ed25519"}, "read_only", ctx).behavior == "ask", broad
    dont_ask = context(home, "dontAsk", allow=("Read",))
    assert evaluate("Read", {"file_path": ".netrc"}, "read_only", dont_ask).behavior == "deny"


def test_a_symlink_into_a_store_is_a_store(home: Path) -> None:
    (home / "innocent.txt").symlink_to(home / ".ssh" / "id_ed25519")
    (home / "keys").symlink_to(home / ".ssh")
    ctx = context(home, "bypassPermissions")
    assert evaluate("Read", {"file_path": "innocent.txt"}, "read_only", ctx).behavior == "ask"
    assert evaluate("Read", {"file_path": "keys/id_ed25519"}, "read_only", ctx).behavior == "ask"
    assert evaluate("Read", {"file_path": "notes.txt"}, "read_only", ctx).behavior == "allow"


def test_names_and_other_dotfiles_stay_readable(home: Path) -> None:
    ctx = context(home)
    assert evaluate("LS", {"path": ".ssh"}, "read_only", ctx).behavior == "allow"  # names only
    for rel in (".bashrc", ".config/other/settings.json", ".goat/settings.json", "sshnotes/.ssh-notes"):
        assert evaluate("Read", {"file_path": rel}, "read_only", ctx).behavior == "allow", rel


class Recorder:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(self.answer)  # type: ignore[arg-type]


async def call(home: Path, approver: Recorder | None, tool: str, args: dict[str, Any]) -> ToolOutput:
    registry = default_registry(cwd=home)
    registry.session.settings.permission_mode = "bypassPermissions"
    executor = Executor(registry, registry.session, policy=RulePolicy(approver))
    return await executor.run_one(ToolCall("c1", tool, args))


async def test_searches_of_home_leave_stores_out_unasked(home: Path) -> None:
    grep = await call(home, None, "Grep", {"pattern": "token", "path": str(home), "output_mode": "content"})
    assert "token=public" in grep.content and SECRET not in grep.content, grep.content
    assert "in credential stores" in grep.content
    glob = await call(home, None, "Glob", {"pattern": "**/*", "path": str(home)})
    assert (
        "notes.txt" in glob.content and "id_ed25519" not in glob.content and "keys.json" not in glob.content
    )
    assert "kernel-1234" not in glob.content and "credential stores" in glob.content
    only = await call(
        home,
        None,
        "Grep",
        {"pattern": "token", "path": str(home), "glob": ".netrc", "output_mode": "content"},
    )
    assert SECRET not in only.content


async def test_headless_reads_of_a_store_are_denied_and_asked_ones_run_once(home: Path) -> None:
    denied = await call(home, None, "Read", {"file_path": str(home / ".ssh" / "id_ed25519")})
    assert denied.error_code == "PERMISSION_DENIED" and SECRET not in denied.content
    approver = Recorder("allow_once")
    read = await call(home, approver, "Read", {"file_path": str(home / ".netrc")})
    assert SECRET in read.content and approver.requests[0].suggested_rule is None
    searched = await call(
        home, approver, "Grep", {"pattern": "token", "path": str(home / ".ssh"), "output_mode": "content"}
    )
    assert SECRET in searched.content  # the user approved searching inside the store itself
    assert len(approver.requests) == 2
