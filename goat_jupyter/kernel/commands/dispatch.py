"""`%goat` subcommands: config, status, reset, history, resume, help."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any, cast

from goat_jupyter.agent import ledger
from goat_jupyter.agent.session import SavedSession, describe_saved, list_sessions, summarize
from goat_jupyter.agent.spend import Limits, budget_status
from goat_jupyter.agent.styles import OUTPUT_STYLES, OutputStyle
from goat_jupyter.config.sources import describe_sources
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.kernel.commands.config import (
    allow_command,
    autoload_command,
    managed_status,
    print_overrides,
    reload_config,
)
from goat_jupyter.kernel.commands.context import compact_now, context_status_line, show_context
from goat_jupyter.kernel.commands.trust import trust_command, trust_status_line
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.settings import PERMISSION_MODES, RUNTIME_KEYS, USER_KEYS, coerce_setting

HISTORY_LIMIT = 20
LIST_LIMIT = 20  # saved conversations `%goat resume` lists
PROMPT_CHARS = 60
_CONFIG_KEYS = RUNTIME_KEYS + USER_KEYS
HELP = f"""%goat commands:
  %goat config                 show the runtime settings
  %goat config key=value ...   change settings; keys: {", ".join(sorted(RUNTIME_KEYS + USER_KEYS))}
  %goat config reload          read the settings files and the key store again
  %goat status                 model, mode, turns, tokens and cost of this session
  %goat reset                  start a new conversation (stops background tasks)
  %goat history [N]            the last N messages (default {HISTORY_LIMIT}), one line each; says how many it left out
  %goat resume                 list the saved conversations: when, how long, what each began with
  %goat resume ID|latest       continue a saved session (by id prefix, or the newest)
  %goat undo                   revert the files and cells changed by the last %%goat run
  %goat mcp                    MCP servers: status, errors and tools
  %goat mcp reconnect [NAME]   reconnect every MCP server, or the one named
  %goat context                what the next request holds (system, tools, conversation, ...) vs the window
  %goat compact [focus]        summarise the older turns now (optionally saying what to keep)
  %goat autoload [on|off]      load goat in every new kernel (the IPython kernel configuration)
  %goat style [STYLE]          show or set the output style: default, explain, tutor (hints, not answers)
  %goat trust [--show]         trust this folder's project settings (servers, hooks, allow rules, mode)
  %goat trust --revoke         stop trusting them
  %goat allow [RULE ...]       allow calls matching these rules for this session (quote each rule)
  %goat help                   this help
