"""The values a citation vouches for: a number as written (with its rounding) or a quoted string, and
whether an output's text holds it. Numbers match when the output's number, rounded the way the answer
wrote it, is the answer's number: 0.4213 matches 0.42, 42.1 % and 42 %; 1,234,567 matches 1.2M."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9}
NUMBER_PATTERN = (
    r"(?<![\w.,])(?P<sign>[-−+]?)(?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d{1,3}))?(?:(?P<pct>[ \t]?%)|(?P<suffix>[kKMB]|bn)\b)?(?![\w]|[.,]\d)"
)
_NUMBER = re.compile(NUMBER_PATTERN)
_SAME = 1e-9  # float noise allowed on top of the written rounding (and a few units in the last place)


@dataclass(frozen=True)
class Number:
    """A number as the text wrote it: its value and half a unit of its last written digit."""

    text: str
    value: float
    tolerance: float
    percent: bool


@dataclass(frozen=True)
class Quoted:
    """A string the answer quoted; the output must contain it exactly."""

    text: str


Value = Number | Quoted


def number_of(match: re.Match[str]) -> Number:
    """The Number a `NUMBER_PATTERN` match wrote."""
    body = match.group("body").replace(",", "")
    decimals = len(body.split(".")[1]) if "." in body else 0
    exponent = int(match.group("exp") or 0)
    multiplier = _SUFFIXES.get((match.group("suffix") or "").lower(), 1.0)
    sign = -1.0 if match.group("sign") in ("-", "−") else 1.0
    value = float(f"{body}e{exponent}") * multiplier * sign  # a string never overflows: inf at worst
    tolerance = 0.5 * float(f"1e{exponent - decimals}") * multiplier
    return Number(match.group(0), value, tolerance, bool(match.group("pct")))


def parse_number(text: str) -> Number | None:
    """`text` as one number (`0.42`, `42.1 %`, `1.2e-5`, `3.4M`), else None."""
    match = _NUMBER.fullmatch(text.strip())
    return number_of(match) if match else None


def numbers_in(text: str) -> list[Number]:
    return [number_of(match) for match in _NUMBER.finditer(text)]


def found_in(value: Value, text: str) -> bool:
    """Whether an output's text holds the value: a string exactly, a number as rounded."""
    if isinstance(value, Quoted):
        return value.text in text
    return any(_same_number(value, shown) for shown in numbers_in(text))


def _same_number(cited: Number, shown: Number) -> bool:
    """`shown` (the output's), read at each scale a percent allows, rounds to `cited`; signs aside
    (an answer says "a drop of 3.2 %" of an output's -3.2)."""
    if not (math.isfinite(cited.value) and math.isfinite(cited.tolerance)):
        return shown.text == cited.text
    for scale in _scales(cited.percent, shown.percent):
        seen = abs(shown.value * scale)
        noise = cited.tolerance * _SAME + 4 * math.ulp(max(seen, abs(cited.value)))
        if abs(seen - abs(cited.value)) <= cited.tolerance + noise:
            return True
    return False


def _scales(cited_percent: bool, shown_percent: bool) -> tuple[float, ...]:
    if cited_percent and not shown_percent:
        return (1.0, 100.0)  # 42.1 % of an output's 0.421 (or of a column already in percent)
    if shown_percent and not cited_percent:
        return (1.0, 0.01)
    return (1.0,)
