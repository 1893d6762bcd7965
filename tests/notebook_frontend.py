"""A small, honest stand-in for the goat-jupyter labextension: in-memory notebooks answering the
`goat.notebook` protocol, over a real kernel (KernelSession) or in-process (a loopback comm)."""

from __future__ import annotations

import asyncio
import copy
import threading
import uuid
from collections.abc import Callable
from typing import Any, Literal

from goat_jupyter.live.comm_bridge import COMM_TARGET, CommHandle, MessageCallback
from tests.kernel_harness import KernelSession, Message

# answer: like the labextension; close: no extension (JupyterLab closes the comm); silent: no reply;
# ack: replies "ok" to every change without applying it (the bug edits must be proven against).
Mode = Literal["answer", "close", "silent", "ack"]
CELL_TYPES = ("code", "markdown", "raw")
CHANGES = ("insert_cell", "replace_cell", "delete_cell", "set_outputs", "run_started", "run_finished")


def new_cell(
    cell_type: str, source: str, metadata: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "id": uuid.uuid4().hex[:8],
        "cell_type": cell_type,
        "source": source,
        "metadata": metadata or {},
    }
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    cell.update(extra)
    return cell


class FakeNotebookFrontend:
    """Notebooks by server-relative path; `own_path` is the panel whose kernel asks."""

    def __init__(
        self, own_path: str, cells: list[dict[str, Any]], *, server_root: str, mode: Mode = "answer"
    ) -> None:
        self.own_path = own_path
        self.server_root = server_root
        self.mode = mode
        self.notebooks: dict[str, list[dict[str, Any]]] = {own_path: cells}
        self.dirty: dict[str, bool] = {own_path: False}
        self.running_cell_id: str | None = None
        self.requests: list[Message] = []
        self.opened: list[Message] = []  # comm_open messages seen
        self.saved: list[str] = []
        self.replaced_outputs: list[dict[str, Any]] = []  # replace_goat_output requests
        self.runs: dict[str, str] = {}  # RunCell run id -> cell id (run_started)
        self.running: set[str] = set()  # cells shown as running ([*]) now
        self.routes_runs = True  # False: a labextension from before run_started (unknown op)

    def attach(self, kernel: KernelSession) -> FakeNotebookFrontend:
        kernel.comm_handlers[COMM_TARGET] = self.on_comm
        return self

    def cells(self, path: str | None = None) -> list[dict[str, Any]]:
        return self.notebooks[path or self.own_path]

    def cell(self, cell_id: str, path: str | None = None) -> dict[str, Any]:
        return next(c for c in self.cells(path) if c["id"] == cell_id)

    def user_edit(self, cell_id: str, source: str) -> None:
        """What typing in a cell does: the source changes and the notebook becomes dirty."""
        self.cell(cell_id)["source"] = source
        self.dirty[self.own_path] = True

    def on_comm(self, kernel: KernelSession, msg: Message) -> None:
        kind, content = msg["header"]["msg_type"], msg["content"]
        if kind == "comm_open":
            self.opened.append(msg)
            if self.mode == "close":
                kernel.close_comm(content["comm_id"])
        elif kind == "comm_msg" and self.mode in ("answer", "ack"):
            kernel.send_comm(content["comm_id"], self.answer(content["data"]))

    def answer(self, request: Message) -> Message:
        """The reply the labextension would send: `{id, ok: true, ...}` or `{id, ok: false, error}`."""
        self.requests.append(copy.deepcopy(request))
        if self.mode == "ack" and request.get("op") in CHANGES:
            return {"id": request.get("id"), "ok": True, "cell_id": uuid.uuid4().hex[:8], "index": 0}
        handler = getattr(self, f"_op_{request.get('op')}", None)
        try:
            if handler is None:
                raise ValueError(f"unknown op {request.get('op')!r}")
            result = handler(request)
        except (KeyError, ValueError) as exc:
            return {"id": request.get("id"), "ok": False, "error": str(exc).strip("'\"")}
        return {**result, "id": request.get("id"), "ok": True}

    def _notebook(self, request: Message) -> tuple[str, list[dict[str, Any]]]:
        path = request.get("path") or self.own_path
        if path not in self.notebooks:
            raise ValueError(f"notebook '{path}' is not open in this JupyterLab")
        return path, self.notebooks[path]

    def _find(self, cells: list[dict[str, Any]], cell_id: str, path: str) -> int:
        for index, cell in enumerate(cells):
            if cell["id"] == cell_id:
                return index
        raise ValueError(f"no cell with id '{cell_id}' in '{path}'")

    def _op_hello(self, request: Message) -> Message:
        return {"path": self.own_path, "server_root": self.server_root, "client": "fake", "version": "0"}

    def _op_list_cells(self, request: Message) -> Message:
        path, cells = self._notebook(request)
        return {"path": path, "dirty": self.dirty.get(path, False), "cells": copy.deepcopy(cells)}

    def _op_insert_cell(self, request: Message) -> Message:
        path, cells = self._notebook(request)
        after = request.get("after_id")
        index = 0 if after is None else self._find(cells, after, path) + 1
        if request["cell_type"] not in CELL_TYPES:
            raise ValueError("'cell_type' must be one of code, markdown, raw")
        cell = new_cell(request["cell_type"], request["source"], copy.deepcopy(request.get("metadata") or {}))
        cells.insert(index, cell)
        self.dirty[path] = True
        return {"cell_id": cell["id"], "index": index}

    def _op_replace_cell(self, request: Message) -> Message:
        path, cells = self._notebook(request)
        index = self._find(cells, request["cell_id"], path)
        old = cells[index]
        new_type = request.get("cell_type") or old["cell_type"]
        metadata = request.get("metadata")
        if new_type != old["cell_type"]:
            cells[index] = new_cell(new_type, request["source"], metadata or old["metadata"], id=old["id"])
        else:
            old["source"] = request["source"]
            if metadata is not None:
                old["metadata"] = copy.deepcopy(metadata)
            if request.get("clear_outputs") and old["cell_type"] == "code":
                old.update(outputs=[], execution_count=None)
        self.dirty[path] = True
        return {"cell_id": request["cell_id"]}

    def _op_delete_cell(self, request: Message) -> Message:
        path, cells = self._notebook(request)
        del cells[self._find(cells, request["cell_id"], path)]
        self.dirty[path] = True
        return {}

    def _op_set_outputs(self, request: Message) -> Message:
        path, cells = self._notebook(request)
        cell = cells[self._find(cells, request["cell_id"], path)]
        if cell["cell_type"] != "code":
            raise ValueError(
                f"cell '{cell['id']}' is a {cell['cell_type']} cell; only code cells have outputs"
            )
        cell["outputs"] = copy.deepcopy(request["outputs"])
        if "execution_count" in request:
            cell["execution_count"] = request["execution_count"]
        self.dirty[path] = True
        return {}

    def _op_run_started(self, request: Message) -> Message:
        """Like the labextension: the cell is cleared and shows [*]; the kernel's IOPub messages
        whose parent is the run id belong to it (`routed` reads them from the kernel's log)."""
        if not self.routes_runs:
            raise ValueError("unknown op 'run_started'")
        path, cells = self._notebook(request)
        cell = cells[self._find(cells, request["cell_id"], path)]
        cell.update(outputs=[], execution_count=None)
        self.runs[request["run_id"]] = cell["id"]
        self.running.add(cell["id"])
        return {}

    def _op_run_finished(self, request: Message) -> Message:
        result = self._op_set_outputs(request)
        self.running.discard(self.runs[request["run_id"]])
        return result

    def _op_replace_goat_output(self, request: Message) -> Message:
        """Like the labextension: the goat output tagged `key` becomes a display of `data`."""
        path, cells = self._notebook(request)
        cell = cells[self._find(cells, request["cell_id"], path)]
        self.replaced_outputs.append({"cell_id": cell["id"], "key": request["key"], "data": request["data"]})
        return {}

    def _op_running_cell(self, request: Message) -> Message:
        if self.running_cell_id is None:
            raise ValueError("no running or active cell in this notebook")
        return {"cell_id": self.running_cell_id}

    def _op_is_open(self, request: Message) -> Message:
        return {"open": request["path"] in self.notebooks}

    def _op_save(self, request: Message) -> Message:
        path, _ = self._notebook(request)
        self.saved.append(path)
        self.dirty[path] = False
        return {}