%%goat [options]               run the cell body as a prompt; options:
  --model M, -m M              the model for this cell (litellm name, e.g. openai/gpt-4o)
  --mode MODE                  permission mode for this cell: {", ".join(PERMISSION_MODES)}
  --max-turns N                stop after N model turns (N >= 1)
  --max-cost USD               stop before a request that could take this run past USD dollars
  --max-tokens N               stop before a request that could take this run past N tokens
  --new                        start a new conversation first
  --replay                     only replay the cell's recording (never ask the model)
  --fresh                      ask the model even when the cell holds a recording"""


def dispatch(goat: GoatRuntime, line: str) -> None:
    words = shlex.split(line)
    name, args = (words[0], words[1:]) if words else ("help", [])
    handler = _COMMANDS.get(name)
    if handler is None:
        print(f"Unknown %goat command '{name}'.\n\n{HELP}")
        return
    handler(goat, args)


def _config(goat: GoatRuntime, args: list[str]) -> None:
    if args == ["reload"]:
        reload_config(goat)
        return
    settings = goat.session.settings
    for item in args:
        key, sep, raw = item.partition("=")
        if not sep:
            print(f"Expected key=value, got {item!r}. Keys: {', '.join(_CONFIG_KEYS)}.")
            return
        try:
            setattr(settings, key, coerce_setting(key, _parse_scalar(raw), _CONFIG_KEYS))
        except InvalidInputError as exc:
            print(exc.message)
            return
    for key in _CONFIG_KEYS:
        print(f"{key} = {getattr(settings, key)!r}")
    print_overrides(goat)


def _parse_scalar(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def _status(goat: GoatRuntime, args: list[str]) -> None:
    session = goat.session
    usage = session.usage
    cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    running = [t.id for t in session.tasks.all() if t.status == "running"]
    print(
        f"session {session.session_id}  model {session.settings.model}  mode {session.settings.permission_mode}"
        f"  style {session.settings.output_style}\n"
        f"turns {session.turns}  tokens {usage.prompt_tokens} in / {usage.completion_tokens} out  cost {cost}\n"
        f"messages {len(session.messages)}  background tasks running: {', '.join(running) or 'none'}\n"
        f"workspace {session.workspace}  cwd {session.cwd}"
    )
    print(context_status_line(session))
    limits = Limits.of(session.settings)
    day = ledger.spent_today() if limits.cost_per_user_per_day is not None else 0.0
    print(budget_status(limits, session.run_spend, session.spending().cost_usd, day))  # summaries too
    print(describe_sources(session.workspace))
    print(trust_status_line(goat))
    print_overrides(goat)
    print(managed_status(session.settings.managed_notes))


def _reset(goat: GoatRuntime, args: list[str]) -> None:
    old = goat.session.session_id
    goat.new_session()
    print(f"Started a new conversation (the previous one, {old}, is saved and can be resumed).")


def _history(goat: GoatRuntime, args: list[str]) -> None:
    limit = int(args[0]) if args and args[0].isdigit() else HISTORY_LIMIT
    lines = summarize(goat.session.messages, limit=len(goat.session.messages) + 1)
    if not lines:
        print("No messages yet.")
        return
    shown = lines[-limit:] if limit else []
    left_out = len(lines) - len(shown)
    if left_out:
        print(f"({left_out} earlier messages not shown; `%goat history {len(lines)}` shows all.)")
    print("\n".join(shown))


def _resume(goat: GoatRuntime, args: list[str]) -> None:
    if not args:
        _list_saved(goat)
        return
    wanted = None if args[0] == "latest" else args[0]
    try:
        session = goat.resume(wanted)
    except LookupError as exc:
        print(exc)
        return
    print(f"Resumed session {session.session_id} with {len(session.messages)} messages.")
    if session.load_report:
        print(session.load_report.strip())


def _list_saved(goat: GoatRuntime) -> None:
    """The saved conversations of this folder, newest first, each with when, how long and what it began with."""
    saved = list_sessions(goat.workspace)
    if not saved:
        print(
            "No saved conversations in this folder yet: each %%goat cell's conversation is saved as it runs."
        )
        return
    print(
        f"Saved conversations in this folder, newest first ({min(len(saved), LIST_LIMIT)} of {len(saved)}):"
    )
    for path in saved[:LIST_LIMIT]:
        print(_saved_line(describe_saved(path), goat.session.session_id))
    print(
        "Continue one with `%goat resume ID` (the first characters of the id are enough) or `%goat resume latest`;"
        " `%goat history` shows the messages of the current one."
    )


def _saved_line(saved: SavedSession, current: str) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(saved.modified))
    prompt = (
        saved.first_prompt
        if len(saved.first_prompt) <= PROMPT_CHARS
        else saved.first_prompt[:PROMPT_CHARS] + "…"
    )
    plural = "" if saved.messages == 1 else "s"
    mark = "  (current)" if saved.session_id == current else ""
    return f"  {saved.session_id}  {when}  {saved.messages:>3} message{plural}  {prompt!r}{mark}"


def _undo(goat: GoatRuntime, args: list[str]) -> None:
    """Only reached when `%goat undo` was not rewritten into an await (see checkpoint_run.transform_undo)."""
    import asyncio

    from goat_jupyter.kernel.checkpoint_run import undo_last

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(undo_last(goat))
        return
    print(
        "Put `%goat undo` on a line of its own at the top level of a cell, so it can wait for the notebook."
    )


def _mcp(goat: GoatRuntime, args: list[str]) -> None:
    print(goat.mcp_manager().command(args))


def _context(goat: GoatRuntime, args: list[str]) -> None:
    show_context(goat)


def _compact(goat: GoatRuntime, args: list[str]) -> None:
    compact_now(goat, " ".join(args))


def _style(goat: GoatRuntime, args: list[str]) -> None:
    """`%goat style` shows the output style; `%goat style tutor|explain|default` sets it."""
    settings = goat.session.settings
    if args:
        try:
            settings.output_style = cast("OutputStyle", coerce_setting("output_style", args[0]))
        except InvalidInputError as exc:
            print(exc)
            return
    print(f"output style: {settings.output_style} (one of {', '.join(OUTPUT_STYLES)})")


def _allow(goat: GoatRuntime, args: list[str]) -> None:
    allow_command(goat, args)


def _help(goat: GoatRuntime, args: list[str]) -> None:
    print(HELP)


_COMMANDS: dict[str, Callable[[GoatRuntime, list[str]], None]] = {
    "config": _config,
    "status": _status,
    "reset": _reset,
    "history": _history,
    "resume": _resume,
    "undo": _undo,
    "mcp": _mcp,
    "context": _context,
    "compact": _compact,
    "style": _style,
    "allow": _allow,
    "autoload": autoload_command,
    "trust": trust_command,
    "help": _help,
}
