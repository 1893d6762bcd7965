"""A command word's value as bash computes it, with real bash as the judge.

An empty substitution (`$()`, a pair of backquotes) or empty quotes inside a word add nothing:
`c$()1` runs `c1`, and rules must see `c1`. A word with a substitution or expansion whose output
is not known (`c$(echo 1)`, `-r${x}f`) may be any value with its known pieces: a deny or ask rule
that one of those values would match applies, an allow rule never does, and a command name of that
kind makes the line uncertain.
"""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from goat_jupyter.permissions.engine import PermissionContext, evaluate
from goat_jupyter.permissions.shell import analyse, last_command_name
from goat_jupyter.permissions.shell.shapes import Tokens, overlaps
from tests.permissions.test_shell_nested_bash import BOUNDED, WORKSPACE, bash_ran, stubs

__all__ = ["stubs"]  # the fixture: a folder of stub programs c1..c3, the only folder on PATH


def decide(command: str, **rules: list[str]) -> str:
    context = PermissionContext(
        WORKSPACE, allow=rules.get("allow", []), deny=rules.get("deny", []), ask=rules.get("ask", [])
    )
    return evaluate("Bash", {"command": command}, "mutating", context).behavior


# Spellings of the command `c1` whose name the analysis can know: the empty parts go.
EMPTY_PARTS = [
    "c``1",
    "c` `1",
    "c$()1",
    "c$( )1",
    "c$(\n)1",
    "c''1",
    'c""1',
    "c$''1",
    'c$""1',
    '"c"``1',
    "c``''1",
    '"c$()1"',
    'c"$()"1',
    'c"$(  )"1',
    "$()c1",
    "c1$()",
    "\\c1",
    "c\\1",
    "'c'1",
    "c'1'",
    "c1 $() x",
]
# Spellings the grammar cannot parse: the line is uncertain and deny rules see `c1` in its words.
UNPARSED = ["``c1", "c1``", "` `c1", "`` c1", "c1 ``", "echo x; c``1 ``", "c1 `` x"]
# Spellings of `c1` whose name is only known when the line runs: the line is uncertain.
DYNAMIC_NAMES = [
    'c"$(true)"1',
    "c$(true)1",
    "c$(echo)1",
    "c`echo`1",
    "c$(echo 1)",
    "c`echo 1`",
    "`echo c`1",
    "$(echo c)1",
    "c${x}1",
    "c$x'1'",
    "c${x:-}1",
    "c${x:-1}",
    "c${x#a}1",
    "c$@1",
    "c$*1",
    '"c$(printf 1)"',
    "c$((1))",
    "c$[1]",
    "c`echo`1",
    "c`echo`'1'",
    '"c"`echo`1',
    'c"`echo`"1',
    "./c1$x",
    "./c$(echo)1",
]


@pytest.mark.parametrize("command", EMPTY_PARTS)
def test_empty_parts_of_a_command_name_are_removed(stubs: Path, command: str) -> None:
    ran = bash_ran(command, stubs)
    assert ran & {"c1", "c2"}, ran  # the judge: bash runs the stub
    analysis = analyse(command)
    assert analysis.certain, analysis
    assert {part.words[0] for part in analysis.commands} == ran
    assert decide(command, deny=["Bash(c1:*)", "Bash(c2:*)"], allow=["Bash"]) == "deny"
    assert decide(command, allow=["Bash(c1:*)", "Bash(c2:*)"]) == "allow"
    assert decide(command, allow=["Bash(echo:*)"]) == "ask"


@pytest.mark.parametrize("command", UNPARSED)
def test_an_unparsed_spelling_is_uncertain_and_denied(stubs: Path, command: str) -> None:
    assert "c1" in bash_ran(command, stubs)  # the judge: bash runs the stub
    assert not analyse(command).certain, analyse(command)
    assert decide(command, deny=["Bash(c1:*)"], allow=["Bash"]) == "deny", analyse(command)
    assert decide(command, allow=["Bash(c1:*)", "Bash(echo:*)"]) == "ask"


@pytest.mark.parametrize("command", DYNAMIC_NAMES)
def test_a_command_name_with_unknown_parts_is_uncertain_and_denied(stubs: Path, command: str) -> None:
    assert "c1" in bash_ran(command, stubs)  # the judge: bash runs the stub
    assert not analyse(command).certain, analyse(command)
    assert decide(command, deny=["Bash(c1:*)"], allow=["Bash"]) == "deny", analyse(command)
    assert decide(command, ask=["Bash(c1 *)"], allow=["Bash"]) == "ask"
    assert decide(command, allow=["Bash(c1:*)", "Bash(c*)", f"Bash({command})"]) == "ask"


def test_the_exit_code_command_is_the_name_without_its_empty_parts() -> None:
    assert last_command_name("make && c``1") == "c1"
    assert last_command_name("make && c$(echo)1") is None


# --- arguments: `Bash(rm -rf:*)` ----------------------------------------------------------------

