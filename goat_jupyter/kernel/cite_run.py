"""After a %%goat run: the answer's citations checked against this kernel's notebook and marked in the
cell, and with `cite_numbers: remind` a note for the model's next request about numbers it did not cite."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

from goat_jupyter.citations import CITATION, OutputIndex, reminder, uncited_numbers
from goat_jupyter.kernel.kernel_state import own_cells
from goat_jupyter.kernel.runtime import GoatRuntime
from goat_jupyter.ui import CellRenderer, Renderer
from goat_jupyter.ui.safe.markdown import clean_newlines, literal_spans

_log = logging.getLogger(__name__)


async def check_answer(goat: GoatRuntime, renderer: Renderer, first: int) -> None:
    """Mark citations in the cell; note uncited numbers (messages from `first` on are this run's)."""
    if goat.session.settings.cite_numbers == "remind":
        remind(goat, answer_texts(goat.session.messages[first:]))
    if not isinstance(renderer, CellRenderer):
        return  # a terminal's text is printed already
    if not any(CITATION.search(text) for text in renderer.answer_texts()):
        return
    cells = await own_cells(goat.services, goat.session)
    if cells is None:
        _log.info("goat: no notebook to check the answer's citations against")
        return
    renderer.cite(OutputIndex((cell.execution_count, cell.outputs) for cell in cells))


def remind(goat: GoatRuntime, texts: Sequence[str]) -> None:
    numbers: list[str] = []
    for text in map(clean_newlines, texts):
        numbers += uncited_numbers(text, literal_spans(text))
    if numbers:
        goat.session.add_note(reminder(numbers))


def answer_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The assistant's text in these messages (tool calls and results aside)."""
    texts: list[str] = []
    for message in messages:
        content: object = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, str) and content:
            texts.append(content)
        elif message.get("role") == "assistant" and isinstance(content, list):
            parts = cast(list[object], content)
            texts += [str(cast(dict[str, Any], p).get("text", "")) for p in parts if isinstance(p, dict)]
    return texts
