"""The citation grammar, the value each citation vouches for, and the check against outputs: as an
answer writes them, in the spellings models use, and fuzzed (arbitrary text never raises and nothing
but a citation is ever taken for one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goat_jupyter.citations import (
    CITATION,
    Number,
    OutputIndex,
    Quoted,
    find_citations,
    found_in,
    parse_number,
    uncited_numbers,
)
from goat_jupyter.errors import InvalidInputError
from goat_jupyter.settings import USER_KEYS, coerce_setting
from goat_jupyter.tools import default_registry


def number(text: str) -> Number:
    parsed = parse_number(text)
    assert parsed is not None, text
    return parsed


def result(text: str) -> dict[str, Any]:
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": text},
    }


@pytest.mark.parametrize(
    ("cited", "shown"),
    [
        ("0.42", "0.4213"),
        ("0.4213", "0.421300"),
        ("42.1 %", "0.4213"),
        ("42%", "0.4213"),
        ("42.1%", "42.13"),
        ("0.42", "42%"),
        ("1,234", "1234.2"),
        ("1.2M", "1,234,567"),
        ("3.4k", "3412"),
        ("1.2e-5", "1.23e-05"),
        ("3.2", "-3.2"),  # "a drop of 3.2": signs are not compared
        ("−0.5", "-0.5"),
        ("7", "6.6"),
    ],
)
def test_a_number_matches_its_output_as_rounded(cited: str, shown: str) -> None:
    assert found_in(number(cited), f"value: {shown}\n"), (cited, shown)


@pytest.mark.parametrize(
    ("cited", "shown"),
    [
        ("0.43", "0.4213"),
        ("0.421", "0.4226"),
        ("42.2 %", "0.4213"),
        ("1.3M", "1,234,567"),
        ("1,234", "12345"),
        ("0.42", "2023-04-21"),
        ("12", "1 2"),
        ("5", "15"),
    ],
)
def test_a_number_the_output_does_not_show_does_not_match(cited: str, shown: str) -> None:
    assert not found_in(number(cited), shown), (cited, shown)


def test_a_string_matches_exactly() -> None:
    assert found_in(Quoted("Paris"), "city  Paris\n")
    assert not found_in(Quoted("paris"), "city  Paris\n")
    assert not found_in(Quoted("Paris, France"), "Paris\nFrance")


def test_huge_and_overflowing_numbers_compare_as_written() -> None:
    huge = number("1e999")
    assert found_in(huge, "x 1e999") and not found_in(huge, "x 1e998 inf 5")
    assert found_in(number("9" * 400), "9" * 400) and not found_in(number("9" * 400), "1e999")


@pytest.mark.parametrize(
    ("text", "cell", "out", "value"),
    [
        ("The mean is 0.42 [cell 7, out 1].", 7, 1, "0.42"),
        ("The mean is 0.42 [Cell 7,out 1].", 7, 1, "0.42"),
        ("The mean is 0.42 [cell 7, output 2].", 7, 2, "0.42"),
        ("[cell 7]: the mean is 0.42.", 7, None, "0.42"),
        ("Mean `0.42` [cell 12]", 12, None, "0.42"),
        ('Top city "Paris" [cell 3, out 1]', 3, 1, "Paris"),
        ("Top city `Paris` [cell 3]", 3, None, "Paris"),
        ("Min 0.1, max 0.9 [cell 3]", 3, None, "0.9"),
        ("Cell 4 shows 0.5 [cell 4]", 4, None, "0.5"),
        ("It is 0.5. The cell [cell 4] holds it", 4, None, None),
        ("Mean 0.42 [cell 7, out 1 ✓]", 7, 1, "0.42"),  # a mark the model wrote is goat's to replace
        ("Mean 0.42 [cell 7 ⚠ not in output: 3]", 7, None, "0.42"),
    ],
)
def test_each_citation_takes_the_value_nearest_before_it_in_its_clause(
    text: str, cell: int, out: int | None, value: str | None
) -> None:
    (found,) = find_citations(text)
    assert (found.cell, found.out) == (cell, out)
    assert (found.value.text if found.value is not None else None) == value


def test_two_citations_in_one_sentence_each_take_their_own_value() -> None:
    first, second = find_citations("The mean is 0.42 [cell 7, out 1] and the max 0.99 [cell 7, out 2].")
    assert [first.value, second.value] == [number("0.42"), number("0.99")]


@pytest.mark.parametrize(
    "text",
    [
        "see [cell seven]",
        "[cell 7, out]",
        "[cell -7]",
        "[cells 7]",
        "[cell 7, out 1",
        "cell 7, out 1]",
        "[cell 7 out 1]",
        "[cell\n7]",
        "[cell 7, out 1 ✓\n]",
    ],
)
def test_what_is_not_a_citation_is_not_taken_for_one(text: str) -> None:
    assert find_citations(text) == []


def test_citations_inside_code_are_left_alone() -> None:
    text = "Use `[cell 7]` to cite; 0.4 [cell 7]"
    code = (text.index("`"), text.index("`", text.index("`") + 1) + 1)
    (found,) = find_citations(text, [code])
    assert found.start == text.rindex("[cell 7]")


def test_each_citation_is_checked_against_that_output() -> None:
    index = OutputIndex(
        [
            (3, [result("mean 0.4213"), {"output_type": "stream", "name": "stdout", "text": "city Paris\n"}]),
            (None, [result("never ran: 0.99")]),
        ]
    )
    answer = (
        '0.42 [cell 3, out 1]; 0.42 [cell 3, out 2]; 0.42 [cell 3]; "Paris" [cell 3, out 2]; '
        "0.99 [cell 4]; 0.42 [cell 3, out 3]; [cell 3]"
    )
    verdicts = [v.plain for v in index.verdicts(answer)]
    assert verdicts == [
        "[cell 3, out 1 ✓]",
        "[cell 3, out 2 ⚠ not in output: 0.42]",
        "[cell 3 ✓]",
        "[cell 3, out 2 ✓]",
        "[cell 4 ⚠ no such cell]",
        "[cell 3, out 3 ⚠ no such output (the cell has 2)]",
        "[cell 3]",
    ]


def test_errors_html_and_json_outputs_are_searched_as_text() -> None:
    error = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": "bad 0.5",
        "traceback": ["\x1b[31mx 7\x1b[0m"],
    }
    html = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/html": "<td>12&nbsp;345</td><b>0.25</b>"},
    }
    data = {"output_type": "display_data", "metadata": {}, "data": {"application/json": {"n": 0.75}}}
    index = OutputIndex([(1, [error, html, data])])
    answer = '0.5 [cell 1, out 1]; 0.25 [cell 1, out 2]; 0.75 [cell 1, out 3]; "ValueError" [cell 1, out 1]'
    assert all(v.outcome == "verified" for v in index.verdicts(answer))


def test_a_count_two_cells_share_after_a_restart_checks_both() -> None:
    index = OutputIndex([(1, [result("0.1")]), (1, [result("0.2"), result("0.3")])])
    outcomes = [v.outcome for v in index.verdicts("0.1 [cell 1, out 1]; 0.3 [cell 1, out 2]; 0.4 [cell 1]")]
    assert outcomes == ["verified", "verified", "absent"]


def test_uncited_numbers_are_findings_only() -> None:
    text = (
        "1. In 2023 prices rose 12.5% to 1,234 units.\n"
        "2. The mean is 0.42 [cell 3].\n"
        "Three cells ran; see cell 12 and `0.77`."
    )
    assert uncited_numbers(text, [(text.index("`"), len(text))]) == ["12.5%", "1,234"]


_ANSWERS = st.text(
    alphabet=st.sampled_from(list('[]cellout ,0123456789.%-"`✓⚠:;\nKMxy')) | st.characters(), max_size=200
)


@settings(max_examples=400, deadline=None)
@given(_ANSWERS)
def test_arbitrary_text_never_raises_and_only_citations_are_found(text: str) -> None:
    for citation in find_citations(text):
        assert CITATION.fullmatch(text, citation.start, citation.end), text
        assert citation.value is None or citation.value.text in text
    uncited_numbers(text)
    OutputIndex([(7, [result(text)])]).verdicts(text)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.integers(min_value=0, max_value=6))
def test_any_number_matches_itself_rounded_to_any_precision(value: float, decimals: int) -> None:
    shown = repr(value)
    cited = f"{value:.{decimals}f}"
    assert found_in(number(cited), shown), (cited, shown)


@pytest.mark.parametrize("spelling", ["cite_numbers", "citeNumbers", "CITE_NUMBERS"])
async def test_the_model_cannot_switch_its_reminder_off(tmp_path: Path, spelling: str) -> None:
    """`cite_numbers` is the user's (a class's) setting: the Config tool refuses it in any spelling."""
    registry = default_registry(cwd=tmp_path)
    registry.session.settings.cite_numbers = "remind"
    out = await registry.call("Config", {"setting": spelling, "value": "off"})
    assert out.is_error and registry.session.settings.cite_numbers == "remind", out.content
    assert coerce_setting("cite_numbers", "remind", USER_KEYS) == "remind"
    with pytest.raises(InvalidInputError, match="off, or remind"):
        coerce_setting("cite_numbers", "sometimes", USER_KEYS)
