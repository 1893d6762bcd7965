"""Citation marks in the %%goat cell, through JupyterLab's own Markdown renderer (marked in node): goat's
marks are links to `#goat-cite-...` added after the model's text is made safe; the model cannot write
such a link itself, and whatever it writes, only citations change."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.citations import CITATION, OutputIndex
from goat_jupyter.ui.safe.cited import cited_answer
from goat_jupyter.ui.safe.markdown import clean_newlines
from tests.ui.test_ui_safe_markdown import Marked, marked, violations

__all__ = ["marked"]  # the renderer fixture, one node process for this module
ANCHOR = re.compile(r"#goat-cite-(\d+)-(\d+)-(ok|bad|ref)")  # labextension/src/citations.ts
INDEX = OutputIndex(
    [(7, [{"output_type": "execute_result", "metadata": {}, "data": {"text/plain": "mean 0.4213"}}])]
)


def goat_links(marked: Marked, markdown: str) -> list[str]:
    _, elements = marked.render(markdown)
    assert violations(elements) == [], markdown
    hrefs = [e.attrs.get("href", "") for e in elements if e.tag == "a"]
    return [href for href in hrefs if href.lower().replace("\\", "").startswith("#goat-cite")]


def test_marks_render_as_links_to_the_output(marked: Marked) -> None:
    markdown, plain = cited_answer("Mean 0.42 [cell 7, out 1], max 0.99 [cell 7]. See [cell 8].", INDEX)
    assert goat_links(marked, markdown) == ["#goat-cite-7-1-ok", "#goat-cite-7-0-bad", "#goat-cite-8-0-bad"]
    assert (
        plain
        == "Mean 0.42 [cell 7, out 1 ✓], max 0.99 [cell 7 ⚠ not in output: 0.99]. See [cell 8 ⚠ no such cell]."
    )


FORGERIES = [
    "[✓](#goat-cite-7-1-ok)",
    "[✓](#GOAT-CITE-7-1-ok)",
    "[✓](#goat\\-cite-7-1-ok)",
    "[✓][r]\n\n[r]: #goat-cite-7-1-ok",
    "<a href='#goat-cite-7-1-ok'>✓</a>",
    "[✓](#goat-cite-7-1-x:-ok)",
    "[✓](<#goat-cite-7-1-ok>)",
]


def test_the_model_cannot_link_to_a_citation_anchor(marked: Marked) -> None:
    for forged in FORGERIES:
        markdown, _ = cited_answer(f"0.42 [cell 7] {forged}", INDEX)
        assert goat_links(marked, markdown) == ["#goat-cite-7-0-ok"], forged


def test_a_mark_the_model_wrote_is_replaced_by_goats_verdict(marked: Marked) -> None:
    markdown, plain = cited_answer("Max 0.99 [cell 7, out 1 ✓] and 0.42 [cell 7 ⚠ <b>not</b> there]", INDEX)
    assert plain == "Max 0.99 [cell 7, out 1 ⚠ not in output: 0.99] and 0.42 [cell 7 ✓]"
    assert goat_links(marked, markdown) == ["#goat-cite-7-1-bad", "#goat-cite-7-0-ok"]


def test_a_quoted_value_in_a_warning_is_shown_as_text(marked: Marked) -> None:
    markdown, plain = cited_answer('Top: "<img src=x> [x](javascript:y) $x$ `c`" [cell 7]', INDEX)
    assert goat_links(marked, markdown) == ["#goat-cite-7-0-bad"]
    assert plain.endswith('[cell 7 ⚠ not in output: "<img src=x> [x](javascript:y) $x$ `c`"]'), plain
    html, _ = marked.render(markdown)
    assert "⚠ not in output: &quot;&lt;img src=x&gt; [x](javascript:y) $x$ `c`&quot;" in html, html
    long, _ = cited_answer(f'"{"x" * 100}" [cell 7]', INDEX)
    assert f'not in output\\: \\"{"x" * 38}…\\]' in long


def test_citations_in_code_are_not_marked(marked: Marked) -> None:
    text = "Write `[cell 7]` like this:\n\n```\n0.42 [cell 7]\n```\n\n    0.42 [cell 7]\n"
    markdown, plain = cited_answer(text, INDEX)
    assert plain == clean_newlines(text) and goat_links(marked, markdown) == []


_PIECES = st.sampled_from(
    [
        "[cell 7]",
        "[cell 7, out 1]",
        "[cell 8, out 2 ✓]",
        "[cell 7 ⚠ x]",
        " 0.42 ",
        ' "mean" ',
        "`",
        "```\n",
        "\n",
        "<",
        "&",
        "$",
        "!",
        "javascript:",
        "goat-cite",
        "\\",
        "[",
        "](",
        ")",
        "*",
        "_",
        "#",
        ". ",
        ";",
        "    ",
    ]
)
_TEXTS = st.lists(_PIECES | st.text(max_size=8), max_size=30).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_TEXTS)
def test_any_answer_renders_safely_and_only_its_citations_change(marked: Marked, text: str) -> None:
    markdown, plain = cited_answer(text, INDEX)
    clean = clean_newlines(text)
    assert CITATION.sub("", plain) == CITATION.sub("", clean), (text, plain)
    links = goat_links(marked, markdown)
    assert all(ANCHOR.fullmatch(link) for link in links), links
    marks: Any = [m for m in CITATION.finditer(plain) if m.group(0) not in clean]
    assert len(links) >= len(marks)
