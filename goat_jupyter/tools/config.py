"""Config: read or change a runtime setting of this session."""

from __future__ import annotations

from pydantic import Field

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput


class ConfigInput(ToolInput):
    setting: str = Field(description="Name of the setting, e.g. model, permission_mode, max_turns.")
    value: str | bool | int | float | None = Field(
        default=None, description="New value; leave out to read the current value."
    )


class ConfigTool(Tool[ConfigInput]):
    name = "Config"
    input_model = ConfigInput
    side_effect = "none"

    def title_for(self, args: ConfigInput) -> str:
        return f"Config {args.setting}" + ("" if args.value is None else f" = {args.value!r}")

    async def run(self, args: ConfigInput, ctx: ToolContext) -> ToolOutput | str:
        from goat_jupyter.errors import NotAvailableError

        raise NotAvailableError("Config is being built.")
