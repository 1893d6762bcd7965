"""The settings model, and what a project file may do with each setting (its `Scope`).

Every field carries its scope as `Annotated` metadata, the one place folder trust, the project-limit
rule and the Config tool read it from; a field without one counts as user-only (fail closed).
`resolve_names` turns every spelling pydantic accepts (field name, alias, validation aliases, nested
models too) into the field's own name, so each rule is checked on one spelling only.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.fields import FieldInfo


class Scope(enum.Enum):
    """What a workspace's `.goat/settings.json` may do with a setting."""

    FREE = "free"  # applies at once: it changes no rights (the model, the output style)
    LIMIT = "limit"  # a limit: a project value applies only when it lowers the user's
    USER = "user"  # user-only: a project value waits for folder trust (an endpoint gets the key)
    RIGHTS = "rights"  # servers, hooks, rules, the mode: each entry waits for trust (config/project.py)


FREE, LIMIT, USER, RIGHTS = Scope.FREE, Scope.LIMIT, Scope.USER, Scope.RIGHTS

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
ToolProfile = Literal["auto", "full", "lean"]
ActionStyle = Literal["auto", "tools", "code"]  # agent/code_style/blocks.py
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
)

OutputStyle = Literal["default", "explain", "tutor"]
OUTPUT_STYLES: tuple[OutputStyle, ...] = ("default", "explain", "tutor")
CiteNumbers = Literal["off", "remind"]  # numbers an answer states uncited: kernel/cite_run.py
ReplayMode = Literal["auto", "always", "never"]  # a %%goat cell's recording: kernel/replay_run.py
REPLAY_MODES: tuple[ReplayMode, ...] = ("auto", "always", "never")


class PermissionRules(BaseModel):
    """Claude Code's `permissions` block."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    default_mode: PermissionMode | None = Field(default=None, alias="defaultMode")


class Settings(BaseModel):
    """Everything a user can configure; unknown keys in files are ignored, not fatal."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, validate_assignment=True)

    model: Annotated[str, FREE] = "gpt-4o-mini"
    small_model: Annotated[str | None, FREE] = None
    permission_mode: Annotated[PermissionMode, RIGHTS] = "default"
    output_style: Annotated[OutputStyle, FREE] = "default"  # agent/styles.py
    replay: Annotated[ReplayMode, FREE] = "auto"
    max_turns: Annotated[int, LIMIT] = Field(default=50, ge=1, le=1000)
    temperature: Annotated[float | None, FREE] = Field(default=None, ge=0, le=2)
    max_tokens: Annotated[int | None, LIMIT] = Field(default=None, ge=1)
    show_usage: Annotated[bool, FREE] = True
    max_retries: Annotated[int, LIMIT] = Field(default=4, ge=0, le=20)
    retry_base_delay_s: Annotated[float, FREE] = Field(default=1.0, ge=0, le=60)
    web_search_provider: Annotated[str, FREE] = "duckduckgo"
    # Long sessions (issue 11): the window, when to compact, timeouts and retry bounds.
    context_window: Annotated[int | None, USER] = Field(default=None, ge=1024)  # models litellm does not know
    compact_at: Annotated[float, FREE] = Field(default=0.85, gt=0.1, le=0.95)  # share of the usable window
    keep_recent_tokens: Annotated[int, FREE] = Field(default=40_000, ge=0)  # newer tool outputs stay whole
    prompt_caching: Annotated[bool, FREE] = True
    first_token_timeout_s: Annotated[float, LIMIT] = Field(default=120.0, gt=0)
    idle_timeout_s: Annotated[float, LIMIT] = Field(default=60.0, gt=0)
    max_retry_after_s: Annotated[float, LIMIT] = Field(default=120.0, ge=0)
    max_retry_wait_s: Annotated[float, LIMIT] = Field(default=300.0, ge=0)
    model_aliases: Annotated[dict[str, str], FREE] = Field(default_factory=dict)
    # Budgets (dollars from litellm's prices; tokens counted for models without a price).
    max_cost_per_run: Annotated[float | None, LIMIT] = Field(default=None, ge=0)
    max_cost_per_session: Annotated[float | None, LIMIT] = Field(default=None, ge=0)
    max_tokens_per_run: Annotated[int | None, LIMIT] = Field(default=None, ge=1)
    max_cost_per_user_per_day: Annotated[float | None, LIMIT] = Field(default=None, ge=0)  # agent/ledger.py
    # "Revert this run": how much a run may copy of kernel objects its code may change in place.
    revert_memory_mb: Annotated[float, LIMIT] = Field(default=200.0, ge=0)
    # A tool result longer than this is stored whole under the session folder; the model gets its
    # ends and the path (represent/spill.py).
    large_output_chars: Annotated[int, FREE] = Field(default=8_000, ge=1_000)
    # MCP tool definitions sent with every request, in tokens; a server whose tools pass what is left
    # is deferred behind ToolSearch (tools/offer.py). A limit: a project's server cannot raise it.
    mcp_tools_budget: Annotated[int, LIMIT] = Field(default=2_000, ge=0)
    # Small and local models (issue 23): where the model is served, the tool set, text tool calls.
    api_base: Annotated[str | None, USER] = (
        None  # an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8089/v1
    )
    tool_profile: Annotated[ToolProfile, USER] = "auto"  # auto: lean for small windows and local endpoints
    text_tool_calls: Annotated[bool, USER] = True  # run one well-formed tool call a model wrote as text
    # remind: numbers an answer states with no [cell N] citation get a note to the model (classrooms);
    # only the user sets it, so the model cannot switch its own reminder off.
    cite_numbers: Annotated[CiteNumbers, USER] = "off"
    # Issue 34: `code` runs a reply's fenced python / bash blocks as the action; auto: code in the lean profile.
    action_style: Annotated[ActionStyle, USER] = "auto"
    # Agent notebook edits wait on the cells for the user's Keep / Undo (labextension review.ts). The
    # user's alone: the model must not switch its own review off.
    review_edits: Annotated[bool, USER] = True
    local_prompt_tokens_per_s: Annotated[float, FREE] = Field(default=20.0, gt=0)  # slowest prompt reading
    permissions: Annotated[PermissionRules, RIGHTS] = Field(default_factory=PermissionRules)
    hooks: Annotated[dict[str, Any], RIGHTS] = Field(default_factory=dict)
    mcp_servers: Annotated[dict[str, Any], RIGHTS] = Field(default_factory=dict, alias="mcpServers")
    # What the managed policy refused of the files and the environment, one sentence each.
    _managed_notes: list[str] = PrivateAttr(default_factory=lambda: list[str]())
    _managed_broken: str | None = PrivateAttr(default=None)
    # Limits a project file tried to raise or remove (ignored), one sentence each.
    _project_notes: list[str] = PrivateAttr(default_factory=lambda: list[str]())

    @property
    def managed_notes(self) -> list[str]:
        return self._managed_notes

    @property
    def project_notes(self) -> list[str]:
        return self._project_notes

    @property
    def managed_broken(self) -> str | None:
        """Set when the managed policy could not be applied: goat refuses to run (fail closed)."""
        return self._managed_broken

    @managed_broken.setter
    def managed_broken(self, text: str | None) -> None:
        self._managed_broken = text


