"""Findings that cite their cell (README "Citations"): `[cell 7, out 1]` in an answer, checked against
the notebook's outputs, and the reminder to cite for classrooms."""

from __future__ import annotations

from goat_jupyter.citations.check import OutputIndex, Verdict, output_text
from goat_jupyter.citations.grammar import CITATION, Citation, find_citations
from goat_jupyter.citations.remind import FORMAT, reminder, uncited_numbers
from goat_jupyter.citations.values import Number, Quoted, Value, found_in, parse_number

__all__ = [
    "CITATION",
    "FORMAT",
    "Citation",
    "Number",
    "OutputIndex",
    "Quoted",
    "Value",
    "Verdict",
    "find_citations",
    "found_in",
    "output_text",
    "parse_number",
    "reminder",
    "uncited_numbers",
]
