"""A running cell's outputs as the frontend would hold them, rebuilt from the iopub messages sent for it.

A browser tab that reloads mid-run lost every message sent before it came back; it gets this list and
shows it instead of the cell's saved outputs (which lag behind by up to an autosave interval). The
rules are JupyterLab's OutputArea rules: streams of one name merge, `update_display_data` replaces
every output of its display id, `clear_output(wait=True)` clears at the next output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

MAX_STREAM_CHARS = 200_000  # a stream keeps its tail: a printing loop must not grow the kernel
OUTPUT_TYPES = frozenset({"stream", "display_data", "execute_result", "error"})
RECORDED = OUTPUT_TYPES | {"update_display_data", "clear_output"}

Output = dict[str, Any]


@dataclass
class Shown:
    """One output of the cell and the display id later updates address it by."""

    output: Output
    display_id: str | None = None


@dataclass
class RunOutputs:
    shown: list[Shown] = field(default_factory=lambda: list[Shown]())
    clear_pending: bool = False

    def apply(self, msg_type: str, content: dict[str, Any]) -> None:
        """Apply one iopub message of the run (other message types are ignored)."""
        if msg_type == "clear_output":
            self._clear(bool(content.get("wait")))
        elif msg_type == "update_display_data":
            self._update(content)
        elif msg_type in OUTPUT_TYPES:
            self._add(msg_type, content)

    def listing(self) -> list[dict[str, Any]]:
        """What goes to the reloaded tab: each output with its display id."""
        return [{"output": shown.output, "display_id": shown.display_id} for shown in self.shown]

    def _clear(self, wait: bool) -> None:
        if wait:
            self.clear_pending = True
        else:
            self.shown.clear()

    def _add(self, msg_type: str, content: dict[str, Any]) -> None:
        if self.clear_pending:
            self.shown.clear()
            self.clear_pending = False
        if msg_type == "stream" and self._merge_stream(content):
            return
        output = {key: value for key, value in content.items() if key != "transient"}
        self.shown.append(Shown({**output, "output_type": msg_type}, _display_id(content)))

    def _merge_stream(self, content: dict[str, Any]) -> bool:
        last = self.shown[-1].output if self.shown else None
        if last is None or last.get("output_type") != "stream" or last.get("name") != content.get("name"):
            return False
        last["text"] = (str(last.get("text", "")) + str(content.get("text", "")))[-MAX_STREAM_CHARS:]
        return True

    def _update(self, content: dict[str, Any]) -> None:
        display_id = _display_id(content)
        for shown in self.shown:
            if display_id is not None and shown.display_id == display_id:
                shown.output = {
                    **shown.output,
                    "data": content.get("data", {}),
                    "metadata": content.get("metadata", {}),
                }


def _display_id(content: dict[str, Any]) -> str | None:
    transient = content.get("transient")
    if not isinstance(transient, dict):
        return None
    display_id = cast(dict[str, Any], transient).get("display_id")
    return display_id if isinstance(display_id, str) else None
