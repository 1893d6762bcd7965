"""Approvals for an outside agent's calls: a prompt in the JupyterLab page (over the tab channel), the
call waiting for the answer; no page, or no answer in time, is a denial with a sentence to act on.

Only the page answers: no MCP tool can, so a client cannot approve its own call."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, cast

from goat_jupyter.mcp_server.tab_channel import TabChannels
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest

APPROVAL_TIMEOUT_S = 120.0
CHOICES = ("allow_once", "allow_session", "deny")


class PageApprover:
    """An Approver (permissions/policy.py) that asks in the connected JupyterLab page."""

    def __init__(self, tabs: TabChannels, client: str, timeout: float = APPROVAL_TIMEOUT_S) -> None:
        self.tabs, self.client, self.timeout = tabs, client, timeout
        self._ids = itertools.count(1)

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        if not self.tabs.connected:
            return ApprovalAnswer("deny", _nobody(self.client))
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[dict[str, Any]] = loop.create_future()
        request_id = f"approval-{next(self._ids)}"

        def on_msg(msg: dict[str, Any]) -> None:
            data = cast("dict[str, Any]", msg.get("content", {}).get("data") or {})
            if data.get("id") == request_id and not answered.done():
                answered.set_result(data)

        comm = self.tabs.open("goat.mcp.approval", on_msg, lambda msg: None)
        try:
            comm.send({"id": request_id, "op": "mcp_approval", **_shown(request, self.client)})
            reply = await asyncio.wait_for(answered, self.timeout)
        except (asyncio.TimeoutError, ConnectionError):
            return ApprovalAnswer("deny", _unanswered(self.client, self.timeout))
        finally:
            comm.close()
        return _answer(reply)


def _shown(request: ApprovalRequest, client: str) -> dict[str, Any]:
    """What the prompt shows: which agent, what it wants, where, and the change."""
    args = request.args
    return {
        "client": client,
        "tool": request.tool_name,
        "title": request.title,
        "reason": request.reason,
        "path": str(args.get("notebook_path") or ""),
        "cell_id": str(args.get("cell_id") or ""),
        "preview": str(args.get("new_source") or args.get("expression") or "")
        or json.dumps(args, indent=1)[:4000],
        "edit_mode": str(args.get("edit_mode") or ""),
        "allow_session": bool(request.rules),
    }


def _answer(reply: dict[str, Any]) -> ApprovalAnswer:
    choice = reply.get("choice")
    if reply.get("ok") and choice in ("allow_once", "allow_session"):
        return ApprovalAnswer("allow_once" if choice == "allow_once" else "allow_session")
    return ApprovalAnswer("deny", "The user denied this call in JupyterLab. Do not retry it unchanged.")


def _nobody(client: str) -> str:
    return (
        f"Nobody can approve {client}'s call: no JupyterLab page with goat is connected to this server. "
        "Ask the user to open the notebook in JupyterLab, or to allow this tool in goat's permission "
        "rules (~/.goat/settings.json), then call again."
    )


def _unanswered(client: str, timeout: float) -> str:
    return (
        f"The user did not answer {client}'s request in JupyterLab within {timeout:g} s, so it was "
        "denied. Tell the user what you want to do and call again when they are ready."
    )
