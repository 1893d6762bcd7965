"""Commands that run another command: which one they run (`sudo rm x` runs `rm x`), without running it.

`unwrap(words)` answers with the inner command's words, a shell script to parse (`bash -c`, `eval`,
`watch`, `parallel`, `trap`), a problem when it cannot tell (an unknown option, a dynamic word, a shell
reading its script from standard input), or None when the command is not a wrapper.
`python -c` and `perl -e` are deliberately not wrappers: their code is opaque and only rules that name
the interpreter cover it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from goat_jupyter.permissions.shell.syntax import Word

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NUMERIC_OPTION = re.compile(r"^-[+-]?\d+$")
_PARALLEL_REPLACEMENT = re.compile(r"\{[^\s{}]*\}")
STDIN_WORD = Word("<words from standard input>", literal=False)
FILE_WORD = Word("<file name found>", literal=False)
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash"})
FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
PARALLEL_SOURCES = frozenset({":::", "::::", ":::+", "::::+"})


@dataclass(frozen=True)
class Inner:
    """What a wrapper runs: words of one command, or a script; `problem` when that cannot be known."""

    argv: tuple[Word, ...] = ()
    scripts: tuple[str, ...] = ()
    problem: str | None = None
    commands: tuple[tuple[Word, ...], ...] = field(default=())  # several commands (find -exec ... -exec)
    prefix: tuple[str, ...] = ()  # `VAR=value` words the wrapper puts in the command's environment


@dataclass(frozen=True)
class Options:
    """Which options a wrapper knows: short flags, short options taking a value, and long ones."""

    flags: str = ""
    valued: str = ""
    attached: str = ""  # short options whose value, if any, is attached (`xargs -i`, `-l`)
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    numeric: bool = False  # `nice -5`


def skip_options(args: Sequence[Word], spec: Options) -> int | None:
    """Index of the first operand after the options; None when an option is unknown or dynamic."""
    index = 0
    while index < len(args):
        word = args[index]
        if not word.literal:
            return None
        text = word.text
        if text == "--":
            return index + 1
        if not text.startswith("-") or text == "-":
            return index
        step = _option_width(text, spec)
        if step is None:
            return None
        index += step
    return index


def _option_width(text: str, spec: Options) -> int | None:
    """How many words the option `text` takes (1 or 2), None when unknown."""
    if spec.numeric and _NUMERIC_OPTION.match(text):
        return 1
    if text.startswith("--"):
        name = text.split("=", 1)[0]
        if name in spec.long_valued:
            return 1 if "=" in text else 2
        return 1 if name in spec.long_flags else None
    for position, char in enumerate(text[1:], start=1):
        if char in spec.valued:
            return 1 if position + 1 < len(text) else 2
        if char in spec.attached:
            return 1
        if char not in spec.flags:
            return None
    return 1


def _argv(args: Sequence[Word], spec: Options, name: str) -> Inner:
    start = skip_options(args, spec)
    if start is None:
        return Inner(problem=f"{name} has an option this check does not know")
    return Inner(argv=tuple(args[start:]))


def _options_wrapper(spec: Options) -> Callable[[Sequence[Word], str], Inner]:
    return lambda args, name: _argv(args, spec, name)


def _env(args: Sequence[Word], name: str) -> Inner:
    if any(w.text.startswith(("-S", "--split-string")) for w in args):
        return Inner(problem="env -S splits a string into a command")
    return _strip_assignments(_argv(args, _ENV, name))


def _command(args: Sequence[Word], name: str) -> Inner | None:
    if any(w.text in ("-v", "-V") or w.text.startswith(("-v", "-V", "-pv", "-pV")) for w in args[:2]):
        return None  # `command -v x` only says what x is
    return _argv(args, Options(flags="p"), name)


def _timeout(args: Sequence[Word], name: str) -> Inner:
    inner = _argv(args, _TIMEOUT, name)
    return Inner(argv=inner.argv[1:], problem=inner.problem)  # the first operand is the duration


def _sudo(args: Sequence[Word], name: str) -> Inner | None:
    if any(w.text in ("-e", "--edit") for w in args):
        return None  # sudoedit edits files, it runs no command
    return _strip_assignments(_argv(args, _SUDO, name))


def _strip_assignments(inner: Inner) -> Inner:
    rest = list(inner.argv)
    prefix: list[str] = []
    while rest and rest[0].literal and _ASSIGNMENT.match(rest[0].text):
        prefix.append(rest.pop(0).text)
    return Inner(argv=tuple(rest), problem=inner.problem, prefix=tuple(prefix))


def _xargs(args: Sequence[Word], name: str) -> Inner:
    """The command gets words read from standard input: appended, or in place of the `-I` string."""
    inner = _argv(args, _XARGS, name)
    if inner.problem is not None:
        return inner
    argv = inner.argv or (Word("echo"),)
    replace = _replace_string(args)
    if replace is None:
        return Inner(argv=(*argv, STDIN_WORD))
    return Inner(argv=tuple(STDIN_WORD if replace in w.text else w for w in argv))


def _replace_string(args: Sequence[Word]) -> str | None:
    """xargs' `-I R` / `-iR` / `--replace[=R]` string, or None without one."""
    for index, word in enumerate(args):
        text = word.text
        if text == "-I" and index + 1 < len(args):
            return args[index + 1].text
        if text.startswith("-I") or text.startswith("--replace="):
            return text[2:] if text.startswith("-I") else text.split("=", 1)[1]
        if text in ("-i", "--replace"):
            return "{}"
        if text.startswith("-i"):
            return text[2:]
    return None


