"""Managed settings: the policy an administrator sets once, above every other settings layer.

Files, read in this order (later ones add to and replace earlier ones): `{sys.prefix}/etc/goat/
managed-settings.json`, the `*.json` fragments in `managed-settings.d/` beside it (sorted by name),
then the same under `/etc/goat`. `GOAT_MANAGED_DIR` replaces both folders (for tests and admins who
keep the policy elsewhere) where neither system folder holds a policy. Keys: `allowed_models` and
`disabled_tools` (glob patterns), `max_permission_mode`, `allowed_mcp_servers`, `permissions.deny`/`permissions.ask` (added to every
session's rules), the budgets (ceilings: a user may set less, never more or none) and any other
settings key, whose value is then forced.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from goat_jupyter.config.claude_files import read_object
from goat_jupyter.config.model import resolve_names

MANAGED_FILE = "managed-settings.json"
FRAGMENTS = "managed-settings.d"
MODE_RANK = {"plan": 0, "dontAsk": 1, "default": 1, "acceptEdits": 2, "bypassPermissions": 3}
CEILINGS = ("max_cost_per_run", "max_cost_per_session", "max_cost_per_user_per_day", "max_tokens_per_run")
POLICY_KEYS = frozenset(
    {"allowed_models", "disabled_tools", "max_permission_mode", "allowed_mcp_servers", "permissions"}
)


def system_dirs() -> list[Path]:
    return [Path(sys.prefix) / "etc" / "goat", Path("/etc/goat")]


def managed_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The folders the policy is read from. `GOAT_MANAGED_DIR` counts only where no system folder
    holds a policy, so a user's environment cannot switch an installed policy off."""
    env = os.environ if environ is None else environ
    override = env.get("GOAT_MANAGED_DIR")
    if override and not _files(system_dirs()):
        return [Path(override)]
    return system_dirs()


