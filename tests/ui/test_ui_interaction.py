"""Approval, question and plan widgets (real ipywidgets, no kernel), previews, headless mode, detection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat
import pytest

from goat_jupyter.agent.session import Session
from goat_jupyter.errors import NotAvailableError
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.tools import default_registry
from goat_jupyter.tools.base import ToolOutput
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.conversation.ask_user_question import AskUserQuestionInput
from goat_jupyter.tools.conversation.exit_plan_mode import ExitPlanModeInput
from goat_jupyter.tools.runner import Executor, ToolCall
from goat_jupyter.ui import CellRenderer, comm_idle, style
from goat_jupyter.ui.interaction import (
    CellInteraction,
    HeadlessInteraction,
    detect_interaction,
    make_interaction,
)
from goat_jupyter.ui.preview import preview_html


@dataclass
class Display:
    """What one display in the fake cell showed: the object first, then each update."""

    items: list[Any]

    @property
    def final(self) -> Any:
        return self.items[-1]


@dataclass
class FakeCell:
    """Stands in for IPython's display behind the real CellRenderer: records displays and updates."""

    displays: list[Display] = field(default_factory=lambda: list[Display]())

    def __call__(
        self,
        obj: Any,
        /,
        *,
        raw: bool = False,
        display_id: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> Handle:
        self.displays.append(Display([obj]))
        return Handle(self.displays[-1])

    def widgets(self) -> list[Any]:
        """The widgets shown (unwrapped from the view that adds a text fallback)."""
        return [d.items[0].widget for d in self.displays if hasattr(d.items[0], "widget")]


@dataclass
class Handle:
    target: Display

    def update(self, obj: Any, /, *, raw: bool = False, metadata: dict[str, Any] | None = None) -> None:
        assert raw
        self.target.items.append(obj)


def walk(widget: Any) -> list[Any]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found.extend(walk(child))
    return found


def find(view: Any, kind: str, **state: Any) -> Any:
    for widget in walk(view):
        if type(widget).__name__ == kind and all(getattr(widget, k) == v for k, v in state.items()):
            return widget
    raise AssertionError(f"no {kind} {state} in the view")


def html_text(view: Any) -> str:
    return "\n".join(str(w.value) for w in walk(view) if type(w).__name__ == "HTML")


async def until(predicate: Callable[[], bool]) -> None:
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.002)
    raise AssertionError("condition not met")


def cell_interaction(tmp_path: Path) -> tuple[FakeCell, CellInteraction]:
    cell = FakeCell()
    renderer = CellRenderer(display=cell)
    return cell, CellInteraction(renderer.show, lambda: tmp_path)


def bash_request(rule: str | None = "Bash(touch:*)") -> ApprovalRequest:
    return ApprovalRequest(
        "Bash", {"command": "touch made.txt"}, "touch made.txt", "command", rule, "Bash asks."
    )


async def answer_with(
    tmp_path: Path, request: ApprovalRequest, act: Callable[[Any], None]
) -> tuple[ApprovalAnswer, FakeCell]:
    cell, ui = cell_interaction(tmp_path)
    pending = asyncio.ensure_future(ui.request(request))
    await until(lambda: bool(cell.widgets()))
    act(cell.widgets()[0])
    return await asyncio.wait_for(pending, 5), cell


async def test_allow_once_answers_and_leaves_a_plain_record(tmp_path: Path) -> None:
    cell, ui = cell_interaction(tmp_path)
    pending = asyncio.ensure_future(ui.request(bash_request()))
    await until(lambda: bool(cell.widgets()))
    bundle, metadata = cell.displays[0].items[0]._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "Bash: touch made.txt" in bundle["text/plain"] and "GOAT_INTERACTIVE=0" in bundle["text/plain"]
    # Without the widget (nbconvert, a reopened notebook) the fallback still shows the command.
    assert "touch made.txt" in bundle["text/html"] and "HBox(" not in bundle["text/html"]
    # The model id lets a reloaded tab put the restored widget where the prompt was (kernel/live.py).
    assert metadata == {"goat": {"widget": "prompt", "model": cell.widgets()[0].model_id}}
    find(cell.widgets()[0], "Button", description="Allow once").click()
    answer = await asyncio.wait_for(pending, 5)
    assert answer == ApprovalAnswer("allow_once")
    record = cell.displays[0].final
    assert "Allowed once by the user" in record["text/plain"] and "touch made.txt" in record["text/plain"]
    assert "Allowed once" in record["text/html"]
    assert "<details>" in record["text/html"] and "$ touch made.txt" in record["text/html"]
    assert all(w.comm is None for w in walk(cell.widgets()[0])), "widgets are closed after the answer"


