"""The rules an "Allow for session" / "Always allow" answer saves: no broader than the user expects.

- Bash: the program and its subcommand as a prefix, one rule per program of a compound line
  (`npm run test -- -k x` -> `Bash(npm run test:*)`; `git diff HEAD && cat a` -> `Bash(git diff:*)`,
  `Bash(cat:*)`). Programs that run whatever their arguments say (interpreters, shells, wrappers)
  never get a prefix of their name alone: `python script.py` -> `Bash(python script.py:*)`,
  `python -c ...` -> that exact command. Destructive or code-running programs (`rm`, `find`, `sed`,
  `git config`) and commands with `VAR=x` prefixes get the exact command; a line that writes a file
  gets the exact line. A line the analysis is not certain about gets no rule ("allow once" only).
- RunCell and KernelInspect: that exact cell source or expression, never the whole tool.
- Every Bash suggestion is checked to allow the very line it was made for; if not, the exact line,
  and no rule at all for a line with a `*` in it (a star in a rule is a wildcard).
"""

from __future__ import annotations

import os
import re
import shlex

from goat_jupyter.permissions.calls import CODE_TOOLS, Call, path_spec
from goat_jupyter.permissions.rules import (
    Anchors,
    bash_rule_matches,
    parse_rule,
    subcommand_allowed,
    url_host,
)
from goat_jupyter.permissions.shell import Subcommand, analyse
from goat_jupyter.permissions.shell.wrappers import FILE_WORD, SHELLS, STDIN_WORD

# Words a wrapper fills in at run time (`xargs rm`): a rule naming them would cover any such word.
_RUN_TIME_WORDS = frozenset({STDIN_WORD.text, FILE_WORD.text})
# A plain subcommand or script name (`diff`, `test:unit`, `build-all`): no quoting, no expansion.
_SUBCOMMAND = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]*$")
_OPERAND = re.compile(r"^[A-Za-z0-9_.@+/][A-Za-z0-9_.@+/:=-]*$")  # a script or file name
_NAME = re.compile(r"^[A-Za-z0-9_.@+/][A-Za-z0-9_.@+/-]*$")  # a program (not `x=1`, `[`, `$x`)
_INTERPRETER = re.compile(
    r"^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|ruby|perl[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit"
    r"|Rscript|R|julia|java|tclsh|wish|pwsh|powershell|osascript|ipython[0-9]*|jshell|groovy|scala)$"
)
# Programs whose first subcommand is what the user approves (`git diff`, `npm test`, `make lint`).
_SUBCOMMAND_TOOLS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "podman", "kubectl", "helm", "pip", "pip3"}
    | {"uv", "poetry", "pdm", "hatch", "conda", "mamba", "gh", "glab", "brew", "apt", "apt-get", "dnf"}
    | {"systemctl", "dotnet", "bundle", "rake", "mvn", "gradle", "make", "just", "nox", "tox", "terraform"}
    | {"jupyter", "pre-commit", "rustup", "gcloud", "aws", "az", "ruff", "mypy", "black", "npx", "pnpx"}
    | {"bunx", "uvx", "pipx", "bun", "deno", "pipenv"}
)
# `npm run test`: the script name is part of what is approved.
_SCRIPT_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_SCRIPTS = frozenset({"run", "run-script"})
# `uv run pytest`, `npx prettier`, `npm exec x`: what follows is a command, judged on its own
# (`uv run python -c ...` gets no prefix rule, as `python -c` gets none).
_COMMAND_RUNNERS = frozenset({"npx", "pnpx", "bunx", "uvx", "pipx"})
_RUNS_A_COMMAND = frozenset({"run", "exec", "x", "dlx"})
# Subcommands that change what later commands run or take an option that runs a program
# (`git config core.fsmonitor`, `git rebase --exec`, `git push --receive-pack`, `git grep -O`).
_EXACT_SUBCOMMANDS = frozenset(
    {("git", name) for name in ("config", "submodule", "rebase", "bisect", "filter-branch", "difftool")}
    | {("git", name) for name in ("mergetool", "clone", "fetch", "pull", "push", "ls-remote", "archive")}
    | {("git", name) for name in ("grep", "send-email", "daemon", "instaweb", "filter-repo", "replace")}
    | {("deno", "eval"), ("deno", "repl"), ("bun", "eval"), ("bun", "repl")}
    | {("npm", "config"), ("pip", "config"), ("pip3", "config"), ("yarn", "config"), ("pnpm", "config")}
)
# Programs that delete, rewrite permissions, run code from their arguments or write anywhere:
# a rule for the exact command only.
_EXACT_ONLY = frozenset(
    {"rm", "rmdir", "dd", "shred", "mkfs", "chmod", "chown", "chgrp", "kill", "pkill", "killall"}
    | {"truncate", "find", "sed", "awk", "gawk", "mawk", "nawk", "ssh", "scp", "rsync", "curl", "wget"}
    | {"tee", "cp", "mv", "ln", "install", "eval", "exec", "source", ".", "export", "declare", "typeset"}
    | {"local", "readonly", "unset", "alias", "set", "shopt", "trap", "let", "read", "mapfile"}
    | {"readarray", "getopts", "test", "[", "[[", "printf", "crontab", "at", "sudo", "doas", "su"}
    | {"runuser", "xargs", "parallel", "watch", "git-shell", "nohup", "setsid", "coproc", "builtin"}
    | {"command", "env", "nice", "ionice", "timeout", "stdbuf", "time", "strace", "ltrace", "chroot"}
    | {"unshare", "nsenter", "flock", "taskset", "chrt", "script", "firejail", "busybox"}
)