def managed_files(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Every managed settings file that exists, in the order they apply."""
    return _files(managed_dirs(environ))


def _files(folders: list[Path]) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        found += [p for p in [folder / MANAGED_FILE] if p.is_file()]
        found += sorted(p for p in (folder / FRAGMENTS).glob("*.json") if p.is_file())
    return found


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Lists are joined (a fragment adds tools to disable, rules to deny), objects merged, the rest replaced."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(value, list) and isinstance(old, list):
            merged[key] = [*cast("list[Any]", old), *cast("list[Any]", value)]
        elif isinstance(value, dict) and isinstance(old, dict) and key in ("permissions",):
            merged[key] = _merge(cast("dict[str, Any]", old), cast("dict[str, Any]", value))
        else:
            merged[key] = value
    return merged


def _strings(value: object) -> list[str]:
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return [item for item in items if isinstance(item, str)]


@dataclass(frozen=True)
class ManagedPolicy:
    """The merged managed settings and the files they came from (no files: no policy)."""

    files: tuple[Path, ...] = ()
    data: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    broken: tuple[Path, ...] = ()  # managed files that exist but hold no JSON object

    @property
    def active(self) -> bool:
        return bool(self.files or self.broken)

    def broken_text(self) -> str | None:
        """Why goat will not run: an unreadable policy must not mean no policy (fail closed)."""
        if not self.broken:
            return None
        names = ", ".join(str(p) for p in self.broken)
        return (
            f"The managed policy cannot be read ({names} is not a JSON object), so goat does not run "
            "until your administrator fixes it."
        )

    @property
    def reason(self) -> str:
        return "the managed policy (" + ", ".join(str(p) for p in self.files) + ")"

    @property
    def allowed_models(self) -> list[str] | None:
        return _strings(self.data["allowed_models"]) if "allowed_models" in self.data else None

    @property
    def disabled_tools(self) -> list[str]:
        return _strings(self.data.get("disabled_tools"))

    @property
    def allowed_mcp_servers(self) -> list[str] | None:
        found = self.data.get("allowed_mcp_servers")
        return _strings(found) if found is not None else None

    @property
    def max_mode(self) -> str | None:
        if "max_permission_mode" not in self.data:
            return None
        mode = self.data["max_permission_mode"]
        return mode if isinstance(mode, str) and mode in MODE_RANK else "plan"  # a typo narrows

    def rules(self, kind: str) -> list[str]:
        block = self.data.get("permissions")
        return _strings(cast("dict[str, Any]", block).get(kind)) if isinstance(block, dict) else []

    @property
    def ceilings(self) -> dict[str, float]:
        found = {key: self.data.get(key) for key in CEILINGS}
        return {
            k: float(v) for k, v in found.items() if isinstance(v, int | float) and not isinstance(v, bool)
        }

    @property
    def forced(self) -> dict[str, Any]:
        """The settings the policy sets outright, under their field names (as `apply`'s data)."""
        skip = POLICY_KEYS | set(CEILINGS)
        return resolve_names({k: v for k, v in self.data.items() if k not in skip})

    def tool_disabled(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.disabled_tools)

    def model_allowed(self, model: str | None) -> bool:
        patterns = self.allowed_models
        return model is None or patterns is None or any(fnmatch.fnmatchcase(model, p) for p in patterns)

    def mode_allowed(self, mode: str) -> bool:
        top = self.max_mode
        return top is None or MODE_RANK.get(mode, 99) <= MODE_RANK[top]

    def server_allowed(self, name: str) -> bool:
        allowed = self.allowed_mcp_servers
        return allowed is None or name in allowed

    def refusal(self, key: str, value: object) -> str | None:
        """Why `key=value` goes beyond this policy, in one sentence; None when it does not."""
        if key in ("model", "small_model") and isinstance(value, str) and not self.model_allowed(value):
            allowed = ", ".join(self.allowed_models or [])
            return f"Model '{value}' is not allowed by {self.reason}; allowed models: {allowed}."
        if key == "permission_mode" and isinstance(value, str) and not self.mode_allowed(value):
            return f"Permission mode '{value}' is beyond {self.max_mode}, the most {self.reason} allows."
        if key in self.ceilings and not _within(value, self.ceilings[key]):
            shown = "none (no limit)" if value is None else value
            return f"{key}={shown} is above {self.ceilings[key]:g}, the limit set by {self.reason}."
        if key in self.forced and value != self.forced[key]:
            return f"{key} is set to {self.forced[key]!r} by {self.reason} and cannot be changed."
        return None

    def apply(self, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """`data` (every other layer merged, under field names) with this policy on top; a note for
        each value it refused."""
        data = dict(data)
        notes = [self._force(data, key, value) for key, value in self.forced.items()]
        notes += [self._cap(data, key) for key in self.ceilings]
        notes += [self._clamp_mode(data), *self._check_models(data), *self._drop_servers(data)]
        self._add_rules(data)
        return data, [note for note in notes if note]

    def _force(self, data: dict[str, Any], key: str, value: object) -> str | None:
        refused = self.refusal(key, data[key]) if key in data else None
        data[key] = value
        return refused

    def _cap(self, data: dict[str, Any], key: str) -> str | None:
        refused = self.refusal(key, data[key]) if key in data else None  # an explicit none is refused too
        if key not in data or refused:
            data[key] = self.data[key]
        return refused

    def _clamp_mode(self, data: dict[str, Any]) -> str | None:
        mode = data.get("permission_mode", "default")
        refused = self.refusal("permission_mode", mode)
        if refused:
            data["permission_mode"] = "default" if self.mode_allowed("default") else self.max_mode
        return refused

    def _check_models(self, data: dict[str, Any]) -> list[str | None]:
        """A model beyond the allow-list stays named (the run refuses it) so the user sees which."""
        return [self.refusal(key, data.get(key)) for key in ("model", "small_model")]

    def _drop_servers(self, data: dict[str, Any]) -> list[str | None]:
        notes: list[str | None] = []
        servers = data.get("mcp_servers")
        if isinstance(servers, dict):
            named = cast("dict[str, Any]", servers)
            kept = {n: v for n, v in named.items() if self.server_allowed(n)}
            notes += [f"MCP server '{n}' is not allowed by {self.reason}." for n in named if n not in kept]
            data["mcp_servers"] = kept
        return notes

    def _add_rules(self, data: dict[str, Any]) -> None:
        block = data.get("permissions")
        block = dict(cast("dict[str, Any]", block)) if isinstance(block, dict) else {}
        for kind in ("deny", "ask"):
            block[kind] = [*_strings(block.get(kind)), *self.rules(kind)]
        if not self.mode_allowed(str(block.get("default_mode", "default"))):
            block.pop("default_mode", None)
        data["permissions"] = block

    def describe(self) -> list[str]:
        """One line per managed setting, for `%goat status`."""
        lines = [f"{key} = {value!r}" for key, value in self.data.items() if key != "permissions"]
        lines += [
            f"permissions.{kind} = {self.rules(kind)!r}" for kind in ("deny", "ask") if self.rules(kind)
        ]
        return lines


def _within(value: object, limit: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value <= limit


_cache: dict[tuple[tuple[str, int, int], ...], ManagedPolicy] = {}


def load_managed(environ: Mapping[str, str] | None = None) -> ManagedPolicy:
    """The managed policy in force now (re-read when a file changes; cached by size and mtime)."""
    files = managed_files(environ)
    stamp = tuple(_stamp(p) for p in files)
    if stamp not in _cache:
        _cache.clear()
        _cache[stamp] = _read(files)
    return _cache[stamp]


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _read(files: Iterable[Path]) -> ManagedPolicy:
    data: dict[str, Any] = {}
    used: list[Path] = []
    broken: list[Path] = []
    for path in files:
        found = read_object(path)
        if found is None:
            broken.append(path)  # managed_files lists files that exist: this one is unreadable
            continue
        data = _merge(data, found)
        used.append(path)
    return ManagedPolicy(tuple(used), data, tuple(broken))