async def test_deny_sends_the_feedback(tmp_path: Path) -> None:
    def deny(view: Any) -> None:
        find(view, "Text").value = "use mkdir instead"
        find(view, "Button", description="Deny").click()

    answer, cell = await answer_with(tmp_path, bash_request(), deny)
    assert answer == ApprovalAnswer("deny", "use mkdir instead")
    assert "Denied by the user" in cell.displays[0].final["text/plain"]
    assert "use mkdir instead" in cell.displays[0].final["text/plain"]


async def test_session_and_always_buttons_need_a_rule(tmp_path: Path) -> None:
    answer, cell = await answer_with(
        tmp_path, bash_request(), lambda view: find(view, "Button", description="Always allow").click()
    )
    assert answer.choice == "always_allow"
    assert "Bash(touch:*) saved to .goat/settings.json" in cell.displays[0].final["text/plain"]

    answer, _ = await answer_with(
        tmp_path, bash_request(), lambda view: find(view, "Button", description="Allow for session").click()
    )
    assert answer.choice == "allow_session"

    def labels(view: Any) -> None:
        shown = [w.description for w in walk(view) if type(w).__name__ == "Button"]
        assert shown[:2] == ["Allow once", "Deny"] and "Always allow" not in shown
        find(view, "Button", description="Deny").click()

    await answer_with(tmp_path, bash_request(rule=None), labels)


async def test_bash_prompts_show_each_rule_next_to_the_buttons(tmp_path: Path) -> None:
    rules = ("Bash(git status:*)", "Bash(git diff:*)")
    request = replace(bash_request(", ".join(rules)), suggested_rules=rules)

    def session(view: Any) -> None:
        text = html_text(view)
        assert "<code>Bash(git status:*)</code>, <code>Bash(git diff:*)</code>" in text
        find(view, "Button", description="Allow for session").click()

    answer, cell = await answer_with(tmp_path, request, session)
    assert answer.choice == "allow_session"
    final = cell.displays[0].final["text/plain"]
    assert "Allowed for this session (the rules Bash(git status:*), Bash(git diff:*))" in final


async def test_code_prompts_say_the_rule_covers_that_exact_code_only(tmp_path: Path) -> None:
    request = ApprovalRequest(
        "KernelInspect",
        {"expression": "1+1"},
        "Inspect 1+1",
        "code",
        "KernelInspect(1+1)",
        "KernelInspect evaluates an expression in the kernel.",
        suggested_rules=("KernelInspect(1+1)",),
    )

    def session(view: Any) -> None:
        text = html_text(view)
        assert "this exact expression only" in text and "any other code still asks" in text
        find(view, "Button", description="Allow for session").click()

    answer, cell = await answer_with(tmp_path, request, session)
    assert answer.choice == "allow_session"
    assert "(the rule KernelInspect(1+1))" in cell.displays[0].final["text/plain"]


async def test_edited_arguments_need_valid_json(tmp_path: Path) -> None:
    def edit(view: Any) -> None:
        find(view, "Button", description="Edit arguments").click()
        editor = find(view, "Textarea")
        assert json.loads(editor.value) == {"command": "touch made.txt"}
        editor.value = "{not json"
        find(view, "Button", description="Run edited").click()
        assert "Not valid JSON" in html_text(view)
        editor.value = "[1, 2]"
        find(view, "Button", description="Run edited").click()
        editor.value = '{"command": "touch other.txt"}'
        find(view, "Button", description="Run edited").click()

    answer, cell = await answer_with(tmp_path, bash_request(), edit)
    assert answer == ApprovalAnswer("allow_once", updated_input={"command": "touch other.txt"})
    assert "edited arguments" in cell.displays[0].final["text/plain"]


