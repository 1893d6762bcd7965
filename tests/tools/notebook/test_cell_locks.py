"""Cells the agent may not touch: `goat:locked` / `goat:ask` ask the user in every mode, `goat:no-run`
and `goat:no-edit` are refused, rules name cells by tag. Through the real executor and policy, the
real kernel service (an in-process IPython shell) and the live notebook over a loopback comm."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

from goat_jupyter.kernel.services import KernelService
from goat_jupyter.live.comm_bridge import CommBridge
from goat_jupyter.live.select import NotebookService
from goat_jupyter.permissions.cell_tags import CellFacts, lock_guard, refusal
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, Choice, RulePolicy
from goat_jupyter.permissions.rules import parse_rule
from goat_jupyter.settings import PermissionMode
from goat_jupyter.state import SessionState
from goat_jupyter.tools import ToolCall, default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.output import ToolOutput
from goat_jupyter.tools.runner import Executor
from tests.notebook_frontend import FakeNotebookFrontend, loopback_opener, new_cell

NB = "nb.ipynb"
SPELLINGS = ["goat:no-run", "Goat:No-Run", " goat : no-run ", "GOAT:NO-RUN\t"]
LOCKS = ["goat:locked", "goat:ask", "Goat:Locked", " goat: ask ", "ｇｏａｔ：ｌｏｃｋｅｄ"]


class Approver:
    """The user at the approval prompt: answers in turn, optionally acting while the prompt is up."""

    def __init__(self, *answers: Choice, meanwhile: Callable[[], None] | None = None) -> None:
        self.answers = list(answers)
        self.meanwhile = meanwhile
        self.asked: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        if self.meanwhile is not None:
            self.meanwhile()
        return ApprovalAnswer(self.answers.pop(0) if self.answers else "deny")


class Rig:
    def __init__(
        self,
        workspace: Path,
        tags: list[str],
        mode: PermissionMode = "bypassPermissions",
        approver: Approver | None = None,
        cell_type: str = "code",
    ) -> None:
        self.marker = f"ran_{abs(hash((str(workspace), tuple(tags))))}"
        self.cells = [
            new_cell(cell_type, f"{self.marker} = True", {"tags": tags} if tags else {}),
            new_cell("code", "plain = 1"),
        ]
        self.frontend = FakeNotebookFrontend(NB, self.cells, server_root=str(workspace))
        saved = {"cells": self.cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (workspace / NB).write_text(json.dumps(saved), encoding="utf-8")  # what JupyterLab opened
        self.session = SessionState(workspace=workspace)
        self.session.settings.permission_mode = mode
        self.shell = InteractiveShell.instance()
        services = Services(
            bridge=NotebookService(lambda: CommBridge(loopback_opener(self.frontend)), notify=print),
            kernel=KernelService(self.shell),
        )
        self.approver = approver
        policy = RulePolicy(approver)
        self.executor = Executor(
            default_registry(session=self.session), self.session, policy=policy, services=services
        )

    @property
    def cell_id(self) -> str:
        return str(self.cells[0]["id"])

    async def call(self, name: str, **args: Any) -> ToolOutput:
        args.setdefault("notebook_path", NB)
        if name == "NotebookEdit":  # as the model does: read the live notebook before editing it
            await self.executor.run_one(ToolCall("r1", "Read", {"file_path": NB}))
        return await self.executor.run_one(ToolCall("c1", name, args))

    def ran(self) -> bool:
        return self.marker in self.shell.user_ns

    def source(self) -> str:
        return str(self.frontend.cells()[0]["source"])


@pytest.mark.parametrize("tag", SPELLINGS)
@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk", "default"])
@pytest.mark.parametrize("by", ["index", "id"])
async def test_no_run_is_refused_in_every_mode(
    tmp_path: Path, tag: str, mode: PermissionMode, by: str
) -> None:
    approver = Approver("allow_once")
    rig = Rig(tmp_path, ["train", tag], mode, approver)
    rig.session.settings.permissions.allow.append("RunCell")
    out = await rig.call("RunCell", cell_id="cell-0" if by == "index" else rig.cell_id)
    assert out.is_error and out.error_code == "PERMISSION_DENIED"
    assert "goat:no-run" in out.content and "in any permission mode" in out.content
    assert not rig.ran() and approver.asked == []  # refused before anyone is asked


async def test_no_run_does_not_stop_other_cells_or_edits(tmp_path: Path) -> None:
    rig = Rig(tmp_path, ["goat:no-run"])
    assert not (await rig.call("RunCell", cell_id="cell-1")).is_error
    out = await rig.call("NotebookEdit", cell_id="cell-0", new_source="x = 2")
    assert not out.is_error, out.content


@pytest.mark.parametrize("edit_mode", ["replace", "delete"])
@pytest.mark.parametrize("tag", ["goat:no-edit", "Goat : No-Edit"])
async def test_no_edit_refuses_replace_and_delete(tmp_path: Path, edit_mode: str, tag: str) -> None:
    rig = Rig(tmp_path, [tag], cell_type="markdown")
    out = await rig.call("NotebookEdit", cell_id=rig.cell_id, new_source="# gone", edit_mode=edit_mode)
    assert out.is_error and "goat:no-edit" in out.content, out.content
    assert rig.source() == f"{rig.marker} = True" and len(rig.frontend.cells()) == 2


async def test_no_edit_allows_an_insert_after_it_and_running_it(tmp_path: Path) -> None:
    rig = Rig(tmp_path, ["goat:no-edit"])
    out = await rig.call(
        "NotebookEdit", cell_id="cell-0", new_source="y = 1", edit_mode="insert", cell_type="code"
    )
    assert not out.is_error, out.content
    assert not (await rig.call("RunCell", cell_id="cell-0")).is_error and rig.ran()


@pytest.mark.parametrize("tag", LOCKS)
async def test_a_locked_cell_asks_to_run_even_in_bypass(tmp_path: Path, tag: str) -> None:
    approver = Approver("deny", "allow_once")
    rig = Rig(tmp_path, [tag], approver=approver)
    assert (await rig.call("RunCell", cell_id="cell-0")).is_error and not rig.ran()
    assert not (await rig.call("RunCell", cell_id=rig.cell_id)).is_error and rig.ran()
    assert len(approver.asked) == 2
    request = approver.asked[0]
    assert request.rules == () and request.risk == "high"  # "allow once" only
    assert "only the user may approve it" in request.reason


@pytest.mark.parametrize("edit_mode", ["replace", "delete"])
@pytest.mark.parametrize("cell_type", ["code", "markdown"])
async def test_a_locked_cell_asks_to_change_even_in_bypass(
    tmp_path: Path, edit_mode: str, cell_type: str
) -> None:
    approver = Approver("deny")
    rig = Rig(tmp_path, ["goat:locked"], approver=approver, cell_type=cell_type)
    out = await rig.call("NotebookEdit", cell_id="cell-0", new_source="changed", edit_mode=edit_mode)
    assert out.is_error and len(approver.asked) == 1
    assert rig.source() == f"{rig.marker} = True" and len(rig.frontend.cells()) == 2


async def test_an_insert_after_a_locked_cell_does_not_ask(tmp_path: Path) -> None:
    approver = Approver()
    rig = Rig(tmp_path, ["goat:locked"], approver=approver)
    out = await rig.call(
        "NotebookEdit", cell_id="cell-0", new_source="z = 1", edit_mode="insert", cell_type="code"
    )
    assert not out.is_error and approver.asked == []


async def test_allow_rules_and_session_answers_do_not_unlock(tmp_path: Path) -> None:
    approver = Approver("allow_session", "deny")
    rig = Rig(tmp_path, ["goat:locked"], "default", approver)
    rig.session.settings.permissions.allow += [
        "RunCell",
        f"RunCell({rig.marker} = True)",
        "RunCell(tag:goat:locked)",
    ]
    assert not (await rig.call("RunCell", cell_id="cell-0")).is_error
    assert (await rig.call("RunCell", cell_id="cell-0")).is_error
    assert len(approver.asked) == 2 and rig.session.session_rules == []


@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk", "default", "acceptEdits"])
async def test_headless_a_lock_is_denied_naming_the_tag(tmp_path: Path, mode: PermissionMode) -> None:
    rig = Rig(tmp_path, ["goat:ask"], mode, approver=None)
    for name, args in (
        ("RunCell", {"cell_id": "cell-0"}),
        ("NotebookEdit", {"cell_id": "cell-0", "new_source": "x"}),
    ):
        out = await rig.call(name, **args)
        assert out.is_error and "goat:ask" in out.content and "Lock for goat" in out.content, out.content
    assert not rig.ran() and rig.source() == f"{rig.marker} = True"


async def test_plan_mode_denies_a_locked_cell_without_asking(tmp_path: Path) -> None:
    approver = Approver("allow_once")
    rig = Rig(tmp_path, ["goat:locked"], "plan", approver)
    assert (await rig.call("RunCell", cell_id="cell-0")).is_error and approver.asked == []


@pytest.mark.parametrize("rule", ["RunCell(tag:train)", "RunCell(tag: Train )", "RunCell(TAG:TRAIN)"])
async def test_a_deny_tag_rule_blocks_in_bypass(tmp_path: Path, rule: str) -> None:
    rig = Rig(tmp_path, ["Train"])
    rig.session.settings.permissions.deny.append(rule)
    out = await rig.call("RunCell", cell_id="cell-0")
    assert out.is_error and "permissions.deny" in out.content and not rig.ran()
    assert not (await rig.call("RunCell", cell_id="cell-1")).is_error  # an untagged cell still runs


@pytest.mark.parametrize("rule", ["NotebookEdit(tag:db)", "Edit(tag:db)"])
async def test_an_ask_tag_rule_asks_for_edits_of_that_cell(tmp_path: Path, rule: str) -> None:
    approver = Approver("deny")
    rig = Rig(tmp_path, ["db"], approver=approver)
    rig.session.settings.permissions.ask.append(rule)
    assert (await rig.call("NotebookEdit", cell_id="cell-0", new_source="x")).is_error
    assert len(approver.asked) == 1
    assert not (await rig.call("NotebookEdit", cell_id="cell-1", new_source="y")).is_error  # no tag
    assert not (await rig.call("RunCell", cell_id="cell-0")).is_error  # an edit rule: runs unasked
    assert len(approver.asked) == 1


async def test_an_allow_tag_rule_allows_only_cells_with_that_tag(tmp_path: Path) -> None:
    approver = Approver("deny")
    rig = Rig(tmp_path, ["safe"], "default", approver)
    rig.session.settings.permissions.allow.append("RunCell(tag:safe)")
    assert not (await rig.call("RunCell", cell_id="cell-0")).is_error and rig.ran()
    assert (await rig.call("RunCell", cell_id="cell-1")).is_error and len(approver.asked) == 1


def test_tag_rules_parse_and_an_empty_tag_is_refused() -> None:
    assert parse_rule("RunCell(tag:train)").specifier == "tag:train"
    with pytest.raises(ValueError, match="names no tag"):
        parse_rule("RunCell(tag: )")


async def test_kernel_inspect_is_not_affected_by_locks(tmp_path: Path) -> None:
    rig = Rig(tmp_path, ["goat:locked", "goat:no-run"], approver=Approver())
    out = await rig.executor.run_one(ToolCall("k", "KernelInspect", {"expression": "1 + 1"}))
    assert not out.is_error and "2" in out.content and rig.approver is not None and rig.approver.asked == []


@pytest.mark.parametrize("tag", ["goat:no-run", "goat:locked"])
async def test_tags_added_while_the_user_decides_stop_the_run(tmp_path: Path, tag: str) -> None:
    rig = Rig(tmp_path, [], "default")

    def lock() -> None:
        rig.frontend.cells()[0]["metadata"]["tags"] = [tag]

    approver = Approver("allow_once", meanwhile=lock)
    rig.executor.policy = RulePolicy(approver)
    out = await rig.call("RunCell", cell_id="cell-0")
    assert out.is_error and tag in out.content and not rig.ran(), out.content


async def test_an_address_that_moves_to_another_cell_during_approval_is_refused(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [], "default")

    def insert_above() -> None:
        rig.frontend.cells().insert(0, new_cell("code", rig.cells[1]["source"].replace("plain", "other")))

    rig.executor.policy = RulePolicy(Approver("allow_once", meanwhile=insert_above))
    out = await rig.call("RunCell", cell_id="cell-0")
    assert out.is_error and "now names another cell" in out.content and not rig.ran()


async def test_a_lock_removed_while_deciding_still_runs_what_was_approved(tmp_path: Path) -> None:
    rig = Rig(tmp_path, ["goat:locked"])

    def unlock() -> None:
        rig.frontend.cells()[0]["metadata"]["tags"] = []

    rig.executor.policy = RulePolicy(Approver("allow_once", meanwhile=unlock))
    assert not (await rig.call("RunCell", cell_id="cell-0")).is_error and rig.ran()


@pytest.mark.parametrize("live", [True, False])
async def test_read_shows_tags_and_what_they_mean(tmp_path: Path, live: bool) -> None:
    rig = Rig(tmp_path, ["goat:locked", "goat:no-run", "train"])
    if not live:
        (tmp_path / NB).write_text(
            '{"cells": [{"cell_type": "code", "id": "a1", "metadata": {"tags": ["goat:locked", "goat:no-run", '
            '"train"]}, "source": "x", "outputs": [], "execution_count": null}], "metadata": {}, '
            '"nbformat": 4, "nbformat_minor": 5}'
        )
        rig.executor.services.bridge = None
    out = await rig.executor.run_one(ToolCall("r", "Read", {"file_path": NB}))
    assert 'tags="goat:locked, goat:no-run, train"' in out.content, out.content
    assert (
        "editing, deleting or running it asks the user" in out.content and "you may not run it" in out.content
    )


@pytest.mark.parametrize("mode", ["bypassPermissions", "default"])
async def test_the_cell_is_listed_once_for_the_decision_and_once_to_run(
    tmp_path: Path, mode: PermissionMode
) -> None:
    rig = Rig(tmp_path, ["goat:locked", "train"], mode, Approver("allow_once"))
    rig.session.settings.permissions.ask.append("RunCell(tag:train)")
    assert not (await rig.call("RunCell", cell_id="cell-0")).is_error
    listed = [r for r in rig.frontend.requests if r.get("op") == "list_cells"]
    assert len(listed) == 2  # the precheck (tags, source, for every rule) and the run itself


def _respelled(tag: str, data: st.DataObject) -> str:
    """The tag with each letter's case flipped at will and whitespace put anywhere."""
    pieces = [data.draw(st.sampled_from([c.lower(), c.upper()])) for c in tag]
    gaps = [data.draw(st.sampled_from(["", " ", "\t", "\n "])) for _ in range(len(tag) + 1)]
    return "".join(g + p for g, p in zip(gaps, [*pieces, ""], strict=True))


