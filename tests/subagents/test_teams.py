"""Agent teams: members run concurrently, messages reach a member's next turn, TeamDelete stops them.

The replay server gets a turn source that can hold a member's first request until another request
has arrived; that is how the tests prove two requests were in flight at once, without timing.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from goat_jupyter.replay import ReplayServer, to_cassette
from goat_jupyter.replay.cassette import AnyTurn
from goat_jupyter.replay.player import PickedTurn, ScriptPlayer
from goat_jupyter.tools.agents.send_message import SendMessageTool
from goat_jupyter.tools.agents.team_create import TeamCreateTool
from goat_jupyter.tools.agents.team_delete import TeamDeleteTool
from tests.subagents.test_subagents import PARENT, Rig, make_rig, parent_turn

TEAM_TOOLS = (TeamCreateTool(), SendMessageTool(), TeamDeleteTool())
HOLD_S = 5.0


def member(name: str) -> str:
    """Text only that member's own requests contain (from its system prompt)."""
    return f"You are '{name}'"


class GatedPlayer:
    """A ScriptPlayer whose first request containing a marker waits until a request with another marker came."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.player = ScriptPlayer(to_cassette(turns))
        self._seen: dict[str, threading.Event] = {}
        self._holds: list[tuple[str, str]] = []
        self.timed_out: list[str] = []

    @property
    def model(self) -> str | None:
        return self.player.model

    @property
    def remaining(self) -> list[AnyTurn]:
        return self.player.remaining

    def hold(self, marker: str, until: str) -> None:
        self._seen.setdefault(until, threading.Event())
        self._holds.append((marker, until))

    def pick(self, request: dict[str, Any]) -> PickedTurn:
        text = json.dumps(request.get("messages"), ensure_ascii=False)
        for marker, event in self._seen.items():
            if marker in text:
                event.set()
        for marker, until in list(self._holds):
            if marker in text:
                self._holds.remove((marker, until))
                if not self._seen[until].wait(HOLD_S):
                    self.timed_out.append(marker)
        return self.player.pick(request)


def team_call(*members: tuple[str, str], team: str = "crew") -> dict[str, Any]:
    specs = [{"name": name, "prompt": prompt} for name, prompt in members]
    return {"name": "TeamCreate", "arguments": {"team_name": team, "members": specs}}


def member_requests(server: ReplayServer, name: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if member(name) in str(r["messages"][0]["content"])]


async def run_lead(server: ReplayServer, tmp_path: Path, prompt: str) -> Rig:
    rig = make_rig(tmp_path, server.url, extra_tools=TEAM_TOOLS)
    await rig.agent.run(f"{PARENT}: {prompt}")
    return rig


async def test_members_run_concurrently_and_report_as_notices(tmp_path: Path) -> None:
    source = GatedPlayer(
        [
            parent_turn(team_call(("alpha", "Count the rows."), ("beta", "Count the columns."))),
            parent_turn(text="The team is working."),
            parent_turn(text="Both reported."),
            {"match": member("alpha"), "text": "alpha: 10 rows."},
            {"match": member("beta"), "text": "beta: 3 columns."},
        ]
    )
    # Each member's first request waits for the other's: sequential members would time out here.
    source.hold(member("alpha"), until=member("beta"))
    source.hold(member("beta"), until=member("alpha"))
    with ReplayServer(source=source) as server:
        rig = await run_lead(server, tmp_path, "start a team")
        created = rig.tool_results()[0]
        alpha = await rig.session.tasks.wait("agent_1", 10)
        beta = await rig.session.tasks.wait("agent_2", 10)
        await rig.agent.run(f"{PARENT}: how did it go?")
        reminder = server.requests[-1]["messages"][-1]["content"]
    assert source.timed_out == []
    assert "alpha" in created and "beta" in created and "agent_1" in created and "agent_2" in created
    assert alpha.status == beta.status == "completed"
    assert alpha.output.startswith("alpha: 10 rows.") and beta.output.startswith("beta: 3 columns.")
    assert "Background task agent_1" in reminder and "Background task agent_2" in reminder
    assert "team 'crew'" in member_requests(server, "alpha")[0]["messages"][0]["content"]


async def test_send_message_arrives_in_the_members_next_turn(tmp_path: Path) -> None:
    source = GatedPlayer(
        [
            parent_turn(team_call(("alpha", "List the folder.")), text=""),
            parent_turn({"name": "SendMessage", "arguments": {"to": "alpha", "message": "LEAD-NOTE use 7"}}),
            parent_turn(text="Sent."),
            {"match": "LEAD-NOTE", "text": "alpha: using 7 as told."},
            {"match": member("alpha"), "tool_calls": [{"name": "LS", "arguments": {"path": str(tmp_path)}}]},
        ]
    )
    # alpha's first request waits until the lead has sent its message, so alpha is still running.
    source.hold(member("alpha"), until="arrives in alpha's next turn")
    with ReplayServer(source=source) as server:
        rig = await run_lead(server, tmp_path, "start and message")
        task = await rig.session.tasks.wait("agent_1", 10)
        second = member_requests(server, "alpha")[1]["messages"]
    assert source.timed_out == []
    assert "queued" in rig.tool_results()[1]
    # The message came after alpha's LS result, inside alpha's own next request.
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert "Message from the team lead: LEAD-NOTE use 7" in second[-1]["content"]
    assert task.status == "completed" and task.output.startswith("alpha: using 7 as told.")


async def test_message_to_a_finished_member_continues_it_and_unknown_names_fail(tmp_path: Path) -> None:
    turns = [
        parent_turn(team_call(("alpha", "Say hi.")), text=""),
        parent_turn(text="Started."),
        parent_turn(
            {"name": "SendMessage", "arguments": {"to": "alpha", "message": "LEAD-AGAIN say bye"}},
            {"name": "SendMessage", "arguments": {"to": "gamma", "message": "hello?"}},
        ),
        parent_turn(text="Done."),
        {"match": "LEAD-AGAIN", "text": "alpha: bye."},
        {"match": member("alpha"), "text": "alpha: hi."},
    ]
    with ReplayServer(turns) as server:
        rig = await run_lead(server, tmp_path, "start")
        await rig.session.tasks.wait("agent_1", 10)
        await rig.agent.run(f"{PARENT}: message them")
        again = await rig.session.tasks.wait("agent_2", 10)
        # After the system prompt: the preamble (the folder's facts), then the member's own history.
        history = [m.get("content") for m in member_requests(server, "alpha")[1]["messages"][2:]]
    continued, unknown = rig.tool_results()[1:]
    assert "agent_2" in continued
    assert unknown.startswith("Error: ") and "gamma" in unknown and "crew/alpha" in unknown
    assert again.output.startswith("alpha: bye.")
    assert history == ["Say hi.", "alpha: hi.", "Message from the team lead: LEAD-AGAIN say bye"]


async def test_team_delete_stops_every_member(tmp_path: Path) -> None:
    source = GatedPlayer(
        [
            parent_turn(team_call(("alpha", "Work slowly.")), text=""),
            parent_turn({"name": "TeamDelete", "arguments": {"team_name": "crew"}}),
            parent_turn({"name": "SendMessage", "arguments": {"to": "*", "message": "anyone?"}}),
            parent_turn(text="Stopped."),
            {"match": member("alpha"), "text": "alpha: finished."},
        ]
    )
    source.hold(member("alpha"), until="Team crew deleted")  # alpha is mid-request when the lead deletes
    with ReplayServer(source=source) as server:
        rig = await run_lead(server, tmp_path, "start and stop")
        task = rig.session.tasks.get("agent_1")
        notices = rig.session.tasks.drain_notices()
    deleted, after = rig.tool_results()[1:]
    assert "alpha: stopped (task agent_1)" in deleted
    assert task.status == "stopped"
    assert notices == [], "the TeamDelete result already reported the stop"
    assert after.startswith("Error: ") and "TeamCreate" in after
