"""Bash permission analysis as an attacker would try it: quoting, keywords, wrappers, unparseable lines.

The engine is pure (permissions.evaluate); the last tests run real bash through the Executor with
RulePolicy and an approver that records and denies every prompt, and check the victim file survives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.permissions.engine import PermissionContext, evaluate, suggest_rule
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, RulePolicy
from goat_jupyter.permissions.shell import analyse, last_command_name, split_command
from goat_jupyter.settings import PermissionMode
from goat_jupyter.tools import ToolCall, default_registry
from goat_jupyter.tools.runner import Executor

DENY_RM = ["Bash(rm:*)"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def behavior(
    ws: Path,
    command: str,
    *,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    ask: list[str] | None = None,
    mode: PermissionMode = "default",
) -> str:
    context = PermissionContext(ws, mode=mode, allow=allow or [], deny=deny or [], ask=ask or [])
    return evaluate("Bash", {"command": command}, "mutating", context).behavior


# Every way of running `rm` that the issue found missed, and variants.
HIDDEN_RM = [
    "echo $'a\\'b' ; rm victim",
    "echo $'a\\'b' && rm victim",
    "echo $'\\'' ; rm victim",
    'echo $"x" ; rm victim',
    "echo $'it\\'s' | rm victim",
    "echo 'a'\\''b'; rm victim",
    'echo "a\\"b"; rm victim',
    "echo a\\\n; rm victim",
    "r\\\nm victim",
    "echo ok;\\\nrm victim",
    "if true; then rm victim; fi",
    "if false; then :; elif true; then rm victim; fi",
    "if false; then :; else rm victim; fi",
    "if rm victim; then :; fi",
    "while true; do rm victim; break; done",
    "until false; do rm victim; done",
    "for f in a b; do rm victim; done",
    "for ((i=0; i<1; i++)); do rm victim; done",
    "select f in a; do rm victim; done",
    "case x in x) rm victim;; esac",
    "case x in y) :;; *) rm victim;; esac",
    "! rm victim",
    "time rm victim",
    "time -p rm victim",
    "coproc rm victim",
    "coproc ( rm victim )",
    "coproc NAME { rm victim; }",
    "time { rm victim; }",
    "{ rm victim; }",
    "(rm victim)",
    "f() { rm victim; }; f",
    "function f { rm victim; }; f",
    "f() ( rm victim ); f",
    "cat <<EOF\n$(rm victim)\nEOF",
    "cat <<EOF > out\n`rm victim`\nEOF",
    'cat <<< "$(rm victim)"',
    "diff <(ls) <(rm victim)",
    "ls >(rm victim)",
    "echo $(rm victim)",
    "echo `rm victim`",
    'echo "$(rm victim)"',
    "echo ${x:-$(rm victim)}",
    "echo $(( $(rm victim) + 1 ))",
    "[[ -n $(rm victim) ]]",
    "x=$(rm victim)",
    "export x=$(rm victim)",
    "a=(1 $(rm victim))",
    "ls | rm victim",
    "ls |& rm victim",
    "ls & rm victim",
    "ls || rm victim",
    "ls\nrm victim",
    "\\rm victim",
    "'rm' victim",
    '"rm" victim',
    "r''m victim",
    'r"m" victim',
    "$'rm' victim",
    "$'\\x72m' victim",
    "$'\\162m' victim",
    "/bin/rm victim",
    "FOO=1 rm victim",
    # wrappers
    "bash -c 'rm victim'",
    "sh -c 'rm victim'",
    "zsh -c 'rm victim'",
    "dash -c 'rm victim'",
    "bash -lc 'rm victim'",
    "bash -e -o pipefail -c 'rm victim'",
    '/bin/sh -c "echo; rm victim"',
    "bash -c 'bash -c \"rm victim\"'",
    "env rm victim",
    "env -i rm victim",
    "env -u HOME FOO=1 rm victim",
    "env --chdir=/tmp rm victim",
    "env -- rm victim",
    "/usr/bin/env rm victim",
    "command rm victim",
    "command -p rm victim",
    "builtin eval 'rm victim'",
    "exec rm victim",
    "exec -a name rm victim",
    "nice rm victim",
    "nice -n 5 rm victim",
    "nice -5 rm victim",
    "nice --adjustment=5 rm victim",
    "nohup rm victim",
    "timeout 5 rm victim",
    "timeout -s KILL -k 1 5 rm victim",
    "timeout --signal=KILL 5 rm victim",
    "stdbuf -o0 rm victim",
    "stdbuf -o L -e 0 rm victim",
    "sudo rm victim",
    "sudo -u root -E rm victim",
    "sudo --user=root FOO=1 rm victim",
    "xargs rm",
    "xargs -0 -n1 rm",
    "xargs -I{} rm {}",
    "xargs -i rm {}",
    "xargs -I {} sh -c 'rm {}'",
    "eval rm victim",
    "eval 'rm victim'",
    'eval "ls; rm victim"',
    "find . -exec rm {} \\;",
    "find . -name x -exec rm {} ';'",
    "find . -execdir rm {} +",
    "find . -ok rm {} \\;",
    "find . -exec ls {} \\; -exec rm {} \\;",
    "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
    "watch rm victim",
    "watch -n 1 'ls; rm victim'",
    "watch -x rm victim",
    "parallel rm ::: victim",
    "parallel 'rm {}' ::: victim",
    "trap 'rm victim' EXIT",
    "sudo env nice timeout 3 bash -c 'xargs rm'",
    "busybox rm victim",
    "flock /tmp/lock rm victim",
    "flock -w 5 /tmp/lock -c 'rm victim'",
    "taskset -c 0 rm victim",
    "taskset 0x1 rm victim",
    "strace -f rm victim",
    "strace -e trace=all -o /tmp/t rm victim",
    "ltrace rm victim",
    "unshare -r rm victim",
    "nsenter -t 1 -m rm victim",
    "chroot / rm victim",
    "script -q -c 'rm victim' /dev/null",
    "firejail rm victim",
    "runuser -c 'rm victim'",
    "chrt -f 10 rm victim",
    "setsid rm victim",
    "doas rm victim",
    "su -c 'rm victim'",
    "shopt -s expand_aliases\nalias ls='rm victim'\nls",
    "echo victim | xargs rm",
    # cannot be analysed: deny rules still see the word
    "source <(echo rm victim)",
    "bash <(echo rm victim)",
    ". /dev/stdin <<< 'rm victim'",
    "echo 'rm victim' | xargs -I{} sh -c {}",
    "echo rm victim | xargs env",
    "echo rm victim | xargs sh -c",
    "parallel env ::: 'rm victim'",
    "parallel {} ::: 'rm victim'",
    "x='a[$(rm victim)]'; echo $((x))",
    "export x='$(rm victim)'; echo ${x@P}",
    "IFS=,; x=rm,victim; $x",
    "test -v 'a[$(rm victim)]'",
    "[ -v 'a[$(rm victim)]' ]",
    "[[ -v 'a[$(rm victim)]' ]]",
    "echo $(( 'a[$(rm victim)]' ))",
    "printf -v 'a[$(rm victim)]' x",
    "read 'a[`rm victim`]' < /dev/null",
    "declare 'a[$(rm victim)]'",
    "unset 'a[$(rm victim)]'",
    "echo 'unclosed ; rm victim",
    "$CMD; rm victim",
    "echo hi | bash; rm victim",
    "bash <<'EOF'\nrm victim\nEOF",
    "env -S 'rm victim'",
    'eval "$X"; rm victim',
]


@pytest.mark.parametrize("command", HIDDEN_RM)
def test_a_deny_rule_sees_rm_wherever_it_can_run(ws: Path, command: str) -> None:
    assert behavior(ws, command, deny=DENY_RM, allow=["Bash"]) == "deny"
    assert behavior(ws, command, deny=DENY_RM, mode="bypassPermissions") == "deny"
    assert behavior(ws, command, ask=DENY_RM, allow=["Bash"]) == "ask"


@pytest.mark.parametrize("command", HIDDEN_RM)
def test_allow_rules_for_other_commands_never_cover_rm(ws: Path, command: str) -> None:
    allow = ["Bash(echo:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(true)", "Bash(false)", "Bash(diff:*)"]
    assert behavior(ws, command, allow=allow) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "echo $'a\\'b'",
        "echo 'a; rm victim'",
        'echo "rm victim"',
        "echo rm victim",
        "echo $'; rm victim'",
        "cat <<'EOF'\n$(rm victim)\nEOF",
        "echo \\$(rm victim)",  # `\$` is a literal dollar, the parser calls it an error: asks, not allowed
        "grep -r 'rm -rf' .",
        "command -v rm",
        "python -c 'import os; os.remove(\"victim\")'",
    ],
)
def test_rm_only_as_text_is_not_denied(ws: Path, command: str) -> None:
    decided = behavior(ws, command, deny=DENY_RM, allow=["Bash"])
    certain = analyse(command).certain
    assert decided == ("allow" if certain else "deny")


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("echo $'a\\'b'", ["Bash(echo:*)"]),
        ("echo $'a\\'b' ; echo $\"c\"", ["Bash(echo:*)"]),
        ("ls -la && echo done", ["Bash(ls:*)", "Bash(echo:*)"]),
        ("git log --oneline | head -5", ["Bash(git log:*)", "Bash(head:*)"]),
        ("cd src && ls", ["Bash(cd:*)", "Bash(ls:*)"]),
        ("if [ -f x ]; then cat x; else echo none; fi", ["Bash(cat:*)", "Bash(echo:*)", "Bash([:*)"]),
        ("for f in *.py; do wc -l $f; done", ["Bash(wc:*)"]),
        ("timeout 60 npm test", ["Bash(timeout:*)", "Bash(npm test)"]),
        ("echo a \\\n  b", ["Bash(echo:*)"]),
        ("cat <<'EOF'\n$(not run)\nEOF", ["Bash(cat:*)"]),
        ("ls 2>/dev/null", ["Bash(ls:*)"]),
        ("python -c 'print(1)'", ["Bash(python:*)"]),
        ("diff <(ls a) <(ls b)", ["Bash(diff:*)", "Bash(ls:*)"]),
        ("git commit -m 'Fix `parse` and $(docs)'", ["Bash(git commit:*)"]),
        ("test -f 'a b'", ["Bash(test:*)"]),
    ],
)
def test_benign_commands_covered_by_allow_rules_are_allowed(ws: Path, command: str, rules: list[str]) -> None:
    assert analyse(command).certain
    assert behavior(ws, command, allow=rules) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "$CMD x",
        "${CMD} x",
        '"$CMD" x',
        "$(which ls) x",
        "`which ls` x",
        "l* x",
        "{ls,x}",
        "echo 'unclosed",
        "echo hi | bash",
        'bash -c "$X"',
        "eval $X",
        "xargs $X",
        "sudo --frobnicate ls",
        "find . -exec ls",
        "coproc NAME { ls; }",
        "ls \\x00" + "\x00",
        "find . -exec sh -c {} \\;",
        "ls | xargs -I% sh -c %",
        "source <(ls)",
        "x='$(ls)'; echo $((x))",
        "test -v 'a[$(ls)]'",
    ],
)
def test_lines_that_cannot_be_analysed_are_never_allowed_by_a_rule(ws: Path, command: str) -> None:
    analysis = analyse(command)
    assert not analysis.certain and analysis.problems
    allow = ["Bash(ls:*)", "Bash(echo:*)", "Bash(xargs:*)", "Bash(sudo:*)", "Bash(find:*)", "Bash(coproc:*)"]
    allow += ["Bash(eval:*)", "Bash(bash:*)", "Bash(* x)", f"Bash({command})"]
    assert behavior(ws, command, allow=allow) == "ask"
    assert behavior(ws, command, allow=["Bash"]) == "allow"  # the whole tool is a deliberate choice
    context = PermissionContext(ws)
    assert suggest_rule("Bash", {"command": command}, context, "mutating") is None


def test_uncertain_lines_match_deny_rules_with_several_words(ws: Path) -> None:
    deny = ["Bash(git push:*)"]
    assert behavior(ws, "$X; git push origin", deny=deny, allow=["Bash"]) == "deny"
    assert behavior(ws, "$X; git status", deny=deny, allow=["Bash"]) == "allow"
    assert behavior(ws, "$X; echo git push", deny=deny, allow=["Bash"]) == "deny"  # fails closed
    assert behavior(ws, "echo git push", deny=deny, allow=["Bash"]) == "allow"


def test_interpreters_are_opaque_and_match_only_rules_that_name_them(ws: Path) -> None:
    code = "python3 -c 'import os; os.system(\"rm victim\")'"
    assert behavior(ws, code, allow=["Bash(echo:*)"]) == "ask"
    assert behavior(ws, code, allow=["Bash(python3:*)"]) == "allow"
    assert behavior(ws, code, deny=["Bash(python3:*)"], allow=["Bash"]) == "deny"
    assert behavior(ws, "perl -e 'unlink q(victim)'", deny=["Bash(perl:*)"], allow=["Bash"]) == "deny"


def test_wrappers_need_their_own_rule_and_the_inner_commands(ws: Path) -> None:
    assert behavior(ws, "timeout 5 ls", allow=["Bash(ls:*)"]) == "ask"
    assert behavior(ws, "timeout 5 ls", allow=["Bash(ls:*)", "Bash(timeout:*)"]) == "allow"
    assert behavior(ws, "timeout 5 rm x", allow=["Bash(ls:*)", "Bash(timeout:*)"]) == "ask"
    assert behavior(ws, "sudo rm x", allow=["Bash(sudo:*)"]) == "ask"
    assert behavior(ws, "bash -c 'ls; rm x'", allow=["Bash(bash:*)", "Bash(ls:*)"]) == "ask"
    assert behavior(ws, "find . -exec rm {} +", allow=["Bash(find:*)"]) == "ask"
    assert behavior(ws, "find . -name '*.py'", allow=["Bash(find:*)"]) == "allow"


def test_allow_rules_never_cover_redirection_into_a_file(ws: Path) -> None:
    for command in ("npm test > out.txt", "{ echo a; } > ~/.bashrc", "echo x >& out", "bash -c 'echo x' > f"):
        assert behavior(ws, command, allow=["Bash(npm test)", "Bash(echo:*)", "Bash(bash:*)"]) == "ask"
    assert behavior(ws, "echo x >&2", allow=["Bash(echo:*)"]) == "allow"
    assert behavior(ws, "npm test > out.txt", allow=["Bash(npm test > out.txt)"]) == "allow"


def test_assignments_on_their_own_need_a_rule(ws: Path) -> None:
    assert behavior(ws, "PATH=/tmp/evil; ls", allow=["Bash(ls:*)"]) == "ask"
    assert behavior(ws, "LD_PRELOAD=/tmp/x.so ls", allow=["Bash(ls:*)"]) == "ask"
    wrapped = "env LD_PRELOAD=/tmp/x.so ls"
    assert behavior(ws, wrapped, allow=["Bash(ls:*)", "Bash(env:*)"]) == "ask"
    assert behavior(ws, "sudo PATH=/tmp ls", allow=["Bash(ls:*)", "Bash(sudo:*)"]) == "ask"
    assert behavior(ws, "env ls", allow=["Bash(ls:*)", "Bash(env:*)"]) == "allow"


def test_split_command_lists_what_runs_behind_wrappers() -> None:
    texts = [part.text for part in split_command("sudo -u me timeout 5 bash -c 'ls; rm x'")]
    assert texts == [
        "sudo -u me timeout 5 bash -c 'ls; rm x'",
        "timeout 5 bash -c 'ls; rm x'",
        "bash -c 'ls; rm x'",
        "ls",
        "rm x",
    ]
    assert [p.words for p in split_command("echo $'a\\'b' ; rm v")] == [("echo", "a'b"), ("rm", "v")]


# --- protected configuration ------------------------------------------------------------------

PROTECTED = [
    "rm -rf .goat",
    "mv .goat /tmp/x",
    "mv newconf .goat",
    "cat > .goat/settings.json",
    "echo '{}' > ~/.goat/settings.json",
    "cp x .claude/settings.local.json",
    "rm .mcp.json",
    "rm -rf .go''at",
    "rm -rf $'\\x2egoat'",
    "rm -rf .g*",
    "rm -rf .[gc]*",
    "cd ws && rm -rf ./.goat/",
    "bash -c 'rm -rf .goat'",
    "dd if=x of=.goat/settings.json",
    "tar xf a.tar --directory=.claude",
    "$X .goat",
]


@pytest.mark.parametrize("command", PROTECTED)
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_commands_naming_protected_configuration_ask_in_every_mode(
    ws: Path, command: str, mode: PermissionMode
) -> None:
    context = PermissionContext(ws, mode=mode, allow=["Bash"])
    decision = evaluate("Bash", {"command": command}, "mutating", context)
    assert decision.behavior == "ask" and "protected configuration" in decision.reason
    headless = PermissionContext(ws, mode="dontAsk", allow=["Bash"])
    assert evaluate("Bash", {"command": command}, "mutating", headless).behavior == "deny"


@pytest.mark.parametrize("command", ["ls .github", "cat README.md", "git status", "ls *", "echo goat"])
def test_other_dot_folders_are_not_protected(ws: Path, command: str) -> None:
    assert behavior(ws, command, mode="bypassPermissions") == "allow"


# --- the last command, for the Bash tool's exit-code rule ---------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("diff <(echo a) <(echo b)", "diff"),
        ("diff a b > out 2>&1", "diff"),
        ("grep x f 2>/dev/null", "grep"),
        ("cat <<EOF | grep x\nhello\nEOF", "grep"),
        ("sudo timeout 5 grep x f", "grep"),
        ("env LANG=C nice -n 3 rg x", "rg"),
        ("bash -c 'ls; diff a b'", "diff"),
        ("[ -f x ]", "["),
        ("[[ -f x ]]", "[["),
        ("! grep x f", None),
        ("if grep x f; then :; fi", None),
        ("$CMD x", None),
        ("grep x f\n# done", "grep"),
        ("echo $'a\\'b' | grep x", "grep"),
    ],
)
def test_last_command_is_found_through_substitutions_and_redirections(command: str, name: str | None) -> None:
    assert last_command_name(command) == name


# --- through the executor with real bash -------------------------------------------------------


class RecordingDenier:
    """A real Approver that records every request and denies it."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer("deny")


