"""Every tool's input model: JSON round trip, seed field names in the schema, extra fields rejected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from goat_jupyter.tools import Registry, default_registry

QUESTION = {
    "question": "Which chart should I draw?",
    "header": "Chart",
    "options": [
        {"label": "Bar", "description": "One bar per month."},
        {"label": "Line", "description": "A trend line."},
    ],
    "multiSelect": False,
}
TODO = {"content": "Plot sales", "status": "in_progress", "activeForm": "Plotting sales"}
MEMBER = {"name": "scout", "prompt": "Find the data files.", "subagent_type": "Explore"}

# Valid inputs as a model would send them, with every non-null default spelled out so that
# model_dump(by_alias=True, exclude_none=True) must give back exactly this.
SAMPLES: dict[str, list[dict[str, Any]]] = {
    "Agent": [
        {"description": "Find TODOs", "prompt": "List every TODO.", "subagent_type": "Explore",
         "model": "haiku", "run_in_background": False, "max_turns": 5},
        {"description": "Continue", "prompt": "Go on.", "subagent_type": "general-purpose",
         "run_in_background": True, "resume": "agent_1", "name": "scout", "team_name": "t", "mode": "plan"},
    ],
    "Bash": [{"command": "ls -la", "timeout": 5000, "description": "List files", "run_in_background": False}],
    "TaskOutput": [{"task_id": "task_1", "block": False, "timeout": 1000}],
    "ExitPlanMode": [{"plan": "1. Load the data\n2. Plot it"}],
    "Edit": [{"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}],
    "Read": [
        {"file_path": "/w/a.py", "offset": 10, "limit": 20},
        {"file_path": "/w/paper.pdf", "pages": "1-5"},
    ],
    "Write": [{"file_path": "/w/new.txt", "content": "hello\n"}],
    "Glob": [{"pattern": "**/*.py", "path": "/w/src"}],
    "Grep": [
        {"pattern": "def \\w+", "path": "/w", "glob": "*.py", "output_mode": "content", "-B": 1, "-A": 2,
         "-n": True, "-i": True, "type": "py", "head_limit": 10, "offset": 5, "multiline": False},
        {"pattern": "-v", "output_mode": "count", "-C": 3},
    ],
    "TaskStop": [{"task_id": "task_1"}],
    "ListMcpResources": [{"server": "time"}, {}],
    "NotebookEdit": [
        {"notebook_path": "/w/nb.ipynb", "cell_id": "cell-2", "new_source": "df.head()", "cell_type": "code",
         "edit_mode": "insert"},
        {"notebook_path": "nb.ipynb", "cell_id": "a1b2c3", "new_source": "", "edit_mode": "delete"},
    ],
    "ReadMcpResource": [{"server": "docs", "uri": "file:///guide.md"}],
    "TodoWrite": [{"todos": [TODO, {**TODO, "status": "pending"}]}, {"todos": []}],
    "WebFetch": [
        {"url": "https://example.com/page", "prompt": "Summarise it.", "method": "GET"},
        {"url": "https://example.com/api", "method": "POST", "headers": {"Accept": "application/json"},
         "body": "{}", "timeout": 10.5},
    ],
    "WebSearch": [{"query": "pandas groupby", "allowed_domains": ["pandas.pydata.org"]}],
    "AskUserQuestion": [{"questions": [QUESTION]}, {"questions": [QUESTION], "answers": {"Which?": "Bar"}}],
    "Config": [{"setting": "model", "value": "gpt-4o"}, {"setting": "max_turns", "value": 5},
               {"setting": "show_usage", "value": False}, {"setting": "temperature", "value": 0.2},
               {"setting": "model"}],
    "LS": [{"path": "/w", "recursive": True, "include_hidden": False}],
    "Delete": [{"path": "/w/old", "recursive": True}],
    "Move": [{"from": "/w/a.txt", "to": "/w/b.txt", "overwrite": False}],
    "RunCode": [{"language": "python", "code": "print(1)", "args": ["a"], "env": {"A": "1"}, "timeout": 60, "network": False}],
    "TodoRead": [{}],
    "RunCell": [{"notebook_path": "/w/nb.ipynb", "cell_id": "cell-0"}, {"cell_id": "a1b2c3"}],
    "KernelInspect": [{"expression": "df.shape"}],
    "ToolSearch": [{"query": "select:WebFetch,LS", "max_results": 5}, {"query": "background output", "max_results": 2}],
    "BashOutput": [{"bash_id": "task_1", "block": True, "timeout": 30000}],
    "KillShell": [{"shell_id": "task_1"}],
    "TeamCreate": [{"team_name": "crew", "members": [MEMBER]}],
    "SendMessage": [{"to": "*", "message": "Status?"}],
    "TeamDelete": [{"team_name": "crew"}],
}  # fmt: skip

# Top-level property names: the seed's (seeds/000 section 4, sdk-tools.d.ts naming) and TOOLS.md's.
FIELDS: dict[str, set[str]] = {
    "Agent": {"description", "prompt", "subagent_type", "model", "resume", "run_in_background", "max_turns",
              "name", "team_name", "mode"},
    "Bash": {"command", "timeout", "description", "run_in_background"},
    "TaskOutput": {"task_id", "block", "timeout"},
    "ExitPlanMode": {"plan"},
    "Edit": {"file_path", "old_string", "new_string", "replace_all"},
    "Read": {"file_path", "offset", "limit", "pages"},
    "Write": {"file_path", "content"},
    "Glob": {"pattern", "path"},
    "Grep": {"pattern", "path", "glob", "output_mode", "-B", "-A", "-C", "-n", "-i", "type", "head_limit",
             "offset", "multiline"},
    "TaskStop": {"task_id"},
    "ListMcpResources": {"server"},
    "NotebookEdit": {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
    "ReadMcpResource": {"server", "uri"},
    "TodoWrite": {"todos"},
    "WebFetch": {"url", "prompt", "method", "headers", "body", "timeout"},
    "WebSearch": {"query", "allowed_domains", "blocked_domains"},
    "AskUserQuestion": {"questions", "answers"},
    "Config": {"setting", "value"},
    "LS": {"path", "recursive", "include_hidden"},
    "Delete": {"path", "recursive"},
    "Move": {"from", "to", "overwrite"},
    "RunCode": {"language", "code", "args", "env", "timeout", "network"},
    "TodoRead": set(),
    "RunCell": {"notebook_path", "cell_id"},
    "KernelInspect": {"expression"},
    "ToolSearch": {"query", "max_results"},
    "BashOutput": {"bash_id", "block", "timeout"},
    "KillShell": {"shell_id"},
    "TeamCreate": {"team_name", "members"},
    "SendMessage": {"to", "message"},
    "TeamDelete": {"team_name"},
}  # fmt: skip

# Nested object names: (tool, path of array properties) -> property names of the items.
NESTED: dict[tuple[str, tuple[str, ...]], set[str]] = {
    ("TodoWrite", ("todos",)): {"content", "status", "activeForm"},
    ("AskUserQuestion", ("questions",)): {"question", "header", "options", "multiSelect"},
    ("AskUserQuestion", ("questions", "options")): {"label", "description"},
    ("TeamCreate", ("members",)): {"name", "prompt", "subagent_type"},
}


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.setenv("GOAT_EXPERIMENTAL_AGENT_TEAMS", "1")
    return default_registry(cwd=tmp_path)


def tool_samples() -> list[tuple[str, dict[str, Any]]]:
    return [(name, sample) for name, samples in SAMPLES.items() for sample in samples]


def test_every_tool_has_samples_and_field_names(registry: Registry) -> None:
    assert sorted(SAMPLES) == sorted(registry.names())
    assert sorted(FIELDS) == sorted(registry.names())


@pytest.mark.parametrize(("name", "sample"), tool_samples())
def test_json_round_trip(registry: Registry, name: str, sample: dict[str, Any]) -> None:
    tool = registry.get(name)
    assert tool is not None
    parsed = tool.input_model.model_validate_json(json.dumps(sample))
    assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == sample
    assert tool.input_model.model_validate(sample) == parsed


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` into `$defs`."""
    ref = node.get("$ref")
    if ref is None:
        return node
    return schema["$defs"][ref.rsplit("/", 1)[-1]]