def _coproc(args: Sequence[Word], name: str) -> Inner:
    if (args and args[0].text in ("{", "(", "((")) or (len(args) > 1 and args[1].text in ("{", "(")):
        return Inner(problem="coproc with a compound command")
    return Inner(argv=tuple(args))


def _shell(args: Sequence[Word], name: str) -> Inner:
    """`bash -c 'script'` runs the script; `bash file` runs a file; `bash`/`bash -s` read standard input."""
    index, command_mode, stdin_mode = 0, False, False
    while index < len(args):
        word = args[index]
        if not word.literal:
            return Inner(problem=f"{name} has a dynamic option")
        text = word.text
        if text == "--" or text == "-":
            index += 1
            break
        if text.startswith("--"):
            index += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        if not text.startswith(("-", "+")):
            break
        letters = text[1:]
        command_mode = command_mode or "c" in letters
        stdin_mode = stdin_mode or "s" in letters
        index += 1 + sum(1 for char in letters if char in "oO")
    operands = args[index:]
    if command_mode:
        return _script(operands[:1], name, f"{name} -c without a command")
    if stdin_mode or not operands:
        return Inner(problem=f"{name} reads the commands to run from its standard input")
    return _script_file(operands[0], name)


def _script_file(word: Word, name: str) -> Inner:
    """A script file is opaque, like any program, unless its content is made by this very line."""
    if not word.literal or word.text.startswith(("/dev/", "/proc/")):
        return Inner(problem=f"{name} runs a script made at run time ({word.text})")
    return Inner()


def _source(args: Sequence[Word], name: str) -> Inner:
    return _script_file(args[0], name) if args else Inner()


def _alias(args: Sequence[Word], name: str) -> Inner:
    """`alias ls='rm -rf x'`: what the alias runs counts too (`shopt -s expand_aliases` uses it)."""
    values = [Word(w.text.split("=", 1)[1], w.literal) for w in args if "=" in w.text]
    if not all(v.literal for v in values):
        return Inner(problem="alias with a value made at run time")
    return Inner(scripts=tuple(v.text for v in values))


def _script(words: Sequence[Word], name: str, missing: str) -> Inner:
    if not words:
        return Inner(problem=missing)
    if not all(w.literal for w in words):
        return Inner(problem=f"{name} runs a command built at run time")
    return Inner(scripts=(" ".join(w.text for w in words),))


def _eval(args: Sequence[Word], name: str) -> Inner:
    return _script(args, name, "") if args else Inner()


def _trap(args: Sequence[Word], name: str) -> Inner:
    if not args or (args[0].text.startswith("-") and args[0].literal):
        return Inner()
    if len(args) == 1:
        return Inner()  # `trap SIGNAL` resets the handler
    return _script(args[:1], name, "")


