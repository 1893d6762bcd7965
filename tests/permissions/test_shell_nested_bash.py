"""Nested command substitutions, with real bash as the judge (issue 20, finding 2).

Inside backquotes bash turns a backslash-backquote into a nested substitution:
``echo `echo \\`touch PWN\\``` runs `touch PWN`. Lines here nest backquotes, `$( )` and double
quotes, correctly escaped or with one character changed, around stub programs that log their name
when they run. Whenever bash ran one, the analysis must list it or call the line uncertain, and a
deny rule for it must apply.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.permissions.shell import analyse, protected_config_guard
from goat_jupyter.permissions.shell.syntax import Word
from goat_jupyter.permissions.shell.wrappers import program

WORKSPACE = Path("/nonexistent-goat-workspace")
STUBS = ("c1", "c2", "c3")
BOUNDED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decide(command: str, **rules: list[str]) -> str:
    context = PermissionContext(WORKSPACE, allow=rules.get("allow", []), deny=rules.get("deny", []))
    return evaluate("Bash", {"command": command}, "mutating", context).behavior


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of programs c1..c3 that append their name to $STUB_LOG; the only folder on PATH."""
    folder = tmp_path_factory.mktemp("stubs")
    for name in STUBS:
        script = folder / name
        script.write_text(f'#!/bin/sh\necho {name} >> "$STUB_LOG"\n')
        script.chmod(0o755)
    return folder


def bash_ran(command: str, stubs: Path) -> set[str]:
    """The stub programs real bash runs for `command`."""
    log = stubs / "log"
    log.unlink(missing_ok=True)
    env = {"PATH": str(stubs), "STUB_LOG": str(log), "HOME": str(stubs)}
    subprocess.run(
        ["/bin/bash", "--norc", "--noprofile", "-c", command],
        cwd=stubs,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
        check=False,
    )
    return set(log.read_text().split()) if log.exists() else set()


def in_backquotes(line: str, *, in_string: bool) -> str:
    """`line` as bash wants it between backquotes (a backslash before `$`, a backquote, `\\`)."""
    special = r'([$`\\"])' if in_string else r"([$`\\])"
    return "`" + re.sub(special, r"\\\1", line) + "`"


def substitution(line: str, form: str) -> str:
    """A word whose value is the output of `line`."""
    if form == "backquote":
        return in_backquotes(line, in_string=False)
    if form == "quoted-backquote":
        return '"' + in_backquotes(line, in_string=True) + '"'
    if form == "dollar":
        return f"$({line})"
    return f'"$({line})"'


FORMS = st.sampled_from(["backquote", "backquote", "quoted-backquote", "dollar", "quoted-dollar"])
LEAVES = st.sampled_from(["c1", "c2 a", "c3 'q r'", "echo c1", 'echo "c2"', "echo", "c1; c2"])
HOLDERS = ["echo {}", "echo a{}b", "c3 {}", "echo x; echo {}", "x={}", "c2 <<< {}"]
# Lines the analysis may call uncertain (they ask): the grammar leaves backquotes in a here-document
# or a `${x:-...}` default raw, and misreads a `case` inside backquotes or here-documents nested with
# the same delimiter; a substitution as the command name, or code in `[ ]` (which may evaluate it).
UNCERTAIN_HOLDERS = [
    "[ -n {} ]",
    "case {} in *) echo;; esac",
    "cat <<'EOF'\n{}\nEOF",
    "{}",
    "{} a",
    "c{}",
    "cat <<EOF\n{}\nEOF",
    "cat <<EOF\n$({})\nEOF",
    "echo ${{x:-{}}}",
]


