"""Folder trust in the kernel: the question before the first %%goat run, and `%goat trust`."""

from __future__ import annotations

from collections.abc import Callable

from goat_jupyter.config.project import item_lines
from goat_jupyter.config.trust import (
    TRUST_ENV,
    FolderState,
    folder_state,
    revoke_folder,
    store_path,
    trust_folder,
    untrusted_line,
)
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.tools.events import Notice
from goat_jupyter.ui import Renderer
from goat_jupyter.ui.interaction import CellInteraction

TRUST_USAGE = "Usage: %goat trust [--show | --revoke]"


async def check_folder_trust(goat: GoatRuntime, renderer: Renderer) -> None:
    """Once per kernel for each new unapproved item: ask in the cell, or say in one line (headless).
    Also once per kernel: the project limits that were ignored because they would raise the user's."""
    _note_ignored_limits(goat, renderer)
    state = folder_state(goat.workspace)
    while not all(item.key in goat.trust_asked for item in state.pending):
        interaction = goat.services.ui
        if not isinstance(interaction, CellInteraction):
            goat.trust_asked.update(item.key for item in state.pending)
            renderer.handle(Notice(untrusted_line(goat.workspace, state.pending), "warning"))
            return
        outcome = await interaction.ask_trust(goat.workspace, state.pending, _approver(goat, state))
        if outcome != "changed":  # an interrupt raises, and asks again at the next run
            goat.trust_asked.update(item.key for item in state.pending)
            if outcome == "trusted":
                goat.reload_settings()
            return
        state = folder_state(goat.workspace)  # the files changed under the question: show them now


def _approver(goat: GoatRuntime, state: FolderState) -> Callable[[], bool]:
    """At the click: approve exactly what the prompt showed (nothing when the files changed)."""
    return lambda: trust_folder(goat.workspace, state.digest) is not None


def _note_ignored_limits(goat: GoatRuntime, renderer: Renderer) -> None:
    for note in goat.session.settings.project_notes:
        if (key := f"limit {note}") not in goat.trust_asked:
            goat.trust_asked.add(key)
            renderer.handle(Notice(f"goat: {note}", "warning"))


def trust_status_line(goat: GoatRuntime) -> str:
    """One line for `%goat status`, then one per project limit that was ignored."""
    ignored = "".join(f"\n  ignored: {note}" for note in goat.session.settings.project_notes)
    return _trust_line(goat) + ignored


def _trust_line(goat: GoatRuntime) -> str:
    state = folder_state(goat.workspace)
    items, pending = state.items, state.pending
    if not items:
        return "folder trust: the project files widen nothing"
    if not pending:
        return f"folder trust: trusted ({len(items)} project settings apply)"
    return f"folder trust: {len(pending)} of {len(items)} project settings not trusted (%goat trust --show)"


def trust_command(goat: GoatRuntime, args: list[str]) -> None:
    """`%goat trust`: show what the folder's files would do and trust them; `--revoke`, `--show`."""
    if args == ["--revoke"]:
        _revoke(goat)
    elif args == ["--show"]:
        _show(goat)
    elif not args:
        _trust(goat)
    else:
        print(TRUST_USAGE)


def _trust(goat: GoatRuntime) -> None:
    state = folder_state(goat.workspace)
    items = state.items
    if not items:
        print(
            f"Nothing to trust: the project files of {goat.workspace} widen nothing (their deny and ask rules apply anyway)."
        )
        return
    if trust_folder(goat.workspace, state.digest) is None:
        print("The project files changed while goat read them; nothing was trusted. Run %goat trust again.")
        return
    goat.trust_asked.update(item.key for item in items)
    goat.reload_settings()
    lines = "\n".join(f"  {line}" for line in item_lines(items))
    print(f"Trusted {goat.workspace} (remembered in {store_path()}); these apply now:\n{lines}")
    print("Anything added or changed in these files later asks again. Undo with %goat trust --revoke.")


def _revoke(goat: GoatRuntime) -> None:
    removed = revoke_folder(goat.workspace)
    goat.trust_asked.clear()
    goat.reload_settings()
    if removed:
        print(
            f"No longer trusted: {goat.workspace}. Its servers, hooks, allow rules and mode are ignored now."
        )
    else:
        print(f"{goat.workspace} was not trusted.")


def _show(goat: GoatRuntime) -> None:
    state = folder_state(goat.workspace)
    items, pending = state.items, {item.key for item in state.pending}
    if not items:
        print(f"The project files of {goat.workspace} widen nothing: there is nothing to trust.")
        return
    print(f"Project settings of {goat.workspace} that need folder trust:")
    for item, line in zip(items, item_lines(items), strict=True):
        print(f"  [{'not trusted' if item.key in pending else 'trusted'}] {line}")
    print(f"%goat trust trusts them all; {TRUST_ENV}=1 trusts the folder for one run.")
    for note in goat.session.settings.project_notes:
        print(f"Ignored: {note}")