async def test_invalid_json_shows_an_inline_error_and_waits(tmp_path: Path) -> None:
    cell, ui = cell_interaction(tmp_path)
    pending = asyncio.ensure_future(ui.request(bash_request()))
    await until(lambda: bool(cell.widgets()))
    view = cell.widgets()[0]
    find(view, "Textarea").value = "{oops"
    find(view, "Button", description="Run edited").click()
    await asyncio.sleep(0.01)
    assert not pending.done()
    assert "Not valid JSON" in html_text(view)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending


async def test_cancelling_a_pending_approval_disables_it_and_records_cancelled(tmp_path: Path) -> None:
    cell, ui = cell_interaction(tmp_path)
    pending = asyncio.ensure_future(ui.request(bash_request()))
    await until(lambda: bool(cell.widgets()))
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    view = cell.widgets()[0]
    assert find(view, "Button", description="Allow once").disabled
    assert "cancelled" in cell.displays[0].final["text/plain"]


async def test_edit_preview_is_a_coloured_diff_and_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    html = await preview_html(
        "Edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}, tmp_path
    )
    assert "-beta" in html and "+BETA" in html and style.DIFF_ADD in html and style.DIFF_DEL in html
    assert target.read_text() == "alpha\nbeta\ngamma\n"
    missing = await preview_html(
        "Edit", {"file_path": "notes.txt", "old_string": "zeta", "new_string": "x"}, tmp_path
    )
    assert "was not found" in missing


async def test_write_and_notebook_previews(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("one\n")
    overwrite = await preview_html("Write", {"file_path": "old.txt", "content": "two\n"}, tmp_path)
    assert "-one" in overwrite and "+two" in overwrite
    created = await preview_html("Write", {"file_path": "new.txt", "content": "fresh\n"}, tmp_path)
    assert "+fresh" in created and not (tmp_path / "new.txt").exists()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="abc")])
    nbformat.write(nb, tmp_path / "n.ipynb")
    args = {"notebook_path": "n.ipynb", "cell_id": "abc", "new_source": "x = 2"}
    html = await preview_html("NotebookEdit", args, tmp_path)
    assert "-x = 1" in html and "+x = 2" in html and "cell 1 of 1 (id abc)" in html
    insert = {**args, "edit_mode": "insert", "cell_type": "markdown", "new_source": "# Title"}
    assert "+# Title" in await preview_html("NotebookEdit", insert, tmp_path)
    delete = {**args, "cell_id": "cell-0", "edit_mode": "delete"}
    assert "-x = 1" in await preview_html("NotebookEdit", delete, tmp_path)
    assert nbformat.read(tmp_path / "n.ipynb", as_version=4).cells[0].source == "x = 1"


async def test_command_and_url_previews() -> None:
    bash = await preview_html("Bash", {"command": "rm -rf build", "description": "clean"}, Path("/"))
    assert "$ rm -rf build" in bash and "clean" in bash
    fetch = await preview_html("WebFetch", {"url": "https://example.org/a?b=1", "method": "POST"}, Path("/"))
    assert "POST" in fetch and 'href="https://example.org/a?b=1"' in fetch
    assert "<summary" in fetch, "the full arguments are always there, folded"


def questions(multi: bool = False) -> AskUserQuestionInput:
    return AskUserQuestionInput.model_validate(
        {
            "questions": [
                {
                    "question": "Which database?",
                    "header": "DB",
                    "options": [
                        {"label": "Postgres", "description": "relational"},
                        {"label": "SQLite", "description": "a file"},
                    ],
                },
                {
                    "question": "Which features?",
                    "header": "Features",
                    "multiSelect": multi,
                    "options": [
                        {"label": "Auth", "description": "logins"},
                        {"label": "Search", "description": "full text"},
                        {"label": "Export", "description": "CSV"},
                    ],
                },
            ]
        }
    )


