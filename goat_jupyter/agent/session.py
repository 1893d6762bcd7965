"""A conversation: messages, usage and run records, persisted as JSONL under .goat/sessions/."""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from goat_jupyter.agent.history import INTERRUPTED_RESULT, repaired
from goat_jupyter.agent.spend import RunSpend
from goat_jupyter.agent.turns import Usage, as_list
from goat_jupyter.config.secrets import redact
from goat_jupyter.state import SessionState
from goat_jupyter.text import map_strings, utf8_line
from goat_jupyter.tools.redaction import cleaner

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; session ids stay random
    fcntl = None

Message = dict[str, Any]
__all__ = ["INTERRUPTED_RESULT", "Message", "Session", "load_session"]


@dataclass
class ContextState:
    """Per-session context bookkeeping: what the request prefix is, and what was pruned."""

    system: str | None = None  # the system prompt, fixed for the session so the prefix caches
    profile: str = ""  # the tool profile and output style the system prompt was built for
    preamble: str | None = None  # the workspace's facts and instructions, the first message
    tools: list[dict[str, Any]] | None = None
    tools_key: tuple[str, ...] = ()
    last_reminder: str | None = None
    # Changing facts (cwd, date, mode) are sent after the message at this index, never in the prefix.
    reminders: dict[int, str] = field(default_factory=lambda: dict[int, str]())
    prune_upto: int = 0  # outputs of messages before this index are sent as placeholders
    compactions: int = 0
    last_request_tokens: int = 0
    peak_request_tokens: int = 0


def sessions_dir(workspace: Path) -> Path:
    return workspace / ".goat" / "sessions"


