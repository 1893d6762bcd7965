"""Property-based: generated compound shell lines hiding a denied command are never allowed, and
benign lines that allow rules cover stay allowed (the analysis must not be uselessly closed).

Lines are random compositions of lists, pipelines, compound commands, functions, substitutions,
wrappers and random quoting. Runs are bounded for CI (a few hundred examples, no deadline).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.permissions.shell import analyse

WORKSPACE = Path("/nonexistent-goat-workspace")
BOUNDED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# No letters of protected names (.goat, .claude, .mcp.json) beyond what cannot spell them.
ARG_TEXT = st.text("abxyz 01;|&$`'\"\\*(){}<>#~-./\n!", max_size=8)
QUOTING = st.sampled_from(["bare", "single", "double", "ansi"])
BENIGN_NAMES = st.sampled_from(["echo", "ls", "cat", "grep"])
RM_SPELLINGS = st.sampled_from(
    ["rm", "\\rm", "'rm'", '"rm"', "r''m", "$'rm'", "$'\\x72m'", "$'\\162m'", "/bin/rm", "r\\\nm", '"r"m']
)

SEPARATORS = [" ; ", " && ", " || ", " | ", " & ", "\n", " |& "]


def quote(text: str, style: str) -> str:
    if style == "bare" and re.fullmatch(r"[A-Za-z0-9._/-]+", text):
        return text
    if style == "double":
        return '"' + re.sub(r'([$`"\\])', r"\\\1", text) + '"'
    if style == "ansi" and "\\" not in text:
        # tree-sitter-bash misreads `$'\\'` followed by another quote (the analysis then asks):
        # backslashes in $'...' are left to the rm property and the bash oracle below.
        escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
        return "$'" + escaped + "'"
    return "'" + text.replace("'", "'\\''") + "'"


def double_quoted(script: str) -> str:
    return quote(script, "double")


# Quoted code (`'$(x)'`, backticks) in an argument is fine, but a line that stores it in a variable
# asks; arguments here never hold it, so every benign line is certain.
ARGS = st.lists(st.builds(quote, ARG_TEXT.filter(lambda t: "$(" not in t), QUOTING), max_size=3)

LEAF_WRAPPERS: list[Callable[[str], str]] = [
    lambda s: s,
    lambda s: s,
    lambda s: f"env -u A {s}",
    lambda s: f"env -i {s}",
    lambda s: f"command {s}",
    lambda s: f"nice -n 5 {s}",
    lambda s: f"nohup {s}",
    lambda s: f"timeout 5 {s}",
    lambda s: f"stdbuf -o0 {s}",
    lambda s: f"sudo -u root {s}",
    lambda s: f"time {s}",
    lambda s: f"! {s}",
    lambda s: f"exec {s}",
    lambda s: f"xargs {s}",
    lambda s: f"find . -exec {s} {{}} \\;",
    lambda s: f"find . -execdir {s} {{}} +",
]

COMPOUND_WRAPPERS: list[Callable[[str], str]] = [
    lambda c: c,
    lambda c: c,
    lambda c: f"if true\nthen {c}\nfi",
    lambda c: f"if {c}\nthen true\nfi",
    lambda c: f"if false\nthen true\nelse {c}\nfi",
    lambda c: f"while false\ndo {c}\ndone",
    lambda c: f"until true\ndo {c}\ndone",
    lambda c: f"for i in a b\ndo {c}\ndone",
    lambda c: f"select i in a\ndo {c}\ndone",
    lambda c: f"case x in\nx) {c}\n;;\nesac",
    lambda c: f"{{ {c}\n}}",
    lambda c: f"( {c} )",  # `((` would start arithmetic
    lambda c: f"f() {{ {c}\n}}\nf",
    lambda c: f"echo $( {c} )",  # `$((` would start arithmetic
    lambda c: f'echo "$( {c} )"',
    lambda c: f"cat <( {c} )",
    lambda c: f"bash -c {shlex.quote(c)}",
    lambda c: f"sh -c {double_quoted(c)}",
    lambda c: f"eval {shlex.quote(c)}",
    lambda c: f"watch {shlex.quote(c)}",
    lambda c: f"trap {shlex.quote(c)} EXIT",
]
# parallel appends its arguments to the line (`fi a` is then a syntax error): only where rm hides.
RM_WRAPPERS = [*COMPOUND_WRAPPERS, lambda c: f"parallel {shlex.quote(c)} ::: a"]

BENIGN_ALLOW = [
    f"Bash({name}:*)"
    for name in (
        "echo",
        "ls",
        "cat",
        "grep",
        "env",
        "command",
        "nice",
        "nohup",
        "timeout",
        "stdbuf",
        "sudo",
        "time",
        "exec",
        "xargs",
        "find",
        "bash",
        "sh",
        "eval",
        "watch",
        "trap",
    )
] + ["Bash(true)", "Bash(false)", "Bash(f)"]


@st.composite
def simple(draw: st.DrawFn, names: st.SearchStrategy[str]) -> str:
    words = [draw(names), *draw(ARGS)]
    return draw(st.sampled_from(LEAF_WRAPPERS))(" ".join(words))


@st.composite
def line(draw: st.DrawFn, with_rm: bool) -> str:
    leaves = draw(st.lists(simple(BENIGN_NAMES), min_size=0 if with_rm else 1, max_size=3))
    if with_rm:
        leaves.insert(draw(st.integers(0, len(leaves))), draw(simple(RM_SPELLINGS)))
    command = _shape(draw, leaves, RM_WRAPPERS if with_rm else COMPOUND_WRAPPERS)
    if draw(st.booleans()):
        command = f"cat <<EOF\n$( {command} )\nEOF"
    return command


def _shape(draw: st.DrawFn, leaves: list[str], wrappers: list[Callable[[str], str]]) -> str:
    if len(leaves) == 1:
        command = leaves[0]
    else:
        split = draw(st.integers(1, len(leaves) - 1))
        separator = draw(st.sampled_from(SEPARATORS))
        command = _shape(draw, leaves[:split], wrappers) + separator + _shape(draw, leaves[split:], wrappers)
    return draw(st.sampled_from(wrappers))(command)


def decide(command: str, **rules: list[str]) -> str:
    context = PermissionContext(WORKSPACE, allow=rules.get("allow", []), deny=rules.get("deny", []))
    return evaluate("Bash", {"command": command}, "mutating", context).behavior


@BOUNDED
@given(line(with_rm=True))
def test_a_line_that_runs_rm_is_never_allowed_without_an_rm_rule(command: str) -> None:
    assert decide(command, allow=BENIGN_ALLOW) == "ask", analyse(command)
    assert decide(command, deny=["Bash(rm:*)"], allow=["Bash"]) == "deny", analyse(command)


@BOUNDED
@given(line(with_rm=False))
def test_benign_lines_covered_by_allow_rules_stay_allowed(command: str) -> None:
    analysis = analyse(command)
    assert analysis.certain, analysis.problems
    assert decide(command, allow=BENIGN_ALLOW) == "allow", analysis
    assert decide(command, deny=["Bash(rm:*)"], allow=["Bash"]) == "allow", analysis


@BOUNDED
@given(st.text(max_size=60))
def test_any_text_is_analysed_without_raising(text: str) -> None:
    analysis = analyse(text)
    assert isinstance(analysis.certain, bool)
    assert decide(text, deny=["Bash(rm:*)"], allow=["Bash(echo:*)"]) in ("allow", "ask", "deny")


# --- real bash as the oracle --------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        " ",
        " ",
        ";",
        "\n",
        "mark",
        "mark",
        "echo",
        "a",
        "'",
        '"',
        "$'",
        '$"',
        "\\",
        "\\\\",
        "`",
        "$(",
        ")",
        "(",
        "{ ",
        " }",
        "|",
        "&&",
        "||",
        "#",
        "\\\n",
        "$x",
        "if ",
        "then ",
        "fi",
        "do ",
        "done",
        "!",
    ]
)


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `mark`, a program that leaves a file behind when it runs."""
    folder = tmp_path_factory.mktemp("marker")
    script = folder / "mark"
    script.write_text('#!/bin/sh\ntouch "$MARK_FILE"\n')
    script.chmod(0o755)
    return folder


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FRAGMENTS, min_size=1, max_size=14).map("".join))
def test_whenever_bash_runs_a_command_a_deny_rule_for_it_applies(marker: Path, command: str) -> None:
    """Real bash decides: if it ran `mark`, `Bash(mark:*)` must deny the line and no rule allow it."""
    flag = marker / "ran"
    flag.unlink(missing_ok=True)
    env = {
        "PATH": f"{marker}:/usr/bin:/bin",
        "MARK_FILE": str(flag),
        "FUNCNEST": "20",
    }  # no runaway recursion
    subprocess.run(
        ["bash", "-c", command],
        cwd=marker,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
    )
    if flag.exists():
        assert decide(command, deny=["Bash(mark:*)"], allow=["Bash"]) == "deny", analyse(command)
        assert decide(command, allow=["Bash(echo:*)", "Bash(a:*)"]) == "ask", analyse(command)