def nesting(holders: list[str]) -> st.SearchStrategy[str]:
    def nested(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.builds(
            lambda line, form, holder: holder.format(substitution(line, form)),
            children,
            FORMS,
            st.sampled_from(holders),
        )

    return st.recursive(LEAVES, nested, max_leaves=4)


LINES = nesting(HOLDERS)  # every command name is a plain word: the analysis can be certain
ANY_LINES = nesting([*HOLDERS, *UNCERTAIN_HOLDERS])  # a substitution as the command name too
# One character changed, added or removed: escapes that are one level off are where parsers differ.
EDITS = st.lists(
    st.tuples(st.integers(0, 400), st.sampled_from(["\\", "`", '"', "'", "$", "(", ")", ""]), st.booleans()),
    max_size=2,
)


def edited(line: str, edits: list[tuple[int, str, bool]]) -> str:
    for position, text, insert in edits:
        at = position % (len(line) + 1)
        line = line[:at] + text + line[at + (0 if insert else 1) :]
    return line


def named_commands(command: str) -> set[str]:
    return {program(Word(part.words[0])) for part in analyse(command).commands if part.words}


# Holes hypothesis found, or can reach in one or two edits, pinned so that every run checks them.
@BOUNDED
@given(ANY_LINES, EDITS)
@example(line="c``1", edits=[])
@example(line="c`c1`", edits=[(2, "`", False), (4, "", False)])  # the path that found it
@example(line="c`echo c1`", edits=[(7, "", False)])  # c`echo 1` runs c1
@example(line='"c``1"', edits=[])
@example(line="c$()1", edits=[])
@example(line="`echo c`1", edits=[])
def test_every_command_bash_runs_is_listed_or_the_line_is_uncertain(
    stubs: Path, line: str, edits: list[tuple[int, str, bool]]
) -> None:
    command = edited(line, edits)
    ran = bash_ran(command, stubs)
    analysis = analyse(command)
    if analysis.certain:
        assert ran <= named_commands(command), (command, ran, analysis)
    for name in ran:
        assert decide(command, deny=[f"Bash({name}:*)"], allow=["Bash"]) == "deny", (command, analysis)
        assert decide(command, allow=["Bash(echo:*)"]) == "ask", (command, analysis)


@BOUNDED
@given(LINES)
def test_correctly_nested_lines_are_analysed_with_certainty(stubs: Path, line: str) -> None:
    """The analysis follows bash's rules instead of giving up: well-formed nesting stays certain,
    and it finds exactly the programs bash runs. The one uncertainty kept by design: an assignment
    whose value holds code (`x=\\`c2\\``) may run later, so it asks."""
    analysis = analyse(line)
    stores_code = all("holds shell code that bash may run later" in p for p in analysis.problems)
    assert analysis.certain or stores_code, (line, analysis)
    listed = named_commands(line) & set(STUBS)
    assert bash_ran(line, stubs) <= listed, (line, analysis)


# --- the cases from the issue, and other spellings -----------------------------------------------

HIDDEN_TOUCH = [
    "echo `echo \\`touch PWN\\``",
    'echo "`echo \\`touch PWN\\``"',
    "echo `echo \\`echo \\\\\\`touch PWN\\\\\\`\\``",
    "echo `echo $(touch PWN)`",
    "echo `echo \\$(touch PWN)`",
    'echo `echo "\\$(touch PWN)"`',
    "echo `echo \\`touch PWN\\`;echo`",
    "echo `echo \\`env touch PWN\\``",
    "echo `echo \\`command touch PWN\\``",
    "echo `echo \\`nice -n 5 touch PWN\\``",
    "echo `echo \\`echo PWN | xargs touch\\``",
    "echo `echo \\`\ntouch PWN\\``",
    "echo `cat <<EOF\n\\`touch PWN\\`\nEOF\n`",
    "echo `echo \\`t\\\\\\\\ouch PWN\\``",
]


@pytest.mark.parametrize("command", HIDDEN_TOUCH)
def test_a_nested_backquote_never_runs_unasked_under_an_echo_rule(stubs: Path, command: str) -> None:
    assert decide(command, allow=["Bash(echo:*)"]) == "ask", analyse(command)
    assert decide(command, deny=["Bash(touch:*)"], allow=["Bash"]) == "deny", analyse(command)


def test_bash_really_runs_the_hidden_command(tmp_path: Path) -> None:
    """The judge for the list above: bash does run `touch PWN` for the issue's line."""
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    subprocess.run(["bash", "-c", HIDDEN_TOUCH[0]], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert (tmp_path / "PWN").exists()
    assert "touch" in named_commands(HIDDEN_TOUCH[0])


HIDDEN_RM = [
    "${x:-rm} victim",
    '"${x:-rm}" victim',
    "${x-rm} victim",
    "${x:=rm} victim",
    "${x:+rm} victim",
    "${x:-/bin/rm} victim",
    "${x:-r}m victim",
    '${x:-"rm"} victim',
    "${x/a/rm} victim",
    "${x:-rm -rf} victim",
    "a=(rm victim); ${a[@]}",
    "sudo ${x:-rm} victim",
    "env ${x:-rm} victim",
    "command ${x:-rm} victim",
    "echo victim | xargs ${x:-rm}",
    "x=1; ${x:+rm} victim",
    "$(echo rm) victim",
    "`echo rm` victim",
    "echo `echo \\`rm victim\\``",
]


@pytest.mark.parametrize("command", HIDDEN_RM)
def test_an_expanding_command_name_is_denied_by_its_visible_default(command: str) -> None:
    assert decide(command, deny=["Bash(rm:*)"], allow=["Bash"]) == "deny", analyse(command)
    assert decide(command, allow=["Bash(echo:*)", "Bash(sudo:*)", "Bash(env:*)"]) == "ask", analyse(command)


@pytest.mark.parametrize("command", ["${x:-rm} victim", "$CMD victim", "${x/a/rm} v", '"${x:-rm}" v'])
def test_a_command_name_that_is_an_expansion_makes_the_line_uncertain(command: str) -> None:
    assert not analyse(command).certain
    assert decide(command, allow=["Bash(${x:-rm}:*)", "Bash(* *)", f"Bash({command})"]) == "ask"


def test_bash_runs_the_default_of_an_unset_variable(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("x")
    env = {"PATH": "/usr/bin:/bin"}
    subprocess.run(["bash", "-c", HIDDEN_RM[0]], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize(
    "command",
    ["echo `echo hi`", 'echo "`date`"', "echo `echo \\\\ok`", "git log -1 --format=`echo %H`"],
)
def test_plain_backquotes_stay_certain_and_allowed(command: str) -> None:
    assert analyse(command).certain
    assert decide(command, allow=["Bash(echo:*)", "Bash(date:*)", "Bash(git log:*)"]) == "allow"


@pytest.mark.parametrize("command", ["echo `echo '`'` c1", 'echo `echo "a\\\\`c1\\\\`b"` `'])
def test_a_backquote_the_grammar_ends_elsewhere_than_bash_makes_the_line_uncertain(command: str) -> None:
    """Bash ends a backquoted command at the first unescaped backquote, quotes or not."""
    assert not analyse(command).certain
    assert decide(command, allow=["Bash(echo:*)", "Bash(c1:*)"]) == "ask"


@pytest.mark.parametrize(
    "command",
    ["echo x > ${x:-.goat}/settings.json", "cp evil ${HOME:+.claude}/settings.json", "mv a ${d:=.mcp.json}"],
)
def test_protected_configuration_named_through_an_expansion_default_is_guarded(command: str) -> None:
    assert protected_config_guard(command) is not None
