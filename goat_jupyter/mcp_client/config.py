"""MCP server configuration: `.mcp.json` (Claude Code's format) merged with settings.mcpServers."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from goat_jupyter.config.managed import load_managed
from goat_jupyter.config.project import server_key
from goat_jupyter.config.trust import approval_for
from goat_jupyter.text import loads_json

MCP_JSON = ".mcp.json"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def normalise_server_name(name: str) -> str:
    """A server's name as it appears in `mcp__{server}__{tool}`: letters, digits, _ and - only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


class StdioServerConfig(BaseModel):
    """A server started as a subprocess that speaks MCP on stdin/stdout."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class HttpServerConfig(BaseModel):
    """A server reached over streamable HTTP (`http`) or the older SSE transport (`sse`)."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["http", "sse"]
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return url


ServerConfig = StdioServerConfig | HttpServerConfig


@dataclass(frozen=True)
class McpTimeouts:
    """Seconds: connecting, one tool call, other requests, and the first turn's wait for servers."""

    connect_s: float = 30.0
    call_s: float = 300.0
    request_s: float = 30.0
    first_turn_wait_s: float = 30.0  # the first turn waits as long as connecting may take

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> McpTimeouts:
        """Claude Code's MCP_TIMEOUT / MCP_TOOL_TIMEOUT (ms), plus GOAT_MCP_STARTUP_WAIT_MS."""
        env = os.environ if environ is None else environ
        defaults = cls()
        connect_s = _millis(env.get("MCP_TIMEOUT"), defaults.connect_s)
        return cls(
            connect_s=connect_s,
            call_s=_millis(env.get("MCP_TOOL_TIMEOUT"), defaults.call_s),
            first_turn_wait_s=_millis(env.get("GOAT_MCP_STARTUP_WAIT_MS"), connect_s),
        )


def _millis(raw: str | None, default_s: float) -> float:
    try:
        value = float(raw) / 1000 if raw else default_s
    except ValueError:
        return default_s
    return value if value >= 0 else default_s


@dataclass
class McpConfig:
    """Valid servers by normalised name, plus why other entries (or the file) were rejected."""

    servers: dict[str, ServerConfig] = field(default_factory=lambda: dict[str, ServerConfig]())
    errors: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    sources: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    problems: list[str] = field(default_factory=lambda: list[str]())
    untrusted: list[str] = field(default_factory=lambda: list[str]())  # .mcp.json servers not approved


def expand_variables(value: Any, environ: Mapping[str, str], missing: set[str]) -> Any:
    """Claude Code's `${VAR}` and `${VAR:-default}` in every string; unset names go to `missing`."""
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in environ:
                return environ[name]
            if default is None:
                missing.add(name)
                return ""
            return default

        return _VARIABLE.sub(replace, value)
    if isinstance(value, list):
        return [expand_variables(item, environ, missing) for item in cast("list[Any]", value)]
    if isinstance(value, dict):
        return {k: expand_variables(v, environ, missing) for k, v in cast("dict[str, Any]", value).items()}
    return value


def parse_server(raw: object, environ: Mapping[str, str]) -> ServerConfig:
    """Validate one entry; raises ValueError with a readable reason."""
    if not isinstance(raw, dict):
        raise ValueError("each server must be a JSON object")
    missing: set[str] = set()
    entry = cast("dict[str, Any]", expand_variables(raw, environ, missing))
    if missing:
        raise ValueError("uses undefined environment variable(s): " + ", ".join(sorted(missing)))
    kind = entry.get("type") or ("http" if "url" in entry else "stdio")
    if kind in ("streamable-http", "streamableHttp"):
        kind = "http"
    entry = {**entry, "type": kind}
    try:
        if kind == "stdio":
            return StdioServerConfig.model_validate(entry)
        return HttpServerConfig.model_validate(entry)
    except ValidationError as exc:
        raise ValueError(_describe_validation(exc)) from None


def _describe_validation(exc: ValidationError) -> str:
    parts = [f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors()]
    return "; ".join(parts)


def read_mcp_json(workspace: Path) -> tuple[dict[str, Any], str | None]:
    """The `mcpServers` object of the workspace's .mcp.json, and a problem description if unreadable."""
    path = workspace / MCP_JSON
    if not path.exists():
        return {}, None
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"{path} could not be read: {exc}"
    servers = cast("dict[str, Any]", data).get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, f'{path} has no "mcpServers" object.'
    return cast("dict[str, Any]", servers), None


def load_mcp_config(
    workspace: Path,
    settings_servers: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> McpConfig:
    """Servers from .mcp.json, then settings.mcpServers (same name: the settings entry wins).

    `settings_servers` come already filtered by folder trust (settings.load_settings); the
    workspace's .mcp.json is filtered here, its servers not approved listed in `untrusted`."""
    env = os.environ if environ is None else environ
    config = McpConfig()
    from_file, problem = read_mcp_json(workspace)
    if problem:
        config.problems.append(problem)
    approval = approval_for(workspace, env)  # a project's servers start only once the user trusts them
    config.untrusted = [name for name, raw in from_file.items() if not approval.covers(server_key(name, raw))]
    from_file = {name: raw for name, raw in from_file.items() if name not in config.untrusted}
    merged: dict[str, tuple[str, object]] = {name: (MCP_JSON, raw) for name, raw in from_file.items()}
    merged.update({name: ("settings", raw) for name, raw in (settings_servers or {}).items()})
    policy = load_managed(env)
    for name in [n for n in merged if not policy.server_allowed(n)]:
        config.problems.append(f"MCP server '{name}' is not allowed by {policy.reason}.")
        del merged[name]
    owners: dict[str, str] = {}
    for raw_name, (source, raw) in merged.items():
        name = normalise_server_name(raw_name)
        if name in owners:
            config.problems.append(f"MCP servers '{owners[name]}' and '{raw_name}' share the name '{name}'.")
            continue
        owners[name] = raw_name
        config.sources[name] = source
        try:
            config.servers[name] = parse_server(raw, env)
        except ValueError as exc:
            config.errors[name] = f"invalid configuration in {source}: {exc}"
    return config