async def ask(
    tmp_path: Path, args: AskUserQuestionInput, act: Callable[[Any], None]
) -> tuple[ToolOutput, FakeCell]:
    cell, ui = cell_interaction(tmp_path)
    session = Session(workspace=tmp_path, persist=False)
    from goat_jupyter.tools.base import ToolContext

    pending = asyncio.ensure_future(ui.ask_questions(args, ToolContext(session)))
    await until(lambda: bool(cell.widgets()))
    act(cell.widgets()[0])
    return await asyncio.wait_for(pending, 5), cell


async def test_single_and_multi_select_answers(tmp_path: Path) -> None:
    def answer(view: Any) -> None:
        find(view, "Button", description="SQLite").click()
        find(view, "Button", description="Submit").click()  # nothing ticked: an inline error, no answer
        assert "Tick at least one" in html_text(view)
        find(view, "Checkbox", description="Auth").value = True
        find(view, "Checkbox", description="Export").value = True
        find(view, "Button", description="Submit").click()

    output, cell = await ask(tmp_path, questions(multi=True), answer)
    assert '"Which database?" → SQLite' in output.content
    assert '"Which features?" → Auth, Export' in output.content
    assert output.metadata["answers"] == {"Which database?": "SQLite", "Which features?": "Auth, Export"}
    assert "DB: SQLite; Features: Auth, Export" in cell.displays[0].final["text/plain"]


async def test_other_answer_and_known_answers(tmp_path: Path) -> None:
    args = questions()
    args.answers = {"Which database?": "Postgres"}

    def answer(view: Any) -> None:
        assert not [w for w in walk(view) if getattr(w, "description", "") == "SQLite"], "already answered"
        find(view, "Text").value = "  Billing  "
        find(view, "Button", description="Answer").click()

    output, _ = await ask(tmp_path, args, answer)
    assert '"Which database?" → Postgres' in output.content
    assert '"Which features?" → Billing' in output.content


async def review(tmp_path: Path, act: Callable[[Any], None]) -> tuple[ToolOutput, Session, FakeCell]:
    from goat_jupyter.tools.base import ToolContext

    cell, ui = cell_interaction(tmp_path)
    session = Session(workspace=tmp_path, persist=False)
    session.settings.permission_mode = "plan"
    plan = ExitPlanModeInput(plan="# Plan\n1. read\n2. <b>write</b>")
    pending = asyncio.ensure_future(ui.review_plan(plan, ToolContext(session)))
    await until(lambda: bool(cell.widgets()))
    act(cell.widgets()[0])
    return await asyncio.wait_for(pending, 5), session, cell


async def test_plan_approve_switches_to_default_mode(tmp_path: Path) -> None:
    output, session, cell = await review(tmp_path, lambda v: find(v, "Button", description="Approve").click())
    assert session.settings.permission_mode == "default"
    assert "approved" in output.content and output.metadata["approved"] is True
    markdown = cell.displays[0].final._repr_mimebundle_()["text/markdown"]
    assert "# Plan" in markdown and "<b>" not in markdown, "the plan is shown as safe Markdown"
    assert "mode switched to default" in cell.displays[1].final["text/plain"]


async def test_plan_approval_offers_to_continue_with_edits_accepted(tmp_path: Path) -> None:
    def accept(view: Any) -> None:
        find(view, "Button", description="Approve, auto-accept edits").click()

    output, session, cell = await review(tmp_path, accept)
    assert session.settings.permission_mode == "acceptEdits"
    assert "acceptEdits" in output.content and output.metadata["mode"] == "acceptEdits"
    assert "mode switched to acceptEdits" in cell.displays[1].final["text/plain"]


