"""Output styles: the system prompt carries the chosen style; the default adds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.agent.prompts import BASE_PROMPT, system_prompt
from goat_jupyter.agent.styles import EXPLAIN, TUTOR, OutputStyle
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.settings import coerce_setting
from goat_jupyter.ui.text import header_text


def prompt_for(tmp_path: Path, style: OutputStyle) -> str:
    return system_prompt(BASE_PROMPT, style)


def test_tutor_and_explain_are_in_the_system_prompt(tmp_path: Path) -> None:
    assert TUTOR in prompt_for(tmp_path, "tutor") and EXPLAIN not in prompt_for(tmp_path, "tutor")
    assert EXPLAIN in prompt_for(tmp_path, "explain")
    default = prompt_for(tmp_path, "default")
    assert "Output style" not in default


def test_tutor_prompt_says_hints_not_answers() -> None:
    assert (
        "TODO(you)" in TUTOR
        and "hints in steps" in TUTOR
        and "Never write into a cell the student wrote" in TUTOR
    )


@pytest.mark.parametrize("bad", ["Tutor ", "teacher", "", "none"])
def test_unknown_styles_are_refused_with_the_choices(bad: str) -> None:
    with pytest.raises(InvalidInputError, match="default, explain, tutor"):
        coerce_setting("output_style", bad)


def test_the_cell_header_names_a_style_other_than_the_default() -> None:
    assert header_text("m", "default", "tutor") == "goat · model m · mode default · style tutor"
    assert header_text("m", "default") == "goat · model m · mode default"