def suggest_rules_for(call: Call, anchors: Anchors) -> tuple[str, ...]:
    """The rules that answer adds; () when only "allow once" makes sense."""
    facts = call.facts
    if call.guard or call.secret or facts.allow_blocked:
        return ()
    if facts.command is not None:
        return bash_rules(facts.command)
    if facts.tool in CODE_TOOLS:
        return code_rules(facts.tool, facts.code)
    if facts.url is not None:
        return (f"WebFetch(domain:{url_host(facts.url)})",)
    if facts.tool == "Move":
        return ()  # no one path rule covers both ends without covering much more: allow once
    if facts.allow_paths:
        family = "Delete" if call.kind == "delete" else ("Read" if call.kind == "read" else "Edit")
        target = facts.allow_paths[-1]
        spec = path_spec(target, anchors, folder=facts.search_root and os.path.isdir(target.real))
        return (f"{family}({spec})",)
    return (facts.tool,)


def code_rules(tool: str, code: str | None) -> tuple[str, ...]:
    """`KernelInspect(<the expression>)`: matched as exact text (rules.py), so `*` is only a star.

    None when the code is unknown, or would read as the whole tool (`KernelInspect(*)`).
    """
    if code is None or code.strip() in ("", "*"):
        return ()
    rule = f"{tool}({code})"
    return (rule,) if parse_rule(rule).specifier == code else ()


def bash_rules(command: str) -> tuple[str, ...]:
    """One prefix rule per program of the line (see the module's doc); () when it is uncertain."""
    analysis = analyse(command)
    if not analysis.certain or not analysis.commands or not command.strip():
        return ()
    parts = analysis.commands
    if command.isascii() and not any(_exact_only(part) for part in parts):
        rules = tuple(dict.fromkeys(_rule_for(part) for part in parts))
        specs = [parse_rule(rule).specifier or "" for rule in rules]
        if _literal(specs) and all(any(subcommand_allowed(spec, part) for spec in specs) for part in parts):
            return rules
    exact = command.strip()
    return (f"Bash({exact})",) if _literal([exact]) and bash_rule_matches(exact, command, "allow") else ()


def _literal(specs: list[str]) -> bool:
    """No `*` but a trailing `:*`: in a rule a star is a wildcard (`find -name '*.py'` would cover
    `find -name x -delete -name y.py`), and rules have no way to spell a literal one."""
    return not any("*" in spec.removesuffix(":*") for spec in specs)


def _exact_only(part: Subcommand) -> bool:
    """The analysis spells non-ASCII as ASCII, prefix rules never cover writes into files, and
    words filled in at run time (`xargs rm`, `find -exec`) would stand for any word."""
    return part.writes_file or any(word in _RUN_TIME_WORDS for word in part.words)


def _rule_for(part: Subcommand) -> str:
    words = part.words
    prefix = _prefix(words) if words and not part.prefix else None
    if prefix is None:
        return f"Bash({shlex.join((*part.prefix, *words))})"
    return f"Bash({' '.join(prefix)}:*)"


def _prefix(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """The words the rule starts with; None for an exact rule."""
    name = words[0]
    program = os.path.basename(name)
    if not _NAME.match(name) or program in _EXACT_ONLY:
        return None
    if _INTERPRETER.match(program) or program in SHELLS:
        return _script_prefix(words)
    if program in _SUBCOMMAND_TOOLS:
        return _subcommand_prefix(words, program)
    return (name,)


def _script_prefix(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """`python script.py` and `python -m pytest` name what runs; `python -c ...` or `python` do not."""
    if len(words) >= 3 and words[1] == "-m" and _SUBCOMMAND.match(words[2]):
        return words[:3]
    if len(words) >= 2 and _OPERAND.match(words[1]) and not words[1].startswith("-"):
        return words[:2]
    return None


def _subcommand_prefix(words: tuple[str, ...], program: str) -> tuple[str, ...] | None:
    if len(words) < 2 or not _SUBCOMMAND.match(words[1]) or (program, words[1]) in _EXACT_SUBCOMMANDS:
        return None
    if program in _SCRIPT_MANAGERS and words[1] in _SCRIPTS:
        named = len(words) >= 3 and _SUBCOMMAND.match(words[2])
        return words[:3] if named else None
    if program in _COMMAND_RUNNERS:
        return _then_command(words[:1], words[1:])
    if words[1] in _RUNS_A_COMMAND:
        return _then_command(words[:2], words[2:])
    return words[:2]


def _then_command(head: tuple[str, ...], rest: tuple[str, ...]) -> tuple[str, ...] | None:
    inner = _prefix(rest) if rest else None
    return None if inner is None else (*head, *inner)
