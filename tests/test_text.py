"""Lone UTF-16 surrogates are replaced so any text encodes; text that already encodes is untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from goat_jupyter.text import map_strings, utf8_line, without_surrogates

ANY_TEXT = st.lists(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=40).map(
    "".join
)


@given(ANY_TEXT)
def test_any_text_encodes_after_replacement(text: str) -> None:
    cleaned = without_surrogates(text)
    assert cleaned.encode("utf-8").decode("utf-8") == cleaned
    assert len(cleaned) == len(text)  # one U+FFFD per surrogate: positions stay
    assert utf8_line(text) == cleaned.encode("utf-8")


@given(st.text())
def test_text_that_encodes_is_left_as_it_is(text: str) -> None:
    assert without_surrogates(text) == text
    assert utf8_line(text) == text.encode("utf-8")


def test_surrogateescaped_file_names_and_pairs_split_by_a_stream() -> None:
    assert without_surrogates("caf\udce9.txt") == "caf\ufffd.txt"  # b"caf\xe9" decoded with surrogateescape
    assert without_surrogates("\ud83d\ude00") == "\ufffd\ufffd"  # the halves as two code points


def test_map_strings_reaches_keys_values_and_nested_containers() -> None:
    data = {"k\ud800": ["a\udfff", ("b\udc00", 1)], "n": None}
    assert map_strings(data, without_surrogates) == {"k\ufffd": ["a\ufffd", ("b\ufffd", 1)], "n": None}