class LoopbackComm:
    """An in-process comm to a FakeNotebookFrontend; replies come back on the loop or another thread."""

    def __init__(
        self,
        frontend: FakeNotebookFrontend,
        on_msg: MessageCallback,
        on_close: MessageCallback,
        *,
        from_thread: bool = False,
    ) -> None:
        self.frontend, self.on_msg, self.on_close = frontend, on_msg, on_close
        self.from_thread = from_thread
        self.sent: list[Message] = []
        self.closed = False
        self.loop = asyncio.get_running_loop()
        if frontend.mode == "close":
            self.loop.call_later(0.01, self.on_close, {"content": {"data": {}}})

    def send(self, data: Message) -> None:
        self.sent.append(data)
        if self.frontend.mode not in ("answer", "ack"):
            return
        reply: Message = {"content": {"comm_id": "loopback", "data": self.frontend.answer(data)}}
        if self.from_thread:
            threading.Thread(target=self.on_msg, args=(reply,)).start()
        else:
            self.loop.call_soon(self.on_msg, reply)

    def close(self) -> None:
        self.closed = True


def loopback_opener(
    frontend: FakeNotebookFrontend, comms: list[LoopbackComm] | None = None, *, from_thread: bool = False
) -> Callable[[str, MessageCallback, MessageCallback], CommHandle]:
    """A CommOpener for CommBridge that talks to `frontend` without a kernel."""

    def opener(target: str, on_msg: MessageCallback, on_close: MessageCallback) -> CommHandle:
        assert target == COMM_TARGET
        comm = LoopbackComm(frontend, on_msg, on_close, from_thread=from_thread)
        if comms is not None:
            comms.append(comm)
        return comm

    return opener