@pytest.mark.parametrize(
    ("command", "allow", "deny"),
    [
        ("echo $'a\\'b' ; rm victim", ["Bash(echo:*)"], []),
        ("echo $'a\\'b' ; rm victim", ["Bash"], ["Bash(rm:*)"]),
        ("if true; then rm victim; fi", ["Bash"], ["Bash(rm:*)"]),
        ("timeout 5 env nice rm victim", ["Bash"], ["Bash(rm:*)"]),
        ("find . -name victim -exec rm {} \\;", ["Bash(find:*)"], []),
        ("r\\\nm victim", ["Bash(r:*)", "Bash(m:*)"], []),
        ("echo x | xargs -I{} rm victim", ["Bash(echo:*)", "Bash(xargs:*)"], []),
    ],
)
async def test_hostile_commands_through_the_executor_leave_the_victim(
    ws: Path, command: str, allow: list[str], deny: list[str]
) -> None:
    (ws / "victim").write_text("keep me")
    registry = default_registry(cwd=ws)
    registry.session.settings.permissions.allow = allow
    registry.session.settings.permissions.deny = deny
    approver = RecordingDenier()
    executor = Executor(registry, registry.session, policy=RulePolicy(approver))
    out = await executor.run_one(ToolCall("c1", "Bash", {"command": command}))
    assert out.is_error and out.error_code == "PERMISSION_DENIED"
    assert (ws / "victim").read_text() == "keep me"
    assert len(approver.requests) == (0 if deny else 1)


def test_non_ascii_words_are_compared_consistently(ws: Path) -> None:
    """Non-ASCII is folded to ASCII before parsing (tree-sitter-bash crashed on some); rules fold alike."""
    assert behavior(ws, "echo héllo", allow=["Bash(echo héllo)"]) == "allow"
    assert behavior(ws, "echo hállo", allow=["Bash(echo héllo)"]) == "ask"
    assert behavior(ws, "echo ✓ ; rm victim", deny=DENY_RM, allow=["Bash"]) == "deny"
    assert behavior(ws, "rm fichier-été", deny=["Bash(rm fichier-été)"], allow=["Bash"]) == "deny"
    assert behavior(ws, "$X; rm été", deny=["Bash(rm été)"], allow=["Bash"]) == "deny"
    assert behavior(ws, "grep ü f", allow=["Bash(grep:*)"]) == "allow"
    assert last_command_name("echo ü | grep ä") == "grep"
