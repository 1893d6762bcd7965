"""Agent teams (GOAT_EXPERIMENTAL_AGENT_TEAMS=1): members run concurrently and take messages."""

from __future__ import annotations

from dataclasses import dataclass, field

from goat_jupyter.errors import ConflictError, InvalidInputError
from goat_jupyter.processes.tasks import BackgroundTask
from goat_jupyter.subagents.runner import Subagent, SubagentRunner
from goat_jupyter.subagents.types import subagent_type
from goat_jupyter.tools.agents.agent import AgentInput
from goat_jupyter.tools.agents.send_message import SendMessageInput
from goat_jupyter.tools.agents.team_create import TeamCreateInput
from goat_jupyter.tools.agents.team_delete import TeamDeleteInput
from goat_jupyter.tools.base import ToolContext, ToolOutput

BROADCAST = "*"


def member_note(team: str, name: str, members: list[str]) -> str:
    """The system-prompt lines that tell a member who it is and how messages reach it."""
    others = ", ".join(m for m in members if m != name) or "none yet"
    return (
        f"You are '{name}', one member of the team '{team}' (other members: {others}), working at the "
        "same time as the others. Messages from the team lead arrive inside <system-reminder> blocks "
        "at the start of a turn; take them into account. Your final message is your report to the lead."
    )


@dataclass
class Member:
    name: str
    agent: Subagent
    inbox: list[str] = field(default_factory=lambda: list[str]())

    def take_inbox(self) -> list[str]:
        """Messages waiting for this member's next turn (the inbox is emptied)."""
        messages, self.inbox = self.inbox, []
        return messages


@dataclass
class Team:
    name: str
    members: dict[str, Member] = field(default_factory=lambda: dict[str, Member]())


class TeamRunner:
    """TeamCreate, SendMessage, TeamDelete; `services.teams` in a runtime."""

    def __init__(self, subagents: SubagentRunner) -> None:
        self.subagents = subagents
        self.teams: dict[str, Team] = {}

    async def create(self, args: TeamCreateInput, ctx: ToolContext) -> ToolOutput:
        if args.team_name in self.teams:
            raise ConflictError(
                f"A team named '{args.team_name}' already exists; delete it with TeamDelete or pick another name."
            )
        names = [member.name for member in args.members]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise InvalidInputError(
                f"Member names must be unique in a team; repeated: {', '.join(repeated)}."
            )
        for member in args.members:
            subagent_type(member.subagent_type)  # every type is checked before any member starts
        team = Team(args.team_name)
        self.teams[team.name] = team
        lines = [self._start(team, m.name, m.prompt, m.subagent_type, ctx, names) for m in args.members]
        return ToolOutput(
            f"Team {team.name} started; its {len(lines)} members work concurrently:\n"
            + "\n".join(lines)
            + "\nEach member's final report arrives as a background-task notice (read it with TaskOutput). "
            "SendMessage delivers a message into a member's next turn; TeamDelete stops them all.",
            metadata={
                "team_name": team.name,
                "members": {m.name: m.agent.task_id for m in team.members.values()},
            },
        )

    async def add_member(self, args: AgentInput, ctx: ToolContext) -> ToolOutput:
        """Agent with team_name: one more member for an existing team."""
        team = self._team(args.team_name or "")
        if not args.name:
            raise InvalidInputError("Joining a team needs a member name: set `name` as well as `team_name`.")
        if args.name in team.members:
            raise ConflictError(f"Team {team.name} already has a member named '{args.name}'.")
        names = [*team.members, args.name]
        line = self._start(team, args.name, args.prompt, args.subagent_type, ctx, names, model=args.model)
        return ToolOutput(f"Added to team {team.name}:\n{line}")

    def _start(
        self,
        team: Team,
        name: str,
        prompt: str,
        type_name: str,
        ctx: ToolContext,
        names: list[str],
        *,
        model: str | None = None,
    ) -> str:
        note = member_note(team.name, name, names)
        agent = self.subagents.create(
            type_name, f"team {team.name}, member {name}", ctx, model=model, note=note
        )
        member = Member(name, agent)
        team.members[name] = member
        task = self._launch(member, prompt, ctx)
        return f"- {name} ({agent.kind.name}): task {task.id}, agent {agent.id}"

    def _launch(self, member: Member, prompt: str, ctx: ToolContext) -> BackgroundTask:
        """Run the member until it ends with an empty inbox (messages that came as it finished go on)."""

        async def work() -> str:
            text = prompt
            while True:
                outcome = await self.subagents.run(member.agent, text, ctx, notices=member.take_inbox)
                if not member.inbox:
                    return outcome.report()
                text = "\n\n".join(member.take_inbox())

        return self.subagents.start_task(member.agent, work, ctx)

    async def send(self, args: SendMessageInput, ctx: ToolContext) -> ToolOutput:
        lines = [self._deliver(member, args.message, ctx) for member in self._recipients(args.to)]
        return ToolOutput("\n".join(lines))

    def _deliver(self, member: Member, message: str, ctx: ToolContext) -> str:
        text = f"Message from the team lead: {message}"
        if member.agent.running:
            member.inbox.append(text)
            return f"{member.name}: queued; it arrives in {member.name}'s next turn."
        task = self._launch(member, text, ctx)
        return f"{member.name}: it had finished, so it goes on with this message as task {task.id}."

    def _recipients(self, to: str) -> list[Member]:
        everyone = [member for team in self.teams.values() for member in team.members.values()]
        if not everyone:
            raise InvalidInputError(
                "There is no team member to message; create a team with TeamCreate first."
            )
        if to.strip() == BROADCAST:
            return everyone
        found = [m for m in everyone if m.name == to]
        if not found and "/" in to:
            team_name, _, name = to.rpartition("/")
            found = [m for m in self.teams.get(team_name, Team("")).members.values() if m.name == name]
        if len(found) > 1:
            raise InvalidInputError(f"Several teams have a member named '{to}'; write it as team/member.")
        if not found:
            known = ", ".join(f"{t.name}/{m}" for t in self.teams.values() for m in t.members)
            raise InvalidInputError(f"No team member named '{to}'. Members: {known}; or '*' for all.")
        return found

    async def delete(self, args: TeamDeleteInput, ctx: ToolContext) -> ToolOutput:
        team = self._team(args.team_name)
        del self.teams[team.name]
        lines = [await self._stop(member, ctx) for member in team.members.values()]
        return ToolOutput(f"Team {team.name} deleted:\n" + "\n".join(lines))

    async def _stop(self, member: Member, ctx: ToolContext) -> str:
        tasks = ctx.session.tasks
        task_id = member.agent.task_id
        if task_id is None:
            return f"- {member.name}: never started"
        task = tasks.get(task_id)
        if task.status != "running":
            return f"- {member.name}: had already {task.status} (task {task_id})"
        await tasks.stop(task_id)
        tasks.mark_reported(task_id)  # this result already tells the model it stopped
        return f"- {member.name}: stopped (task {task_id})"

    def _team(self, name: str) -> Team:
        team = self.teams.get(name)
        if team is None:
            known = ", ".join(self.teams) or "none"
            raise InvalidInputError(f"No team named '{name}'. Teams: {known}.")
        return team
