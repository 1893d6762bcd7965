"""TodoRead: the current list as a checklist, with the list in metadata."""

from __future__ import annotations

from pathlib import Path

from goat_jupyter.tools import default_registry


async def test_empty_list(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    out = await registry.call("TodoRead", {})
    assert not out.is_error and "empty" in out.content and out.metadata["todos"] == []


async def test_shows_what_todowrite_stored(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    items = [
        {"content": "Load data", "status": "completed", "activeForm": "Loading data"},
        {"content": "Fit model", "status": "in_progress", "activeForm": "Fitting model"},
        {"content": "Write report", "status": "pending", "activeForm": "Writing report"},
    ]
    await registry.call("TodoWrite", {"todos": items})
    out = await registry.call("TodoRead", {})
    assert out.content.splitlines()[1:] == ["[x] Load data", "[~] Fit model", "[ ] Write report"]
    assert out.metadata["todos"] == items


async def test_takes_no_arguments(tmp_path: Path) -> None:
    registry = default_registry(cwd=tmp_path)
    out = await registry.call("TodoRead", {"filter": "pending"})
    assert out.error_code == "INVALID_INPUT" and "filter" in out.content
    tool = registry.get("TodoRead")
    assert tool is not None and tool.side_effect == "read_only"