@dataclass
class Session(SessionState):
    """SessionState plus the message history; every change is appended to the JSONL file."""

    messages: list[Message] = field(default_factory=lambda: list[Message]())
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    runs: int = 0
    created: float = field(default_factory=time.time)
    persist: bool = True
    context: ContextState = field(default_factory=ContextState)
    run_spend: RunSpend | None = field(default=None, repr=False)  # the running %%goat cell's spend
    unpriced_noted: set[str] = field(default_factory=lambda: set[str](), repr=False)  # said once each
    load_report: str = ""  # what resume dropped or repaired, for the user
    _lock: int | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return sessions_dir(self.workspace) / f"{self.session_id}.jsonl"

    def append(self, message: Message) -> None:
        # No known key in the history (a prompt or the model's echo) and text that encodes for the wire.
        message = map_strings(message, cleaner())
        self._write({"type": "message", "message": message})  # first: a fork copies the history so far
        self.messages.append(message)

    def record(self, kind: str, **data: Any) -> None:
        """A non-message line (run start/end, interrupts, usage) for history and resume."""
        self._write({"type": kind, "time": time.time(), **data})

    def _write(self, line: dict[str, Any]) -> None:
        if not self.persist:
            return
        try:
            self._claim()
            self._append([line])
        except OSError:
            self.persist = False  # a read-only workspace must not break the agent

    def _append(self, lines: list[dict[str, Any]]) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            for line in lines:
                # One write per line: a crash leaves whole lines, or one torn last line. The transcript
                # holds no known key, and a lone surrogate (a model's or a file name's) cannot stop it.
                text = redact(json.dumps(line, ensure_ascii=False, default=str))
                os.write(fd, utf8_line(text + "\n"))
        finally:
            os.close(fd)

    def _claim(self) -> None:
        """Hold this session's lock; if another kernel holds it, continue under a new id."""
        if self._lock is not None or fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        forked_from: str | None = None
        while True:
            fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                forked_from = forked_from or self.session_id
                self.session_id = uuid.uuid4().hex[:12]
                continue
            self._lock = fd
            break
        if forked_from is not None:
            self._copy_from(forked_from)

    def _copy_from(self, old: str) -> None:
        """Another kernel writes the old file: this session continues in a file of its own."""
        self.load_report += f" Session {old} is open in another kernel; continuing as {self.session_id}."
        lines: list[dict[str, Any]] = [{"type": "forked_from", "session_id": old, "time": time.time()}]
        self._append(lines + [{"type": "message", "message": m} for m in self.messages])

    def release(self) -> None:
        """Give up the file lock (the runtime switches to another session)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def repair(self) -> int:
        """Give every tool call a result so the history stays valid for the API; returns how many."""
        fixed, added, dropped = repaired(self.messages)
        if added or dropped:
            self.messages[:] = fixed
            for result in added:
                self._write({"type": "message", "message": result})
        return len(added)

    def compacted(self, messages: list[Message], summary: Message, kept: int) -> None:
        """Replace the history by a summary plus the verbatim tail; the file keeps the originals."""
        self.messages[:] = messages
        self.context.prune_upto = 0
        self.context.reminders.clear()
        self.context.last_reminder = None
        self.context.compactions += 1
        self._write({"type": "compaction", "time": time.time(), "summary": summary, "kept": kept})

    def reset(self) -> None:
        self.messages.clear()
        self.todos.clear()
        self.usage = Usage()
        self.turns = 0


def list_sessions(workspace: Path) -> list[Path]:
    """Saved sessions, newest first."""
    folder = sessions_dir(workspace)
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)


def _parse_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """Every line that is a whole JSON object; a torn or foreign line is counted and skipped."""
    lines: list[dict[str, Any]] = []
    dropped = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            dropped += 1
            continue
        if not isinstance(line, dict):
            dropped += 1
            continue
        lines.append(cast(dict[str, Any], line))
    return lines, dropped


def _valid_message(message: Any) -> bool:
    return isinstance(message, dict) and cast(dict[str, Any], message).get("role") in (
        "user",
        "assistant",
        "tool",
        "system",
    )


def _apply(session: Session, line: dict[str, Any]) -> bool:
    """Replay one saved line onto the session; False when it is damaged."""
    kind = line.get("type")
    if kind == "message":
        if not _valid_message(line.get("message")):
            return False
        session.messages.append(line["message"])
    elif kind == "compaction":
        kept = line.get("kept")
        if not _valid_message(line.get("summary")) or not isinstance(kept, int):
            return False
        tail = session.messages[len(session.messages) - kept :] if kept else []
        session.messages[:] = [line["summary"], *tail]
        session.context.compactions += 1
    elif kind == "usage":
        session.usage.add(_saved_usage(line))
        session.turns += 1
    return True


def _saved_usage(line: dict[str, Any]) -> Usage:
    def number(key: str) -> int:
        value = line.get(key, 0)
        return value if isinstance(value, int) else 0

    cost = line.get("cost_usd")
    return Usage(
        number("prompt_tokens"),
        number("completion_tokens"),
        cost if isinstance(cost, (int, float)) else None,
        number("cached_tokens"),
        number("cache_write_tokens"),
    )


def load_session(path: Path, workspace: Path) -> Session:
    """Rebuild a session from its JSONL file: damaged lines are dropped, the history repaired."""
    session = Session(workspace=workspace, session_id=path.stem, persist=False)
    lines, dropped = _parse_lines(path.read_bytes())
    dropped += sum(0 if _apply(session, line) else 1 for line in lines)
    fixed, added, orphans = repaired(session.messages)
    session.messages[:] = fixed
    session.persist = True
    for result in added:
        session._write({"type": "message", "message": result})  # pyright: ignore[reportPrivateUsage]
    session.load_report = _report(dropped, len(added), orphans) + session.load_report
    return session


def _report(dropped: int, added: int, orphans: int) -> str:
    parts: list[str] = []
    if dropped:
        parts.append(f"dropped {dropped} damaged line{'s' if dropped != 1 else ''} of the saved file")
    if added:
        parts.append(f"added {added} missing tool result{'s' if added != 1 else ''} (marked interrupted)")
    if orphans:
        parts.append(f"dropped {orphans} tool result{'s' if orphans != 1 else ''} whose call was lost")
    return ("Repaired while resuming: " + "; ".join(parts) + ".") if parts else ""


def summarize(messages: list[Message], limit: int = 20) -> list[str]:
    """One line per user/assistant message, for `%goat history`."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "user" and isinstance(content, str):
            lines.append(f"user: {content.strip()[:200]}")
        elif role == "assistant":
            calls = ", ".join(str(c["function"]["name"]) for c in as_list(message.get("tool_calls")))
            text = (content or "").strip()[:200]
            lines.append(f"assistant: {text}" + (f" [tools: {calls}]" if calls else ""))
    return lines[-limit:]
