"""TodoWrite: whole-list replacement, clearing when all done, checklist text and UI metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.tools import Registry, default_registry


def todo(content: str, status: str) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": f"{content}ing"}


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


async def test_replaces_the_whole_list(registry: Registry) -> None:
    await registry.call("TodoWrite", {"todos": [todo("Load", "pending"), todo("Plot", "pending")]})
    out = await registry.call("TodoWrite", {"todos": [todo("Clean", "in_progress")]})
    assert not out.is_error, out.content
    assert [t.content for t in registry.session.todos] == ["Clean"]
    assert registry.session.todos[0].status == "in_progress"


async def test_checklist_text_and_metadata(registry: Registry) -> None:
    items = [todo("Load", "completed"), todo("Clean", "in_progress"), todo("Plot", "pending")]
    out = await registry.call("TodoWrite", {"todos": items})
    lines = out.content.splitlines()
    assert "[x] Load" in lines and "[~] Clean" in lines and "[ ] Plot" in lines
    assert "1 completed, 1 in progress, 1 pending" in out.content
    metadata: dict[str, Any] = out.metadata
    assert metadata["todos"] == items and metadata["cleared"] is False


async def test_several_in_progress_are_allowed(registry: Registry) -> None:
    out = await registry.call("TodoWrite", {"todos": [todo("A", "in_progress"), todo("B", "in_progress")]})
    assert not out.is_error
    assert [t.status for t in registry.session.todos] == ["in_progress", "in_progress"]


async def test_all_completed_clears_the_list(registry: Registry) -> None:
    items = [todo("Load", "completed"), todo("Plot", "completed")]
    out = await registry.call("TodoWrite", {"todos": items})
    assert not out.is_error
    assert registry.session.todos == []
    assert "cleared" in out.content and "[x] Plot" in out.content
    assert out.metadata["todos"] == items and out.metadata["cleared"] is True
    read = await registry.call("TodoRead", {})
    assert "empty" in read.content


async def test_empty_list_clears(registry: Registry) -> None:
    await registry.call("TodoWrite", {"todos": [todo("Load", "pending")]})
    out = await registry.call("TodoWrite", {"todos": []})
    assert not out.is_error and registry.session.todos == [] and out.metadata["todos"] == []


async def test_bad_items_are_rejected(registry: Registry) -> None:
    bad_status = await registry.call("TodoWrite", {"todos": [todo("Load", "doing")]})
    assert bad_status.error_code == "INVALID_INPUT" and "todos.0.status" in bad_status.content
    missing = await registry.call("TodoWrite", {"todos": [{"content": "Load", "status": "pending"}]})
    assert missing.error_code == "INVALID_INPUT" and "activeForm" in missing.content
    blank = await registry.call("TodoWrite", {"todos": [todo("  ", "pending")]})
    assert blank.error_code == "INVALID_INPUT" and "todo 0" in blank.content
    assert registry.session.todos == []


async def test_list_is_per_session(tmp_path: Path) -> None:
    first, second = default_registry(cwd=tmp_path), default_registry(cwd=tmp_path)
    await first.call("TodoWrite", {"todos": [todo("Load", "pending")]})
    assert len(first.session.todos) == 1 and second.session.todos == []