def _su(args: Sequence[Word], name: str) -> Inner:
    for index, word in enumerate(args):
        if word.text in ("-c", "--command"):
            return _script(args[index + 1 : index + 2], name, "su -c without a command")
        if word.text.startswith("--command="):
            return _script((Word(word.text.split("=", 1)[1], word.literal),), name, "")
    return Inner(problem="su starts a shell that reads its commands from standard input")


def _script_c(args: Sequence[Word], name: str) -> Inner | None:
    """`script -c CMD [file]` runs CMD; plain `script` starts an interactive shell (nothing to check)."""
    for index, word in enumerate(args):
        if word.text in ("-c", "--command"):
            return _script(args[index + 1 : index + 2], name, "script -c without a command")
    return None


def _find(args: Sequence[Word], name: str) -> Inner:
    commands: list[tuple[Word, ...]] = []
    index = 0
    while index < len(args):
        if args[index].text in FIND_ACTIONS:
            end = next((j for j in range(index + 1, len(args)) if args[j].text in (";", "+")), None)
            if end is None:
                return Inner(problem=f"{name} {args[index].text} without a closing ';' or '+'")
            commands.append(tuple(FILE_WORD if "{}" in w.text else w for w in args[index + 1 : end]))
            index = end
        elif not args[index].literal and args[index].text.lstrip("\"'").startswith("$"):
            return Inner(problem=f"{name} has an expression built at run time")
        index += 1
    return Inner(commands=tuple(commands))


def _watch(args: Sequence[Word], name: str) -> Inner:
    start = skip_options(args, _WATCH)
    if start is None:
        return Inner(problem="watch has an option this check does not know")
    if any(w.text in ("-x", "--exec") for w in args[:start]):
        return Inner(argv=tuple(args[start:]))
    return _script(args[start:], name, "watch without a command")


def _parallel(args: Sequence[Word], name: str) -> Inner:
    if not args or args[0].text.startswith("-"):
        return Inner(problem="parallel's options or commands cannot be checked")
    end = next((i for i, w in enumerate(args) if w.text in PARALLEL_SOURCES), len(args))
    inner = _script(args[:end], name, "parallel without a command")
    if any(_PARALLEL_REPLACEMENT.search(script) for script in inner.scripts):
        return Inner(scripts=inner.scripts, problem="parallel puts its arguments into the command")
    return Inner(
        scripts=tuple(f'{script} "$PARALLEL_ARGUMENT"' for script in inner.scripts), problem=inner.problem
    )


def _after_operand(spec: Options, pid_mode: str) -> Callable[[Sequence[Word], str], Inner | None]:
    """`taskset MASK cmd`, `chrt PRIO cmd`: options, one operand, then the command (none with `-p`)."""

    def handler(args: Sequence[Word], name: str) -> Inner | None:
        if any(w.text.startswith("-") and pid_mode in w.text.lstrip("-") for w in args[:3]):
            return None  # works on a running process, starts nothing
        inner = _argv(args, spec, name)
        return Inner(argv=inner.argv[1:], problem=inner.problem)

    return handler


def _flock(args: Sequence[Word], name: str) -> Inner:
    """`flock FILE cmd`, `flock FILE -c 'script'`; `flock FD` alone starts nothing."""
    for index, word in enumerate(args):
        if word.text in ("-c", "--command"):
            return _script(args[index + 1 : index + 2], name, "flock -c without a command")
    inner = _argv(args, _FLOCK, name)
    return Inner(argv=inner.argv[1:], problem=inner.problem)


def _busybox(args: Sequence[Word], name: str) -> Inner:
    return Inner(argv=tuple(args))