def scope(name: str) -> Scope:
    """The scope a field declares; USER when it declares none (a new setting waits for trust)."""
    found = [item for item in Settings.model_fields[name].metadata if isinstance(item, Scope)]
    return found[0] if found else USER


def fields_of(kind: Scope) -> tuple[str, ...]:
    """Every setting of one scope, in the model's order."""
    return tuple(name for name in Settings.model_fields if scope(name) is kind)


def accepted_names(name: str, info: FieldInfo) -> list[str]:
    """Every top-level key pydantic takes for the field, the field's own name first."""
    names = [name, info.alias]
    choice = info.validation_alias
    if isinstance(choice, AliasChoices):
        names += [item for item in choice.choices if isinstance(item, str)]
    elif isinstance(choice, str):
        names.append(choice)
    return list(dict.fromkeys(n for n in names if n))


def resolve_names(data: Mapping[str, Any], model: type[BaseModel] = Settings) -> dict[str, Any]:
    """`data` with each setting under its field name (nested models too); unknown keys dropped.
    Two spellings of one setting are joined: objects merged (the alias's entries win, as in
    pydantic), anything else the alias's value."""
    resolved: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        found = [_resolved(data[key], info) for key in accepted_names(name, info) if key in data]
        if found:
            resolved[name] = _joined(found)
    return resolved


def _resolved(value: object, info: FieldInfo) -> object:
    inner = _model_in(info.annotation)
    if inner is None or not isinstance(value, dict):
        return value
    return resolve_names(cast("dict[str, Any]", value), inner)


def _model_in(annotation: object) -> type[BaseModel] | None:
    """The pydantic model a field holds (also inside `X | None`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for arg in get_args(annotation) if (m := _model_in(arg)) is not None), None)


def _joined(values: list[object]) -> object:
    if len(values) > 1 and all(isinstance(v, dict) for v in values):
        merged: dict[str, Any] = {}
        for value in values:
            merged.update(cast("dict[str, Any]", value))
        return merged
    return values[-1]