ARGUMENT_EMPTY_PARTS = [
    "rm -r``f x",
    "rm -r$()f x",
    "rm -r''f x",
    "rm '-rf' x",
    'rm "-r$()f" x',
    "rm -``rf x",
]
ARGUMENT_DYNAMIC = [
    "rm -r$(echo)f x",
    "rm -r`echo f` x",
    'rm "-r$(true)f" x',
    "rm -r${x}f x",
    "rm $(echo -rf) x",
    "x=-rf; rm $x x",
    'f=-rf; rm "$f" x',
    "rm -$(echo r)f x",
    "sudo rm -r$(echo)f x",
    "/bin/rm -r${x}f x",
    "rm `` -rf x",
    "rm -r`echo`f x",
    "rm -r`echo`'f' x",
    "rm '-r'`echo`f x",
    "rm -r`true` -f x",
    'rm "$()"-$""rf"" x',  # the grammar reads `-$` as one token
    "rm -`echo r```f x",  # not parsed: the rough reading of the line
    'echo; "$()"``r$(echo)m"""$()" -"$()"`echo r`f x',  # not parsed either
    "rm -`echo r`$( )f x",
]


@pytest.mark.parametrize("command", ARGUMENT_EMPTY_PARTS)
def test_empty_parts_of_an_argument_are_removed(command: str) -> None:
    assert analyse(command).commands[0].words == ("rm", "-rf", "x")
    assert decide(command, deny=["Bash(rm -rf:*)"], allow=["Bash"]) == "deny"
    assert decide(command, ask=["Bash(rm -rf *)"], allow=["Bash"]) == "ask"
    assert decide(command, allow=["Bash(rm -rf x)"]) == "allow"
    assert decide(command, allow=["Bash(rm -r:*)", "Bash(rm x:*)"]) == "ask"


@pytest.mark.parametrize("command", ARGUMENT_DYNAMIC)
def test_an_argument_that_may_expand_to_a_denied_one_is_denied(command: str) -> None:
    assert decide(command, deny=["Bash(rm -rf:*)"], allow=["Bash"]) == "deny", analyse(command)
    assert decide(command, ask=["Bash(rm -rf:*)"], allow=["Bash"]) == "ask", analyse(command)
    assert decide(command, allow=["Bash(rm -r:*)", "Bash(rm -rf:*)", "Bash(echo:*)"]) == "ask"


def test_bash_really_removes_with_the_dynamic_flag(tmp_path: Path) -> None:
    """The judge for the list above: `rm -r$(echo)f` removes a folder, as `rm -rf` does."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("")
    subprocess.run(["bash", "-c", "rm -r$(echo)f x"], cwd=tmp_path, check=True)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("command", "spec"),
    [("rm -r`echo`f x", "rm -rf x"), ("x=-rf; rm $x x", "rm -rf *"), ("rm -`echo r```f x", "*-rf*")],
)
def test_exact_and_wildcard_deny_rules_see_every_value_too(command: str, spec: str) -> None:
    assert decide(command, deny=[f"Bash({spec})"], allow=["Bash"]) == "deny", analyse(command)


ARGUMENTS = st.lists(
    st.sampled_from(
        ["-", "r", "f", "``", "$()", "''", '""', "$(echo)", "${x}", "$x", "`echo r`", "$(echo f)"]
    ),
    min_size=1,
    max_size=6,
).map("".join)


@BOUNDED
@given(ARGUMENTS)
@example(argument="-r``f")
@example(argument="-$(echo)rf")
@example(argument="-`echo r`$(echo f)")
def test_an_argument_bash_turns_into_the_denied_one_is_denied(stubs: Path, argument: str) -> None:
    """Real bash as the judge: whenever `printf` receives `-rf`, `Bash(printf -rf:*)` denies."""
    command = f"printf %s {argument}"
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False, cwd=stubs)
    if out.stdout == "-rf":
        assert decide(command, deny=["Bash(printf %s -rf:*)"], allow=["Bash"]) == "deny", analyse(command)
        assert decide(command, allow=["Bash(printf %s -r:*)", "Bash(echo:*)"]) == "ask"


@pytest.mark.parametrize(
    "command",
    ["echo $HOME", 'ls "$(pwd)"', "git log --format=$(echo %H)", "rm -i $f", "rm ./$x", 'rm "x$f"'],
)
def test_expansions_that_cannot_reach_a_denied_value_stay_allowed(command: str) -> None:
    rules = {"deny": ["Bash(rm -rf:*)", "Bash(c1:*)"], "allow": ["Bash"]}
    assert decide(command, **rules) == "allow", analyse(command)


def test_a_fully_dynamic_command_name_asks_rather_than_matching_every_deny_rule() -> None:
    """`"$PYTHON" x` is not denied by `Bash(rm:*)`: it asks (uncertain), as before."""
    assert decide('"$PYTHON" x', deny=["Bash(rm:*)"], allow=["Bash(x:*)"]) == "ask"
    assert decide('"$PYTHON" rm', deny=["Bash(rm:*)"], allow=["Bash"]) == "deny"  # a visible word


# --- the shape matcher ---------------------------------------------------------------------------

TOKENS = st.lists(st.one_of(st.sampled_from("ab"), st.none()), max_size=5).map(tuple)


def matches(tokens: Tokens, text: str) -> bool:
    pattern = "".join(".*" if t is None else re.escape(t) for t in tokens)
    return re.fullmatch(pattern, text, re.DOTALL) is not None


@BOUNDED
@given(TOKENS, TOKENS)
@example(left=("a", None, "b"), right=("a", "b"))
@example(left=(None, "a"), right=("b", None))
@example(left=("a", None), right=("b", None))
def test_two_patterns_overlap_exactly_when_some_text_matches_both(left: Tokens, right: Tokens) -> None:
    """A shortest common text uses each known character of either side once: at most 10 here."""
    texts = ("".join(chars) for size in range(11) for chars in itertools.product("ab", repeat=size))
    assert overlaps(left, right) == any(matches(left, t) and matches(right, t) for t in texts)
