"""A Python function offered to the model as a tool: its pydantic model (or its typed parameters)
is the input schema, its docstring the description. No IPython imports."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

from pydantic import BaseModel, create_model

from goat_jupyter.tools.base import SideEffect, Tool, ToolContext, ToolInput, ToolOutput

ToolFunction = Callable[..., Any]


class FunctionTool(Tool[ToolInput]):
    """Calls `fn` with a validated instance of the user's model, or with keyword arguments."""

    name = "FunctionTool"  # each function gets its own subclass (see `function_tool`)

    def __init__(self, fn: ToolFunction, description: str) -> None:
        super().__init__()
        self.fn = fn
        self._description = description
        self.user_model = _declared_model(fn)
        self.input_model = _input_model(self.name, fn, self.user_model)

    async def run(self, args: ToolInput, ctx: ToolContext) -> ToolOutput | str:
        values = args.model_dump()
        if self.user_model is not None:
            result = self.fn(self.user_model.model_validate(values))
        else:
            result = self.fn(**values)
        if inspect.isawaitable(result):
            result = await result
        return result if isinstance(result, (ToolOutput, str)) else repr(result)


def function_tool(fn: ToolFunction, name: str, description: str, side_effect: SideEffect) -> FunctionTool:
    """A tool named `name` calling `fn` (name and side effect are class attributes of every Tool)."""
    cls = cast(
        "type[FunctionTool]", type(f"{name}Tool", (FunctionTool,), {"name": name, "side_effect": side_effect})
    )
    return cls(fn, description)


def _declared_model(fn: ToolFunction) -> type[BaseModel] | None:
    """The pydantic model of `fn`'s only parameter, when it takes one."""
    params = list(inspect.signature(fn, eval_str=True).parameters.values())
    if len(params) != 1:
        return None
    annotation = params[0].annotation
    return annotation if inspect.isclass(annotation) and issubclass(annotation, BaseModel) else None


def _input_model(name: str, fn: ToolFunction, declared: type[BaseModel] | None) -> type[ToolInput]:
    """A ToolInput (unknown fields rejected) with the user's fields."""
    if declared is not None:
        fields = {key: (info.annotation, info) for key, info in declared.model_fields.items()}
    else:
        fields = {key: _parameter_field(key, param) for key, param in _parameters(fn).items()}
    return cast("type[ToolInput]", create_model(f"{name}Input", __base__=ToolInput, **fields))  # pyright: ignore[reportCallIssue, reportArgumentType, reportUnknownVariableType]


def _parameters(fn: ToolFunction) -> dict[str, inspect.Parameter]:
    params = inspect.signature(fn, eval_str=True).parameters
    for param in params.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"{fn.__name__}: a tool function takes named parameters only ({param}).")
    return dict(params)


def _parameter_field(key: str, param: inspect.Parameter) -> tuple[Any, Any]:
    if param.annotation is inspect.Parameter.empty:
        raise TypeError(f"Parameter {key!r} needs a type annotation to become part of the tool's schema.")
    default = ... if param.default is inspect.Parameter.empty else param.default
    return (param.annotation, default)
