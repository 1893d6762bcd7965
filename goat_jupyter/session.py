"""A conversation: messages, usage and run records, persisted as JSONL under .goat/sessions/."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goat_jupyter.llm import Usage, as_list
from goat_jupyter.state import SessionState

Message = dict[str, Any]
INTERRUPTED_RESULT = "Error: interrupted by the user before this tool finished."


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

    @property
    def path(self) -> Path:
        return sessions_dir(self.workspace) / f"{self.session_id}.jsonl"

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._write({"type": "message", "message": message})

    def record(self, kind: str, **data: Any) -> None:
        """A non-message line (run start/end, interrupts, usage) for history and resume."""
        self._write({"type": kind, "time": time.time(), **data})

    def _write(self, line: dict[str, Any]) -> None:
        if not self.persist:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        except OSError:
            self.persist = False  # a read-only workspace must not break the agent

    def repair(self) -> int:
        """Give every tool call a result so the history stays valid for the API; returns how many."""
        answered = {m.get("tool_call_id") for m in self.messages if m.get("role") == "tool"}
        added = 0
        for index, message in enumerate(list(self.messages)):
            for call in as_list(message.get("tool_calls")):
                if call["id"] not in answered:
                    result: Message = {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": INTERRUPTED_RESULT,
                    }
                    self.messages.insert(index + 1 + added, result)
                    self._write({"type": "message", "message": result})
                    answered.add(call["id"])
                    added += 1
        return added

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


def load_session(path: Path, workspace: Path) -> Session:
    """Rebuild a session from its JSONL file; tool calls left without results get one."""
    session = Session(workspace=workspace, session_id=path.stem, persist=False)
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # a line cut by a crash; the rest is still good
        if line.get("type") == "message":
            session.messages.append(line["message"])
        elif line.get("type") == "usage":
            session.usage.add(
                Usage(line.get("prompt_tokens", 0), line.get("completion_tokens", 0), line.get("cost_usd"))
            )
            session.turns += 1
    session.persist = True
    session.repair()
    return session


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
