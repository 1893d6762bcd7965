"""An answer's citations marked in the cell: each checked one a link to its output (the labextension
scrolls there) with ✓ or a warning; the marks are goat's Markdown, added after the text is made safe."""

from __future__ import annotations

from collections.abc import Sequence

from goat_jupyter.citations import OutputIndex, Verdict
from goat_jupyter.ui.safe.markdown import clean_newlines, escape_inline, literal_spans, marked_markdown

CITE_ANCHOR = (
    "goat-cite"  # href="#goat-cite-<count>-<output or 0>-<ok|bad|ref>" (labextension/src/citations.ts)
)


def cited_answer(text: str, index: OutputIndex) -> tuple[str, str]:
    """The answer as safe Markdown with its citations marked, and as plain text with the same marks."""
    clean = clean_newlines(text)
    verdicts = index.verdicts(clean, literal_spans(clean))
    markdown, applied = marked_markdown(
        clean, [(v.citation.start, v.citation.end, mark_markdown(v)) for v in verdicts]
    )
    shown = {start for start, _, _ in applied}
    return markdown, plain_marked(clean, [v for v in verdicts if v.citation.start in shown])


def mark_markdown(verdict: Verdict) -> str:
    """One citation as goat's own Markdown: a link whose text is the plain mark, bold when it warns."""
    state = {"verified": "ok", "unchecked": "ref"}.get(verdict.outcome, "bad")
    shown = escape_inline(verdict.plain)
    if state == "bad":
        shown = f"**{shown}**"
    citation = verdict.citation
    return f"[{shown}](#{CITE_ANCHOR}-{citation.cell}-{citation.out or 0}-{state})"


def plain_marked(text: str, verdicts: Sequence[Verdict]) -> str:
    parts: list[str] = []
    position = 0
    for verdict in verdicts:
        parts += [text[position : verdict.citation.start], verdict.plain]
        position = verdict.citation.end
    parts.append(text[position:])
    return "".join(parts)