async def test_keep_planning_keeps_plan_mode_and_passes_feedback(tmp_path: Path) -> None:
    def keep(view: Any) -> None:
        find(view, "Text").value = "add tests first"
        find(view, "Button", description="Keep planning").click()

    output, session, _ = await review(tmp_path, keep)
    assert session.settings.permission_mode == "plan"
    assert "keep planning" in output.content and "add tests first" in output.content


async def test_executor_with_cell_approvals_runs_only_after_allow(tmp_path: Path) -> None:
    cell, ui = cell_interaction(tmp_path)
    session = Session(workspace=tmp_path, persist=False)
    executor = Executor(default_registry(session=session), session, policy=RulePolicy(ui.approver))
    call = ToolCall("c1", "Bash", {"command": "echo ran > out.txt"})
    pending = asyncio.ensure_future(executor.run_one(call))
    await until(lambda: bool(cell.widgets()))
    assert not (tmp_path / "out.txt").exists()
    find(cell.widgets()[0], "Button", description="Allow once").click()
    output = await asyncio.wait_for(pending, 10)
    assert not output.is_error, output.content
    assert (tmp_path / "out.txt").read_text() == "ran\n"


async def test_headless_denies_at_once_and_names_the_setting(tmp_path: Path) -> None:
    session = Session(workspace=tmp_path, persist=False)
    session.settings.permission_mode = "plan"
    headless = HeadlessInteraction("nbclient cannot answer")
    executor = Executor(
        default_registry(session=session),
        session,
        policy=RulePolicy(headless.approver),
        services=Services(ui=headless),
    )
    plan = await executor.run_one(ToolCall("p", "ExitPlanMode", {"plan": "do it"}))
    assert plan.is_error and "not approved" in plan.content and "nbclient cannot answer" in plan.content
    assert session.settings.permission_mode == "plan"
    session.settings.permission_mode = "default"
    bash = await executor.run_one(ToolCall("b", "Bash", {"command": "touch x"}))
    assert bash.is_error and bash.error_code == "PERMISSION_DENIED"
    assert "permissions.allow" in bash.content and "--mode" in bash.content
    assert not (tmp_path / "x").exists()
    asked = await executor.run_one(
        ToolCall("q", "AskUserQuestion", questions().model_dump(exclude_none=True))
    )
    assert asked.is_error and "assumptions" in asked.content


async def test_headless_interaction_raises_not_available(tmp_path: Path) -> None:
    from goat_jupyter.tools.base import ToolContext

    headless = HeadlessInteraction("no frontend")
    with pytest.raises(NotAvailableError):
        await headless.ask_questions(questions(), ToolContext(Session(workspace=tmp_path, persist=False)))
    denied = await headless.request(bash_request())
    assert denied.choice == "deny"


class FakeKernel:
    """The two things detection and the idle fix read from ipykernel: the parent and the handlers."""

    def __init__(self, allow_stdin: bool | None) -> None:
        content = {} if allow_stdin is None else {"allow_stdin": allow_stdin}
        self.parent: dict[str, Any] = {"header": {"msg_id": "exec-1"}, "content": content}
        self.published: list[tuple[str, str]] = []
        self.handled: list[str] = []

        async def execute_request(stream: Any, ident: Any, parent: dict[str, Any]) -> None:
            await self.gate.wait()

        def comm_msg(stream: Any, ident: Any, msg: dict[str, Any]) -> None:
            self.handled.append(msg["header"]["msg_id"])

        self.gate = asyncio.Event()
        self.shell_handlers: dict[str, Any] = {"execute_request": execute_request, "comm_msg": comm_msg}

    def get_parent(self, channel: str) -> dict[str, Any]:
        return self.parent

    def _publish_status(self, status: str, channel: str, parent: dict[str, Any]) -> None:
        self.published.append((status, parent["header"]["msg_id"]))


