"""Each citation checked against the live notebook's outputs: verified, a value the output does not
hold, a cell or output that does not exist, or nothing to check (no value beside it)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from goat_jupyter.citations.grammar import Citation, Span, find_citations
from goat_jupyter.citations.values import Number, Value, found_in
from goat_jupyter.represent import LLM_MIME

Outcome = Literal["verified", "absent", "no_cell", "no_output", "unchecked"]
_TEXT_MIMES = ("text/plain", LLM_MIME, "text/markdown", "text/latex")
_TAG = re.compile(r"<[^>]*>")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
MAX_SHOWN_VALUE = 40  # characters of a cited value a warning repeats


@dataclass(frozen=True)
class Verdict:
    """What goat found for one citation."""

    citation: Citation
    outcome: Outcome
    outputs: int = 0  # how many outputs the cell has (for a citation of one it lacks)

    @property
    def plain(self) -> str:
        """The citation as the saved notebook and `nbconvert --to goat` show it."""
        return f"[{self.citation.label}{self.note}]"

    @property
    def note(self) -> str:
        """What goat adds inside the brackets: ` ✓`, ` ⚠ not in output: 0.53`, or nothing."""
        match self.outcome:
            case "verified":
                return " ✓"
            case "absent":
                return f" ⚠ not in output: {shown_value(self.citation.value)}"
            case "no_cell":
                return " ⚠ no such cell"
            case "no_output":
                return f" ⚠ no such output (the cell has {self.outputs})"
            case "unchecked":
                return ""


def shown_value(value: Value | None) -> str:
    """A cited value as a warning repeats it: a number as written, a string quoted, both cut short."""
    if value is None:
        return ""
    text = value.text if isinstance(value, Number) else f'"{value.text}"'
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN_VALUE else text[: MAX_SHOWN_VALUE - 1] + "…"


class OutputIndex:
    """The notebook's code cells by execution count, each output as the text a value is looked for in."""

    def __init__(self, cells: Iterable[tuple[int | None, Sequence[Mapping[str, Any]]]]) -> None:
        self._cells: dict[int, list[list[str]]] = {}
        for count, outputs in cells:
            if count is not None:  # two cells may show the same count (after a restart): both are kept
                self._cells.setdefault(count, []).append([output_text(o) for o in outputs])

    def check(self, citation: Citation) -> Verdict:
        candidates = self._cells.get(citation.cell)
        if not candidates:
            return Verdict(citation, "no_cell")
        if citation.out is not None:
            fitting = [outputs for outputs in candidates if 1 <= citation.out <= len(outputs)]
            if not fitting:
                return Verdict(citation, "no_output", max(len(outputs) for outputs in candidates))
            texts = [outputs[citation.out - 1] for outputs in fitting]
        else:
            texts = ["\n".join(outputs) for outputs in candidates]
        if citation.value is None:
            return Verdict(citation, "unchecked")
        value = citation.value
        return Verdict(citation, "verified" if any(found_in(value, text) for text in texts) else "absent")

    def verdicts(self, text: str, skip: Sequence[Span] = ()) -> list[Verdict]:
        """Every citation in an answer, checked."""
        return [self.check(citation) for citation in find_citations(text, skip)]


def output_text(output: Mapping[str, Any]) -> str:
    """Everything an output shows as text: a stream, an error, or each text form of a display."""
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text"))
    if kind == "error":
        lines = cast(list[object], output.get("traceback") or [])
        traceback = _ANSI.sub("", "\n".join(_joined(line) for line in lines))
        return f"{output.get('ename', '')}: {output.get('evalue', '')}\n{traceback}"
    data = cast(Mapping[str, Any], output.get("data") or {})
    parts = [_joined(data[mime]) for mime in _TEXT_MIMES if mime in data]
    if "text/html" in data:
        parts.append(html.unescape(_TAG.sub(" ", _joined(data["text/html"]))))
    if "application/json" in data:
        parts.append(json.dumps(data["application/json"]))
    return "\n".join(parts)


def _joined(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in cast(list[object], value))
    return "" if value is None else str(value)
