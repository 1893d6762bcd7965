"""Tool calls written as text (issue 23): one well-formed call to an offered tool runs; the rest stays text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.agent.text_calls import FORMAT_REMINDER, recover_call
from goat_jupyter.replay import ReplayServer
from goat_jupyter.tools.events import Notice, ToolFinished
from tests.agent_helpers import assert_history_valid, make_agent, text_turn

OFFERED = {"Read", "Write", "Bash", "Grep"}


def fenced(obj: Any, label: str = "json") -> str:
    return f"```{label}\n{json.dumps(obj)}\n```"


def write_call(path: Path, content: str = "hello\n") -> dict[str, Any]:
    return {"name": "Write", "arguments": {"file_path": str(path), "content": content}}


async def run_reply(tmp_path: Path, reply: str, *, enabled: bool = True) -> tuple[Any, Any, list[Any]]:
    turns = [text_turn(reply), text_turn("Done.")]
    with ReplayServer(turns) as server:
        rig = make_agent(tmp_path, server.url)
        rig.session.settings.text_tool_calls = enabled
        result = await rig.agent.run("do it")
        requests = server.requests
    return rig, result, requests


async def test_a_fenced_json_call_runs_the_tool_and_the_model_is_told_the_format(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    reply = "I will create the file now.\n\n" + fenced(write_call(target))
    rig, result, requests = await run_reply(tmp_path, reply)
    assert target.read_text() == "hello\n"
    assert result.turns == 2 and result.text == "Done."
    assert [e.name for e in rig.of_type(ToolFinished)] == ["Write"]
    assert any("wrote a Write call as text" in n.text for n in rig.of_type(Notice))
    assistant = next(m for m in rig.session.messages if m["role"] == "assistant")
    assert assistant["content"] is None and assistant["tool_calls"][0]["function"]["name"] == "Write"
    second = requests[1]["messages"]
    # The reminder rides in the tool result: a small model answered a separate note instead of working.
    assert second[-1]["role"] == "tool" and FORMAT_REMINDER in second[-1]["content"]
    assert not [m for m in second if m["role"] == "user" and FORMAT_REMINDER in str(m["content"])]
    assert_history_valid(rig.session.messages)


@pytest.mark.parametrize(
    "shape",
    [
        lambda p: "<tool_call>\n" + json.dumps(write_call(p)) + "\n</tool_call>",
        lambda p: json.dumps({"tool": "Write", "parameters": write_call(p)["arguments"]}),
        lambda p: fenced({"name": "Write", "arguments": json.dumps(write_call(p)["arguments"])}),
        lambda p: fenced(write_call(p), label=""),
        lambda p: fenced(write_call(p), label="tool_call"),
        lambda p: "<tools>\n" + json.dumps(write_call(p)) + "\n</tools>",  # Qwen echoing its template
        lambda p: "{" + json.dumps(write_call(p)) + "}",  # doubled outer braces
        lambda p: "<tool_call>{" + json.dumps(write_call(p)) + "}</tool_call>",
        lambda p: fenced({"function": "Write", "arguments": write_call(p)["arguments"]}),
    ],
    ids=[
        "tags",
        "tool-parameters",
        "arguments-as-string",
        "unlabelled-fence",
        "tool_call-fence",
        "tools-tag",
        "doubled-braces",
        "doubled-braces-in-tags",
        "function-arguments",  # Qwen2.5-Coder 1.5B wrote this one in the task suite
    ],
)
async def test_every_common_shape_runs(tmp_path: Path, shape: Any) -> None:
    target = tmp_path / "b.txt"
    rig, result, _ = await run_reply(tmp_path, shape(target))
    assert target.read_text() == "hello\n" and result.turns == 2
    assert [e.name for e in rig.of_type(ToolFinished)] == ["Write"]


def ambiguous_replies(target: Path) -> list[str]:
    call = write_call(target)
    return [
        fenced(call) + "\nand then\n" + fenced(call),  # two calls
        fenced({"name": "Teleport", "arguments": {"where": "moon"}}),  # a tool that is not offered
        "```json\n" + json.dumps(call)[:-2] + "\n```",  # invalid JSON in a json block
        "<tool_call>not json</tool_call>",
        "<tool_call>" + json.dumps({"answer": 42}) + "</tool_call>",  # a tag without a call
        fenced(call) + "\n<tool_call>oops</tool_call>",  # one good call beside a broken tag
        fenced({"name": "Write", "arguments": [1, 2]}),  # arguments not an object
        fenced({"name": "Write", "function": "Bash", "arguments": {}}),  # two names, another spelling
        fenced({"type": "function", "function": {"name": "Write"}, "arguments": {}}),  # name not a string
        fenced({"name": "Write", "arguments": "{not json"}),
        fenced({"name": "Write", "tool": "Bash", "arguments": {}}),  # two names
        fenced({**call, "note": "extra field"}),  # not a call shape: data
        "{{" + json.dumps(call) + "}}",  # braces doubled twice: not one call
        "<tools>" + json.dumps(call) + json.dumps(call) + "</tools>",  # two calls in one tag
    ]


@pytest.mark.parametrize("index", range(12))
async def test_ambiguous_replies_stay_text(tmp_path: Path, index: int) -> None:
    target = tmp_path / "c.txt"
    reply = ambiguous_replies(target)[index]
    rig, result, requests = await run_reply(tmp_path, reply)
    assert not target.exists()
    assert result.turns == 1 and result.text == reply and len(requests) == 1
    assert rig.of_type(ToolFinished) == []


async def test_the_setting_turns_recovery_off(tmp_path: Path) -> None:
    target = tmp_path / "d.txt"
    reply = fenced(write_call(target))
    _, result, _ = await run_reply(tmp_path, reply, enabled=False)
    assert not target.exists() and result.text == reply and result.turns == 1


async def test_a_call_to_a_tool_that_is_registered_but_not_offered_stays_text(tmp_path: Path) -> None:
    # KernelInspect exists, but without a kernel it is not offered, so its text stays text.
    reply = fenced({"name": "KernelInspect", "arguments": {"expression": "1"}})
    rig, result, _ = await run_reply(tmp_path, reply)
    assert result.turns == 1 and rig.of_type(ToolFinished) == []


def test_plain_code_blocks_are_not_calls() -> None:
    assert recover_call("```python\nprint({'name': 'Read'})\n```", OFFERED) is None
    assert recover_call('```\n{"a": 1}\n```', OFFERED) is None
    assert recover_call('Use {"name": "Read"} like this.', OFFERED) is None
    assert recover_call("", OFFERED) is None


@given(st.text())
def test_recovery_never_raises_on_any_text(text: str) -> None:
    call = recover_call(text, OFFERED)
    assert call is None or call.name in OFFERED


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=5,
)


@given(
    st.sampled_from(sorted(OFFERED)),
    st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4),
    st.sampled_from(["name/arguments", "tool/parameters", "string-arguments"]),
    st.text(alphabet=st.characters(blacklist_characters="`{}<"), max_size=40),
)
def test_one_fenced_call_round_trips(name: str, arguments: dict[str, Any], shape: str, prose: str) -> None:
    if shape == "name/arguments":
        obj: dict[str, Any] = {"name": name, "arguments": arguments}
    elif shape == "tool/parameters":
        obj = {"tool": name, "parameters": arguments}
    else:
        obj = {"name": name, "arguments": json.dumps(arguments)}
    call = recover_call(prose + "\n" + fenced(obj) + "\n", OFFERED)
    assert call is not None and call.name == name and json.loads(call.arguments) == arguments


def test_markdown_fences_inside_the_arguments_do_not_cut_the_block() -> None:
    content = "# Title\n\n```python\nprint(1)\n```\n"
    reply = fenced({"name": "Write", "arguments": {"file_path": "README.md", "content": content}})
    call = recover_call(reply, OFFERED)
    assert call is not None and json.loads(call.arguments)["content"] == content


def test_two_objects_in_one_block_are_ambiguous() -> None:
    one = json.dumps({"name": "Read", "arguments": {"file_path": "a"}})
    assert recover_call(f"```json\n{one}\n{one}\n```", OFFERED) is None
    assert recover_call(f"```\n{one}\n{one}\n```", OFFERED) is None


async def test_in_the_lean_profile_the_reminder_rides_in_the_tool_result(tmp_path: Path) -> None:
    """A small model answers a separate note ("I apologize...") instead of going on with the work."""
    target = tmp_path / "e.txt"
    with ReplayServer([text_turn(fenced(write_call(target))), text_turn("Done.")]) as server:
        rig = make_agent(tmp_path, server.url)
        rig.session.settings.tool_profile = "lean"
        rig.session.settings.action_style = "tools"
        await rig.agent.run("do it")
        second = server.requests[1]["messages"]
    assert target.exists()
    assert second[-1]["role"] == "tool" and FORMAT_REMINDER in second[-1]["content"]
    assert second[-1]["content"].startswith("Wrote ") or "e.txt" in second[-1]["content"]
    assert not [m for m in second if m["role"] == "user" and FORMAT_REMINDER in str(m["content"])]