def test_detection_follows_allow_stdin_and_the_override() -> None:
    assert detect_interaction(FakeKernel(True), {}).kind == "widgets"
    headless = detect_interaction(FakeKernel(False), {})
    assert headless.kind == "headless" and "nbclient" in headless.why
    assert detect_interaction(FakeKernel(None), {}).kind == "headless"
    assert detect_interaction(FakeKernel(False), {"GOAT_INTERACTIVE": "1"}).kind == "widgets"
    assert detect_interaction(FakeKernel(True), {"GOAT_INTERACTIVE": "off"}).kind == "headless"
    assert detect_interaction(None, {}, terminal=True).kind == "stdin"
    assert detect_interaction(None, {}, terminal=False).kind == "headless"


def test_make_interaction_needs_a_cell_to_show_widgets(tmp_path: Path) -> None:
    widgets = detect_interaction(FakeKernel(True), {})
    assert isinstance(
        make_interaction(CellRenderer(display=FakeCell()).show, lambda: tmp_path, widgets), CellInteraction
    )
    plain = make_interaction(None, lambda: tmp_path, widgets)
    assert isinstance(plain, HeadlessInteraction) and plain.approver is None
    stdin = make_interaction(None, lambda: tmp_path, detect_interaction(None, {}, terminal=True))
    assert isinstance(stdin, HeadlessInteraction) and stdin.approver is not None


async def test_idle_fix_publishes_only_during_a_cell_and_installs_once() -> None:
    kernel = FakeKernel(True)
    assert comm_idle.install(kernel) and not comm_idle.install(kernel)
    assert comm_idle.is_installed(kernel)
    handlers = kernel.shell_handlers
    handlers["comm_msg"](None, None, {"header": {"msg_id": "c0"}})
    assert kernel.published == [], "outside a cell ipykernel publishes the status itself"
    cell = asyncio.ensure_future(handlers["execute_request"](None, None, kernel.parent))
    await asyncio.sleep(0)
    handlers["comm_msg"](None, None, {"header": {"msg_id": "c1"}})
    assert kernel.handled == ["c0", "c1"]
    assert kernel.published == [("idle", "c1"), ("busy", "exec-1")]
    kernel.gate.set()
    await cell
    handlers["comm_msg"](None, None, {"header": {"msg_id": "c2"}})
    assert kernel.published == [("idle", "c1"), ("busy", "exec-1")]
    assert not comm_idle.install(None)


async def test_answer_resolves_from_another_thread() -> None:
    answer: comm_idle.Answer[str] = comm_idle.Answer()
    await asyncio.to_thread(answer.set, "clicked")
    await asyncio.to_thread(answer.set, "second click is ignored")
    assert await asyncio.wait_for(answer.wait(), 5) == "clicked"


async def test_the_prompt_and_records_name_the_call_once(tmp_path: Path) -> None:
    """Issue 33 point 13: the header does not repeat the command the preview shows, and records do
    not repeat a tool name the title already starts with."""
    from goat_jupyter.ui.approval import answer_record, subject

    edit = ApprovalRequest("Edit", {"file_path": "analysis.py"}, "Edit analysis.py", "diff", None, "")
    assert subject(edit) == "Edit analysis.py"
    assert subject(bash_request()) == "Bash: touch made.txt"
    assert subject(replace(edit, title="Editor notes")) == "Edit: Editor notes", "a word, not a prefix"
    denied = answer_record(edit, ApprovalAnswer("deny"))["text/plain"]
    assert "Denied by the user: Edit analysis.py" in denied and "Edit: Edit" not in denied

    def header(view: Any) -> None:
        text = html_text(view)
        assert "</b> wants permission<div" in text, "the preview below shows the command: not twice"
        assert "$ touch made.txt" in text
        find(view, "Button", description="Deny").click()

    described = replace(bash_request(), title="Create the marker file")

    def header_with_description(view: Any) -> None:
        text = html_text(view)
        assert "</b> wants permission: Create the marker file<div" in text and "$ touch made.txt" in text
        find(view, "Button", description="Deny").click()

    await answer_with(tmp_path, bash_request(), header)
    await answer_with(tmp_path, described, header_with_description)
