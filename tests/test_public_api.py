"""The public API's pieces in plain asyncio: function tools, the approver wrapper."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest
from goat_jupyter.plugins.function_tool import FunctionTool, function_tool
from goat_jupyter.plugins.registry import FunctionApprover
from goat_jupyter.tools.registry import Registry


class Lookup(BaseModel):
    city: str = Field(description="the city")
    days: int = 1


def weather(args: Lookup) -> str:
    """Weather for a city."""
    return f"Sunny in {args.city} for {args.days} day(s)"


async def forecast(city: str, days: int = 2) -> dict[str, object]:
    await asyncio.sleep(0)
    return {"city": city, "days": days}


def registry_with(*tools: FunctionTool, tmp_path: Path) -> Registry:
    registry = Registry(cwd=tmp_path)
    for made in tools:
        registry.register(made)
    return registry


async def test_a_function_with_a_pydantic_model_becomes_a_tool(tmp_path: Path) -> None:
    made = function_tool(weather, "weather", "Weather for a city.", "read_only")
    schema = made.parameters_schema()
    assert schema["required"] == ["city"] and schema["properties"]["city"]["description"] == "the city"
    registry = registry_with(made, tmp_path=tmp_path)
    assert any(t["function"]["name"] == "weather" for t in registry.llm_tools())
    out = await registry.call("weather", {"city": "Oslo", "days": 3})
    assert out.content == "Sunny in Oslo for 3 day(s)" and not out.is_error


async def test_typed_parameters_and_async_functions_work_and_bad_input_is_an_error(tmp_path: Path) -> None:
    registry = registry_with(function_tool(forecast, "forecast", "x", "mutating"), tmp_path=tmp_path)
    assert (await registry.call("forecast", {"city": "Rome"})).content == "{'city': 'Rome', 'days': 2}"
    for bad in ({}, {"city": "Rome", "extra": 1}, {"city": "Rome", "days": "many"}):
        out = await registry.call("forecast", bad)
        assert out.is_error, bad


async def test_an_exception_in_the_function_reaches_the_model_as_an_error(tmp_path: Path) -> None:
    def broken(args: Lookup) -> str:
        raise RuntimeError("no network")

    out = await registry_with(function_tool(broken, "broken", "x", "mutating"), tmp_path=tmp_path).call(
        "broken", {"city": "a"}
    )
    assert out.is_error and "no network" in out.content


def test_untyped_or_variadic_parameters_are_refused() -> None:
    def untyped(city):  # type: ignore[no-untyped-def]
        return city

    def variadic(*args: str) -> str:
        return ""

    for fn in (untyped, variadic):
        with pytest.raises(TypeError):
            function_tool(fn, "x", "x", "mutating")  # pyright: ignore[reportUnknownArgumentType]


class Fallback:
    def __init__(self) -> None:
        self.asked = 0

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked += 1
        return ApprovalAnswer("deny", "fallback")


REQUEST = ApprovalRequest("Bash", {"command": "ls"}, "Bash ls", "command", "Bash(ls)", "asks")


@pytest.mark.parametrize(
    ("result", "choice", "fell_through"),
    [(True, "allow_once", 0), (False, "deny", 0), ("allow_session", "allow_session", 0), (None, "deny", 1)],
)
async def test_the_approver_function_answers_or_falls_through(
    result: object, choice: str, fell_through: int
) -> None:
    fallback = Fallback()
    answer = await FunctionApprover(lambda request: result, fallback).request(REQUEST)
    assert answer.choice == choice and fallback.asked == fell_through


async def test_an_approver_returning_nonsense_raises() -> None:
    with pytest.raises(TypeError):
        await FunctionApprover(lambda request: "yes please", Fallback()).request(REQUEST)