def item_properties(schema: dict[str, Any], path: tuple[str, ...]) -> set[str]:
    node = schema
    for key in path:
        node = resolve(schema, resolve(schema, node["properties"][key])["items"])
    return set(node["properties"])


def test_schema_property_names(registry: Registry) -> None:
    for tool in registry.tools():
        assert set(tool.parameters_schema()["properties"]) == FIELDS[tool.name], tool.name
    for (name, path), expected in NESTED.items():
        tool = registry.get(name)
        assert tool is not None
        assert item_properties(tool.parameters_schema(), path) == expected, (name, path)


@pytest.mark.parametrize(("name", "sample"), [(n, s[0]) for n, s in SAMPLES.items()])
def test_extra_fields_are_rejected(registry: Registry, name: str, sample: dict[str, Any]) -> None:
    tool = registry.get(name)
    assert tool is not None
    with pytest.raises(ValidationError) as info:
        tool.input_model.model_validate({**sample, "surprise": 1})
    assert [e["type"] for e in info.value.errors()] == ["extra_forbidden"]
    assert tool.parameters_schema().get("additionalProperties") is False


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("TodoWrite", {"todos": [{**TODO, "priority": "high"}]}),
        ("AskUserQuestion", {"questions": [{**QUESTION, "hint": "x"}]}),
        ("AskUserQuestion", {"questions": [{**QUESTION, "options": [{"label": "A", "description": "", "x": 1},
                                                                       {"label": "B", "description": ""}]}]}),
        ("TeamCreate", {"team_name": "crew", "members": [{**MEMBER, "role": "lead"}]}),
    ],
)  # fmt: skip
def test_nested_extra_fields_are_rejected(registry: Registry, name: str, bad: dict[str, Any]) -> None:
    tool = registry.get(name)
    assert tool is not None
    with pytest.raises(ValidationError) as info:
        tool.input_model.model_validate(bad)
    assert "extra_forbidden" in [e["type"] for e in info.value.errors()]


async def test_executor_reports_extra_field_by_name(registry: Registry) -> None:
    out = await registry.call("Glob", {"pattern": "*.py", "recursive": True})
    assert out.error_code == "INVALID_INPUT" and "recursive: unexpected field" in out.content
