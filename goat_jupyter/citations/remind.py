"""The classroom setting `cite_numbers: remind`: numbers an answer states with no citation in their
sentence, and the note that asks the model to cite them next time."""

from __future__ import annotations

import re
from collections.abc import Sequence

from goat_jupyter.citations.grammar import CITATION, Span, values_in
from goat_jupyter.citations.values import Number, Value

FORMAT = (
    "cite the cell and output right after the value, like 0.42 [cell 7, out 1] (7: the number in "
    "the cell's [7]: prompt, its execution count; out 1: its first output; [cell 7]: any of its outputs)"
)
_SENTENCE_END = re.compile(r"\n|[.!?](?=\s)")
_YEAR = re.compile(r"(?:19|20)\d\d")
MAX_LISTED = 5


def uncited_numbers(text: str, skip: Sequence[Span] = ()) -> list[str]:
    """Numbers stated outside code in sentences that cite nothing (years and small counts aside)."""
    found: list[str] = []
    start = 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if not CITATION.search(text, start, end):
            found += [v.text for at, v in values_in(text, start, end) if _stated(v, at, skip)]
        start = end
    return found


def _stated(value: Value, at: int, skip: Sequence[Span]) -> bool:
    """A number outside code that reads as a finding: with decimals, a percent, or three digits."""
    if not isinstance(value, Number) or any(start <= at < end for start, end in skip):
        return False
    digits = sum(c.isdigit() for c in value.text)
    findings = "." in value.text or value.percent or (digits >= 3 and not _YEAR.fullmatch(value.text))
    return bool(findings)


def reminder(numbers: Sequence[str]) -> str:
    """The note the model reads with its next request."""
    listed = ", ".join(numbers[:MAX_LISTED]) + (", ..." if len(numbers) > MAX_LISTED else "")
    return (
        f"Your last answer stated numbers without saying where they came from ({listed}). When you state "
        f"a value taken from the notebook, {FORMAT}. goat checks each cited value against that output."
    )
