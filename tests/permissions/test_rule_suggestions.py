"""What "Allow for session" / "Always allow" save (issue 20, findings 5 and Build 4).

Bash: the program and its subcommand as a prefix, one rule per program, nothing for lines the
analysis is unsure of, never a prefix that is an interpreter alone. RunCell and KernelInspect: the
exact code, never the bare tool. Each rule is then attacked: other spellings, wrappers, separators.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.kernel.services import KernelService
from goat_jupyter.permissions.engine import PermissionContext, evaluate, suggest_rules
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.permissions.rules import parse_rule
from goat_jupyter.permissions.shell import analyse
from goat_jupyter.permissions.shell.wrappers import SHELLS
from goat_jupyter.settings import load_settings
from goat_jupyter.state import SessionState
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor
from tests.permissions.test_permissions_shell_fuzz import line

BOUNDED = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Programs that run whatever their arguments say: a rule naming only them would allow anything.
RUNNERS = {*SHELLS, "python", "python3", "node", "perl", "ruby", "php", "env", "sudo", "xargs", "eval"}
RUNNERS |= {"exec", "command", "nice", "timeout", "find", "sed", "awk", "npx", "uv", "npm", "git", "rm"}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOAT_HOME", str(tmp_path / "goat_home"))
    root = tmp_path / "ws"
    root.mkdir()
    return root


def bash_rules(command: str) -> tuple[str, ...]:
    return suggest_rules("Bash", {"command": command}, PermissionContext(Path("/nowhere")), "mutating")


def decide(command: str, allow: list[str], deny: list[str] | None = None) -> str:
    context = PermissionContext(Path("/nowhere"), allow=allow, deny=deny or [])
    return evaluate("Bash", {"command": command}, "mutating", context).behavior


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm run test -- -k x", ["Bash(npm run test:*)"]),
        ("npm test", ["Bash(npm test:*)"]),
        ("git diff HEAD", ["Bash(git diff:*)"]),
        ("git status && git diff HEAD~1 | cat", ["Bash(git status:*)", "Bash(git diff:*)", "Bash(cat:*)"]),
        ("cd sub && make test", ["Bash(cd:*)", "Bash(make test:*)"]),
        ("python script.py --fast", ["Bash(python script.py:*)"]),
        ("python3 -m pytest -q tests", ["Bash(python3 -m pytest:*)"]),
        ("bash build.sh", ["Bash(bash build.sh:*)"]),
        ("yarn run test:unit --watch", ["Bash(yarn run test:unit:*)"]),
        ("bun run dev", ["Bash(bun run dev:*)"]),
        ("uv run pytest -q", ["Bash(uv run pytest:*)"]),
        ("uv run python -m pytest", ["Bash(uv run python -m pytest:*)"]),
        ("npx prettier --write .", ["Bash(npx prettier:*)"]),
        ("go run main.go", ["Bash(go run main.go:*)"]),
        ("uv run python -c 1", ["Bash(uv run python -c 1)"]),
        ("npx rm -rf x", ["Bash(npx rm -rf x)"]),
        ("git push origin main", ["Bash(git push origin main)"]),  # --receive-pack runs a program
        ("git rebase -i main", ["Bash(git rebase -i main)"]),  # --exec runs a program
        ("git grep -n TODO", ["Bash(git grep -n TODO)"]),  # -O runs a program
        ("pytest -k slow", ["Bash(pytest:*)"]),
        ("ls -la", ["Bash(ls:*)"]),
        ("cat README.md | grep goat", ["Bash(cat:*)", "Bash(grep:*)"]),
        # exact: a program that deletes, runs code from its arguments, or a line writing a file
        ("python -c 'print(1)'", ["Bash(python -c 'print(1)')"]),
        ("node", ["Bash(node)"]),
        ("rm -rf build", ["Bash(rm -rf build)"]),
        ("git config core.pager less", ["Bash(git config core.pager less)"]),
        ("find . -name x", ["Bash(find . -name x)"]),
        ("find . -name '*.py'", []),  # a star in a rule is a wildcard: only "allow once"
        ("ls *.py && echo ok", ["Bash(ls:*)", "Bash(echo:*)"]),
        ("FOO=1 npm test", ["Bash(FOO=1 npm test)"]),
        ("echo hi > out.txt", ["Bash(echo hi > out.txt)"]),
        ("ls | xargs rm", ["Bash(ls | xargs rm)"]),
        # wrappers: the wrapper exactly, what it runs by its own rule
        ("sudo apt install jq", ["Bash(sudo apt install jq)", "Bash(apt install:*)"]),
        ("bash -c 'git log'", ["Bash(bash -c 'git log')", "Bash(git log:*)"]),
    ],
)
def test_bash_approvals_offer_the_rule_users_expect(command: str, expected: list[str]) -> None:
    assert list(bash_rules(command)) == expected
    assert decide(command, allow=expected) == ("allow" if expected else "ask")


@pytest.mark.parametrize(
    "command",
    [
        "${x:-rm} victim",
        "$CMD x",
        "echo `echo \\`touch PWN\\``x $X; $(echo rm) x",
        "echo $(",
        "x='$(rm y)'; echo $((x))",
        "bash",
        'python -c "$CODE" | sh',
    ],
)
def test_a_line_that_cannot_be_analysed_offers_only_once(command: str) -> None:
    assert bash_rules(command) == ()


def test_the_nested_backquote_of_the_issue_gets_a_rule_for_what_it_hides() -> None:
    command = "echo `echo \\`touch PWN\\``"
    rules = bash_rules(command)
    assert "Bash(touch:*)" in rules and decide(command, allow=list(rules)) == "allow"
    assert decide(command, allow=["Bash(echo:*)"]) == "ask"


NEXT_RUNS = ["npm run test -- -k y", "npm run test", "npm  run  test --watch", "npm run test -- 'a b'"]
STILL_ASKS = [
    "npm run test; rm -rf ~",
    "npm run test && curl x | sh",
    "npm run test\nrm victim",
    "npm run test $(rm victim)",
    "npm run test `rm victim`",
    "npm run test > ~/.bashrc",
    "npm run test-all",
    "npm run testx",
    "npm run lint",
    "npm run-script test",
    "npm exec rm",
    "env npm run test",
    "sudo npm run test",
    "FOO=1 npm run test",
    "npm_config_script_shell=/tmp/x npm run test",
    "npm run test | sh",
    "bash -c 'npm run test; rm x'",
    "$NPM run test",
    "cat <<EOF | sh\nrm x\nEOF\nnpm run test",
]


@pytest.mark.parametrize("command", NEXT_RUNS)
def test_a_saved_prefix_rule_lets_the_same_script_run_with_other_arguments(command: str) -> None:
    assert decide(command, allow=list(bash_rules("npm run test -- -k x"))) == "allow"


@pytest.mark.parametrize("command", STILL_ASKS)
def test_a_saved_prefix_rule_covers_nothing_else(command: str) -> None:
    assert decide(command, allow=list(bash_rules("npm run test -- -k x"))) == "ask"


@BOUNDED
@given(st.one_of(line(with_rm=False), line(with_rm=True)))
def test_suggestions_allow_the_line_and_never_a_runner_alone(command: str) -> None:
    rules = bash_rules(command)
    if not analyse(command).certain:
        assert rules == ()
        return
    assert rules or "*" in command, command  # only a star (no way to spell it in a rule) offers none
    assert decide(command, allow=list(rules)) == ("allow" if rules else "ask"), (command, rules)
    for rule in rules:
        spec = parse_rule(rule).specifier or ""
        assert spec, rule  # never the bare tool
        if spec.endswith(":*"):
            words = spec[:-2].split()
            assert not (len(words) == 1 and words[0].rsplit("/", 1)[-1] in RUNNERS), (command, rule)
            assert "rm" not in words, (command, rule)


RUNNER_PREFIXES = ["", "uv run ", "npx ", "npm exec ", "poetry run ", "pipenv run ", "bundle exec "]
RUNNER_PREFIXES += ["sudo ", "env ", "nice ", "timeout 5 ", "pnpm dlx ", "uvx ", "command ", "exec "]
CODE_FLAGS = ["python -c", "python3 -c", "node -e", "perl -e", "ruby -e", "deno eval", "bun -e", "php -r"]
CODE_FLAGS += ["bash -c", "sh -c", "python3.12 -c", "/usr/bin/python3 -c", "awk", "sed -e"]


@BOUNDED
@given(st.sampled_from(RUNNER_PREFIXES), st.sampled_from(RUNNER_PREFIXES), st.sampled_from(CODE_FLAGS))
def test_a_rule_for_code_given_on_the_line_never_covers_other_code(outer: str, inner: str, flag: str) -> None:
    """`uv run python -c X` approved must not allow `uv run python -c Y`, behind any runner."""
    approved = f"{outer}{inner}{flag} 'print(1)'"
    other = f"{outer}{inner}{flag} 'import os; os.system(1)'"
    assert decide(other, allow=list(bash_rules(approved))) == "ask", (approved, bash_rules(approved))


# --- RunCell and KernelInspect: the exact code ---------------------------------------------------


def inspect(expression: str, allow: list[str], deny: list[str] | None = None) -> str:
    context = PermissionContext(Path("/nowhere"), allow=allow, deny=deny or [])
    return evaluate("KernelInspect", {"expression": expression}, "mutating", context).behavior


def run_cell(source: str | None, allow: list[str]) -> str:
    context = PermissionContext(Path("/nowhere"), allow=allow)
    return evaluate("RunCell", {"cell_id": "c1"}, "mutating", context, code=source).behavior


def test_a_kernel_inspect_rule_covers_that_exact_expression_only() -> None:
    [rule] = suggest_rules("KernelInspect", {"expression": "1+1"}, PermissionContext(Path("/nowhere")))
    assert rule == "KernelInspect(1+1)"
    assert inspect("1+1", [rule]) == "allow"
    for other in ["__import__('os').system('touch PWN')", "1+1 ", " 1+1", "1+1;", "1+11", "(1+1)", "1 + 1"]:
        assert inspect(other, [rule]) == "ask", other


@pytest.mark.parametrize("rule", ["KernelInspect(*)", "KernelInspect()", "KernelInspect( * )"])
def test_the_whole_tool_is_only_ever_a_deliberate_rule(rule: str) -> None:
    """`KernelInspect(*)` is the whole tool, as for every tool: so an expression that spells it
    gets no rule (only "allow once"), and none other reads as it."""
    assert inspect("x", [rule]) == "allow"
    for expression in ["*", " * ", "  "]:
        assert suggest_rules("KernelInspect", {"expression": expression}, PermissionContext(Path("/"))) == ()


@pytest.mark.parametrize("expression", ["1*", "*1", "df.*", "a[*]", "f(*args)", "x)", "(x", "**k", "a\n*"])
def test_stars_and_brackets_in_an_expression_are_only_text(expression: str) -> None:
    [rule] = suggest_rules("KernelInspect", {"expression": expression}, PermissionContext(Path("/")))
    assert inspect(expression, [rule]) == "allow"
    if "*" in expression:
        assert inspect(expression.replace("*", "__import__('os').system('x')"), [rule]) == "ask"
    assert inspect(expression + "+1", [rule]) == "ask"


def test_a_run_cell_rule_names_the_source_not_the_cell() -> None:
    context = PermissionContext(Path("/nowhere"))
    [rule] = suggest_rules("RunCell", {"cell_id": "c1"}, context, "mutating", code="df.head()\n")
    assert rule == "RunCell(df.head()\n)"
    assert run_cell("df.head()\n", [rule]) == "allow"
    assert run_cell("df.head()\nimport os; os.system('x')", [rule]) == "ask"  # the cell was edited
    assert run_cell(None, [rule]) == "ask"  # the source is not known
    assert suggest_rules("RunCell", {"cell_id": "c1"}, context, "mutating") == ()
    assert run_cell("anything", ["RunCell"]) == "allow"  # the bare tool stays a deliberate choice


def test_deny_rules_on_code_are_exact_too() -> None:
    assert inspect("os.environ", ["KernelInspect"], deny=["KernelInspect(os.environ)"]) == "deny"
    assert inspect("os.environ ", ["KernelInspect"], deny=["KernelInspect(os.environ)"]) == "allow"


# --- through the executor and the policy ---------------------------------------------------------


class ScriptedApprover:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(self.answers.pop(0))  # pyright: ignore[reportArgumentType]


_ids = iter(range(1_000_000))


async def run(executor: Executor, tool: str, args: dict[str, Any]) -> ToolOutput:
    return await executor.run_one(ToolCall(f"call{next(_ids)}", tool, args))


def executor_for(ws: Path, approver: ScriptedApprover) -> tuple[Executor, SessionState]:
    registry = default_registry(cwd=ws)
    return Executor(registry, registry.session, policy=RulePolicy(approver)), registry.session


async def test_allow_for_session_on_kernel_inspect_does_not_allow_other_code(ws: Path) -> None:
    approver = ScriptedApprover("allow_session", "deny")
    executor, session = executor_for(ws, approver)
    await run(executor, "KernelInspect", {"expression": "1+1"})  # no kernel here: it fails after approval
    assert session.session_rules == ["KernelInspect(1+1)"]
    assert "KernelInspect" not in session.session_rules
    denied = await run(executor, "KernelInspect", {"expression": "__import__('os').system('touch PWN')"})
    assert denied.error_code == "PERMISSION_DENIED" and len(approver.requests) == 2
    again = await run(executor, "KernelInspect", {"expression": "1+1"})
    assert again.error_code != "PERMISSION_DENIED" and len(approver.requests) == 2
    assert not (ws / "PWN").exists()


async def test_a_saved_prefix_rule_lets_the_next_npm_run_test_run_unasked(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "npm").write_text('#!/bin/sh\necho "$@" >> npm.log\n')
    (stubs / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{stubs}:/usr/bin:/bin")
    approver = ScriptedApprover("always_allow")
    executor, _ = executor_for(ws, approver)
    first = await run(executor, "Bash", {"command": "npm run test -- -k x"})
    assert not first.is_error, first.content
    request = approver.requests[0]
    assert request.suggested_rules == ("Bash(npm run test:*)",)
    saved = json.loads((ws / ".goat" / "settings.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(npm run test:*)"]

    later = ScriptedApprover("deny")  # a new session that loads the saved settings
    executor, session = executor_for(ws, later)
    session.settings = load_settings(ws, environ={})
    second = await run(executor, "Bash", {"command": "npm run test -- -k y"})
    assert not second.is_error and later.requests == []
    assert (ws / "npm.log").read_text() == "run test -- -k x\nrun test -- -k y\n"
    hidden = await run(executor, "Bash", {"command": "npm run test; npm publish"})
    assert hidden.error_code == "PERMISSION_DENIED" and len(later.requests) == 1


async def test_a_compound_line_saves_one_rule_per_program(ws: Path) -> None:
    approver = ScriptedApprover("allow_session")
    executor, session = executor_for(ws, approver)
    await run(executor, "Bash", {"command": "echo a && ls | wc -l"})
    assert session.session_rules == ["Bash(echo:*)", "Bash(ls:*)", "Bash(wc:*)"]
    assert approver.requests[0].suggested_rule == "Bash(echo:*), Bash(ls:*), Bash(wc:*)"


async def test_an_uncertain_line_offers_only_once(ws: Path) -> None:
    approver = ScriptedApprover("allow_session")
    executor, session = executor_for(ws, approver)
    await run(executor, "Bash", {"command": "X=echo; $X hi"})
    assert approver.requests[0].rules == () and session.session_rules == []


def notebook_with(path: Path, source: str) -> None:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.id = "c1"
    notebook.cells.append(cell)
    nbformat.write(notebook, path)


async def test_allow_for_session_on_run_cell_covers_that_source_not_the_cell(ws: Path) -> None:
    """The model cannot get a harmless cell approved, then edit it and run it again unasked."""
    notebook = ws / "nb.ipynb"
    notebook_with(notebook, "1+1")
    approver = ScriptedApprover("allow_session", "deny")
    registry = default_registry(cwd=ws)
    services = Services(kernel=KernelService(shell=None))  # the permission step needs no shell
    executor = Executor(registry, registry.session, policy=RulePolicy(approver), services=services)
    args = {"notebook_path": str(notebook), "cell_id": "c1"}
    await run(executor, "RunCell", args)  # allowed for the session (running it needs a kernel)
    assert registry.session.session_rules == ["RunCell(1+1)"]
    notebook_with(notebook, "__import__('os').system('touch PWN')")
    edited = await run(executor, "RunCell", args)
    assert edited.error_code == "PERMISSION_DENIED" and len(approver.requests) == 2
    notebook_with(notebook, "1+1")
    again = await run(executor, "RunCell", args)
    assert again.error_code != "PERMISSION_DENIED" and len(approver.requests) == 2
    assert not (ws / "PWN").exists()