@given(st.data())
def test_every_spelling_of_a_goat_tag_holds(data: st.DataObject) -> None:
    def cell(tag: str) -> CellFacts:
        return CellFacts("cell 1 (id a)", "x", ("other", _respelled(tag, data)))

    assert refusal("run", cell("goat:no-run")) is not None
    assert refusal("edit", cell("goat:no-edit")) is not None
    assert lock_guard("edit", cell(data.draw(st.sampled_from(["goat:locked", "goat:ask"])))) is not None
    assert refusal("run", cell("goat:no-edit")) is None and lock_guard("run", cell("goat:no-run")) is None


@pytest.mark.parametrize("tag", ["goat:locked", "Goat: Ask", "goat:no-edit"])
async def test_file_tools_never_rewrite_a_notebook_that_holds_a_guarded_cell(
    tmp_path: Path, tag: str
) -> None:
    """Write, Edit, Delete and Move would reach a locked cell around NotebookEdit: refused in every mode,
    under every name of the file (a symlink, a folder that holds it)."""
    cells = [new_cell("code", "x = 1"), {**new_cell("code", "train()"), "metadata": {"tags": [tag]}}]
    notebook = tmp_path / "work" / "lesson.ipynb"
    notebook.parent.mkdir()
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (tmp_path / "alias.txt").symlink_to(notebook)
    (tmp_path / "plain.ipynb").write_text(json.dumps({"cells": [new_cell("code", "y = 2")], "metadata": {}}))
    registry = default_registry(cwd=tmp_path)
    registry.session.settings.permission_mode = "bypassPermissions"
    executor = Executor(registry, registry.session)
    before = notebook.read_bytes()

    async def call(tool: str, args: dict[str, Any]) -> ToolOutput:
        return await executor.run_one(ToolCall(f"c-{tool}-{len(args)}", tool, args))

    for spelling in ("work/lesson.ipynb", "./work/../work/lesson.ipynb", "alias.txt"):
        await call("Read", {"file_path": spelling})
        attempts = [
            ("Write", {"file_path": spelling, "content": "{}"}),
            ("Edit", {"file_path": spelling, "old_string": "train()", "new_string": "pass"}),
            ("Delete", {"path": spelling}),
            ("Move", {"from": spelling, "to": "moved.ipynb"}),
            ("Move", {"from": "plain.ipynb", "to": spelling, "overwrite": True}),
        ]
        for tool, args in attempts:
            out = await call(tool, args)
            assert out.is_error and "cells the user guards" in out.content, (tool, spelling, out.content)
    out = await call("Delete", {"path": "work", "recursive": True})
    assert out.is_error and "lesson.ipynb cell 2" in out.content
    assert notebook.read_bytes() == before and (tmp_path / "plain.ipynb").exists()
    # A notebook without guarded cells stays a file like any other.
    await call("Read", {"file_path": "plain.ipynb"})
    assert not (await call("Write", {"file_path": "plain.ipynb", "content": "{}"})).is_error


async def test_a_runcell_approval_names_the_cell_by_its_number_not_its_id(tmp_path: Path) -> None:
    """Issue 33 point 13: people count cells; the id stays the model's (and the tool's) business."""
    approver = Approver("allow_once")
    rig = Rig(tmp_path, ["goat:locked"], approver=approver)
    assert not (await rig.call("RunCell", cell_id=rig.cell_id)).is_error
    [request] = approver.asked
    assert request.title == "Run cell 1" and rig.cell_id not in request.title
    assert request.args["cell_id"] == rig.cell_id