_ENV = Options(
    flags="i0v",
    valued="uC",
    long_flags=frozenset({"--ignore-environment", "--null", "--debug"}),
    long_valued=frozenset({"--unset", "--chdir", "--block-signal", "--default-signal", "--ignore-signal"}),
)
_TIMEOUT = Options(
    flags="v",
    valued="sk",
    long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
    long_valued=frozenset({"--signal", "--kill-after"}),
)
_SUDO = Options(
    flags="AbEHiKklnPSsVv",
    valued="CDghpRrtTUu",
    long_flags=frozenset(
        {
            "--askpass",
            "--background",
            "--preserve-env",
            "--set-home",
            "--login",
            "--remove-timestamp",
            "--reset-timestamp",
            "--list",
            "--non-interactive",
            "--preserve-groups",
            "--stdin",
            "--shell",
            "--validate",
        }
    ),
    long_valued=frozenset(
        {
            "--close-from",
            "--chdir",
            "--group",
            "--host",
            "--prompt",
            "--chroot",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--user",
        }
    ),
)
_XARGS = Options(
    flags="0oprtx",
    valued="adEILnPs",
    attached="eil",
    long_flags=frozenset(
        {
            "--null",
            "--open-tty",
            "--interactive",
            "--no-run-if-empty",
            "--verbose",
            "--exit",
            "--show-limits",
            "--replace",
            "--max-lines",
            "--eof",
        }
    ),
    long_valued=frozenset(
        {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}
    ),
)
_WATCH = Options(
    flags="bcegtxwp",
    valued="nq",
    attached="d",
    long_flags=frozenset(
        {
            "--beep",
            "--color",
            "--no-color",
            "--chgexit",
            "--errexit",
            "--exec",
            "--precise",
            "--no-title",
            "--no-wrap",
            "--differences",
        }
    ),
    long_valued=frozenset({"--interval", "--equexit"}),
)

_FLOCK = Options(
    flags="sxunoFe",
    valued="wE",
    long_flags=frozenset({"--shared", "--exclusive", "--unlock", "--nonblock", "--close", "--no-fork"}),
    long_valued=frozenset({"--timeout", "--conflict-exit-code"}),
)

_WRAPPERS: dict[str, Callable[[Sequence[Word], str], Inner | None]] = {
    "env": _env,
    "command": _command,
    "builtin": _options_wrapper(Options()),
    "exec": _options_wrapper(Options(flags="cl", valued="a")),
    "nice": _options_wrapper(Options(valued="n", long_valued=frozenset({"--adjustment"}), numeric=True)),
    "nohup": _options_wrapper(Options()),
    "timeout": _timeout,
    "stdbuf": _options_wrapper(
        Options(valued="ioe", long_valued=frozenset({"--input", "--output", "--error"}))
    ),
    "sudo": _sudo,
    "doas": _options_wrapper(Options(flags="ns", valued="uC")),
    "setsid": _options_wrapper(Options(flags="cfw", long_flags=frozenset({"--ctty", "--fork", "--wait"}))),
    "ionice": _options_wrapper(Options(flags="t", valued="cnp")),
    "time": _options_wrapper(Options(flags="p")),
    "coproc": _coproc,
    "xargs": _xargs,
    "eval": _eval,
    "trap": _trap,
    "su": _su,
    "find": _find,
    "watch": _watch,
    "parallel": _parallel,
    "busybox": _busybox,
    "flock": _flock,
    "taskset": _after_operand(Options(flags="ac", long_flags=frozenset({"--all-tasks", "--cpu-list"})), "p"),
    "chrt": _after_operand(Options(flags="abdfiormRv", valued="TPD"), "p"),
    "strace": _options_wrapper(Options(flags="cCfFhiqrtTvVwxyzZk", valued="abeEIoOpPsSuUX")),
    "ltrace": _options_wrapper(Options(flags="bcCfhiLrStTV", valued="aAeEFlnopsuwx")),
    "unshare": _options_wrapper(Options(flags="mUinpuCrfcT")),
    "nsenter": _options_wrapper(Options(flags="amuinpUCrwFZ", valued="tSGRW")),
    "chroot": _after_operand(Options(), "\0"),
    "script": _script_c,
    "firejail": _options_wrapper(Options()),
    "runuser": _su,
    "source": _source,
    ".": _source,
    "alias": _alias,
    **dict.fromkeys(SHELLS, _shell),
}
# Wrappers whose exit code is the inner command's (for the Bash tool's benign-exit rule).
PASS_EXIT = frozenset(
    {"env", "command", "builtin", "exec", "nice", "nohup", "timeout", "stdbuf", "sudo", "doas", "time"}
)


def program(word: Word) -> str:
    """The name a command word runs, without its folder (`/usr/bin/env` -> `env`)."""
    return os.path.basename(word.text) or word.text


def unwrap(words: Sequence[Word]) -> Inner | None:
    """What the command `words` runs through, if it is a wrapper; None for an ordinary command."""
    if not words or not words[0].literal:
        return None
    handler = _WRAPPERS.get(program(words[0]))
    return handler(words[1:], program(words[0])) if handler else None
