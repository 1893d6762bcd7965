"""Config: read or change a runtime setting of this session."""

from __future__ import annotations

import json

from pydantic import Field

from goat_jupyter.errors import InvalidInputError
from goat_jupyter.settings import RUNTIME_KEYS, Settings, coerce_setting, runtime_values, value_hint
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput

_LIST_ALL = ("", "*", "all")


class ConfigInput(ToolInput):
    setting: str = Field(description="Name of the setting, e.g. model, permission_mode, max_turns.")
    value: str | bool | int | float | None = Field(
        default=None, description="New value; leave out to read the current value."
    )


def show(value: object) -> str:
    """A setting value as JSON (null, true, "text"), so types are unambiguous."""
    return json.dumps(value)


def listing(settings: Settings) -> str:
    """Every runtime setting with its current value and what it accepts."""
    return "\n".join(
        f"{key} = {show(value)}  ({value_hint(key)})" for key, value in runtime_values(settings).items()
    )


class ConfigTool(Tool[ConfigInput]):
    name = "Config"
    deferred = True
    search_hint = "session settings"
    input_model = ConfigInput
    side_effect = "none"

    def title_for(self, args: ConfigInput) -> str:
        return f"Config {args.setting}" + ("" if args.value is None else f" = {args.value!r}")

    async def run(self, args: ConfigInput, ctx: ToolContext) -> ToolOutput | str:
        settings = ctx.session.settings
        key = args.setting.strip()
        if args.value is None and key.lower() in _LIST_ALL:
            values = runtime_values(settings)
            return ToolOutput(f"Runtime settings:\n{listing(settings)}", metadata={"settings": values})
        if key not in RUNTIME_KEYS:
            raise InvalidInputError(
                f"Unknown setting '{key}'. The settings and their values:\n{listing(settings)}"
            )
        if args.value is None:
            current = getattr(settings, key)
            return ToolOutput(f"{key} = {show(current)}", metadata={"setting": key, "value": current})
        previous = getattr(settings, key)
        new_value = coerce_setting(key, args.value)
        setattr(settings, key, new_value)
        text = f"Set {key} to {show(new_value)} (was {show(previous)})."
        return ToolOutput(text, metadata={"setting": key, "value": new_value, "previous": previous})
