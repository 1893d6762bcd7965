"""Data questions over generated CSVs, with closed-form answers and a formatting-tolerant scorer (issue 34).

Three tables (sales, weather, students) come from a seeded generator, so every run and every harness
sees the same bytes. Each question states its answer's form (a number with its rounding, a name, a
count); `expected` is that answer stored as text, and `compute` derives it from the tables with
pandas (tests/test_real_model_data.py checks that the two agree).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

SEED = 34
Tables = dict[str, pd.DataFrame]
Kind = Literal["number", "name"]


def sales_table(rng: np.random.Generator) -> pd.DataFrame:
    n = 240
    dates = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 366, n), unit="D")
    prices = {"Widget": 4.5, "Gadget": 12.0, "Gizmo": 7.25, "Doohickey": 19.9}
    products = rng.choice(list(prices), n)
    return pd.DataFrame(
        {
            "order_id": np.arange(1001, 1001 + n),
            "date": dates.strftime("%Y-%m-%d"),
            "region": rng.choice(["North", "South", "East", "West"], n),
            "product": products,
            "units": rng.integers(1, 40, n),
            "unit_price": [round(prices[p] * float(rng.uniform(0.85, 1.15)), 2) for p in products],
        }
    ).sort_values("date", kind="stable", ignore_index=True)


def weather_table(rng: np.random.Generator) -> pd.DataFrame:
    days = pd.date_range("2024-03-01", periods=90, freq="D")
    frames: list[pd.DataFrame] = []
    for city, base in (("Oslo", 3.0), ("Lima", 19.0), ("Cairo", 24.0)):
        rain = np.where(rng.random(len(days)) < 0.35, rng.gamma(2.0, 3.0, len(days)), 0.0)
        frames.append(
            pd.DataFrame(
                {
                    "date": days.strftime("%Y-%m-%d"),
                    "city": city,
                    "temp_c": np.round(
                        base + np.linspace(0, 8, len(days)) + rng.normal(0, 2.5, len(days)), 1
                    ),
                    "rain_mm": np.round(rain, 1),
                    "wind_kmh": rng.integers(0, 45, len(days)),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def students_table(rng: np.random.Generator) -> pd.DataFrame:
    first = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
    last = ["Berg", "Chen", "Diaz", "Eko", "Fox", "Grau", "Holm", "Ito", "Jain", "Kova"]
    n = 60
    names = [f"{first[i % len(first)]} {last[(i * 7) % len(last)]}" for i in range(n)]
    return pd.DataFrame(
        {
            "student_id": np.arange(1, n + 1),
            "name": names,
            "class": rng.choice(["Amber", "Birch", "Cedar"], n),
            "math": np.clip(rng.normal(68, 15, n).round(), 0, 100).astype(int),
            "physics": np.clip(rng.normal(62, 17, n).round(), 0, 100).astype(int),
            "english": np.clip(rng.normal(72, 12, n).round(), 0, 100).astype(int),
            "attendance_pct": np.round(rng.uniform(70, 100, n), 1),
        }
    )


def make_tables(seed: int = SEED) -> Tables:
    rng = np.random.default_rng(seed)
    return {
        "sales.csv": sales_table(rng),
        "weather.csv": weather_table(rng),
        "students.csv": students_table(rng),
    }


def write_tables(folder: Path, tables: Tables | None = None) -> None:
    for name, frame in (tables or make_tables()).items():
        frame.to_csv(folder / name, index=False)


@dataclass(frozen=True)
class Question:
    qid: str
    text: str  # the question, with the form of its answer
    kind: Kind
    expected: str  # the closed form: "42.10", "17", "North"
    compute: Callable[[Tables], str]  # the same answer from the tables, with pandas
    choices: tuple[str, ...] = ()  # for a name: the other names it must not be confused with


def _revenue(t: Tables) -> pd.DataFrame:
    s = t["sales.csv"].copy()
    s["revenue"] = s["units"] * s["unit_price"]
    return s


# pandas' stubs type an aggregate as a union of scalar, Series and DataFrame: these take what they get.
def _dp(value: Any, places: int) -> str:
    return f"{float(value):.{places}f}"


def _argmax(series: Any) -> str:
    return str(series.idxmax())


def _argmin(series: Any) -> str:
    return str(series.idxmin())


REGIONS = ("North", "South", "East", "West")
PRODUCTS = ("Widget", "Gadget", "Gizmo", "Doohickey")
CITIES = ("Oslo", "Lima", "Cairo")
CLASSES = ("Amber", "Birch", "Cedar")
NUM2 = "Answer with the number rounded to 2 decimal places."
NUM1 = "Answer with the number rounded to 1 decimal place."
COUNT = "Answer with the count (a whole number)."
NAME = "Answer with the name only."

# fmt: off
QUESTIONS: list[Question] = [
    Question("sales-rows", f"How many orders (data rows) are in sales.csv? {COUNT}", "number", "240",
             lambda t: str(len(t["sales.csv"]))),
    Question("sales-units", f"What is the total of the units column in sales.csv? {COUNT}", "number", "4906",
             lambda t: str(int(t["sales.csv"]["units"].sum()))),
    Question("sales-revenue", f"In sales.csv, revenue is units * unit_price. What is the total revenue? {NUM2}",
             "number", "54082.50", lambda t: _dp(_revenue(t)["revenue"].sum(), 2)),
    Question("sales-mean-price", f"What is the mean unit_price in sales.csv? {NUM2}", "number", "11.02",
             lambda t: _dp(t["sales.csv"]["unit_price"].mean(), 2)),
    Question("sales-top-region", f"In sales.csv (revenue = units * unit_price), which region has the highest total revenue? {NAME}",
             "name", "North", lambda t: _argmax(_revenue(t).groupby("region")["revenue"].sum()), REGIONS),
    Question("sales-low-region", f"In sales.csv, which region sold the fewest units in total? {NAME}",
             "name", "West", lambda t: _argmin(t["sales.csv"].groupby("region")["units"].sum()), REGIONS),
    Question("sales-top-product", f"In sales.csv, which product sold the most units in total? {NAME}",
             "name", "Gizmo", lambda t: _argmax(t["sales.csv"].groupby("product")["units"].sum()), PRODUCTS),
    Question("sales-gadget-units", f"In sales.csv, how many units of Gadget were sold in total? {COUNT}",
             "number", "1094", lambda t: str(int(t["sales.csv"].query("product == 'Gadget'")["units"].sum()))),
    Question("sales-big-orders", f"In sales.csv, how many orders have more than 30 units? {COUNT}", "number", "54",
             lambda t: str(int((t["sales.csv"]["units"] > 30).sum()))),
    Question("sales-march-revenue", f"In sales.csv (revenue = units * unit_price), what was the total revenue in March 2024? {NUM2}",
             "number", "3954.44",
             lambda t: _dp(_revenue(t).loc[lambda s: s["date"].str.startswith("2024-03"), "revenue"].sum(), 2)),
    Question("sales-top-month", f"In sales.csv, in which month (answer with its number, 1-12) were the most units sold? {COUNT}",
             "number", "2",
             lambda t: _argmax(t["sales.csv"].groupby(pd.to_datetime(t["sales.csv"]["date"]).dt.month)["units"].sum())),
    Question("sales-north-mean-units", f"In sales.csv, what is the mean number of units per order in the North region? {NUM2}",
             "number", "20.56", lambda t: _dp(t["sales.csv"].query("region == 'North'")["units"].mean(), 2)),
    Question("sales-max-order", f"In sales.csv (revenue = units * unit_price), what is the revenue of the single largest order? {NUM2}",
             "number", "858.78", lambda t: _dp(_revenue(t)["revenue"].max(), 2)),
    Question("weather-rows", f"How many rows does weather.csv have? {COUNT}", "number", "270",
             lambda t: str(len(t["weather.csv"]))),
    Question("weather-oslo-mean", f"In weather.csv, what is the mean temp_c for Oslo? {NUM2}", "number", "7.35",
             lambda t: _dp(t["weather.csv"].query("city == 'Oslo'")["temp_c"].mean(), 2)),
    Question("weather-wettest", f"In weather.csv, which city has the most total rain_mm? {NAME}", "name", "Lima",
             lambda t: _argmax(t["weather.csv"].groupby("city")["rain_mm"].sum()), CITIES),
    Question("weather-dry-days-lima", f"In weather.csv, on how many days did Lima have no rain (rain_mm equal to 0)? {COUNT}",
             "number", "48", lambda t: str(int(t["weather.csv"].query("city == 'Lima' and rain_mm == 0").shape[0]))),
    Question("weather-max-temp", f"In weather.csv, what is the highest temp_c of any city on any day? {NUM1}",
             "number", "35.1", lambda t: _dp(t["weather.csv"]["temp_c"].max(), 1)),
    Question("weather-max-temp-city", f"In weather.csv, which city recorded the single highest temp_c? {NAME}",
             "name", "Cairo",
             lambda t: str(t["weather.csv"].loc[t["weather.csv"]["temp_c"].idxmax(), "city"]), CITIES),
    Question("weather-windiest", f"In weather.csv, which city has the highest mean wind_kmh? {NAME}", "name", "Oslo",
             lambda t: _argmax(t["weather.csv"].groupby("city")["wind_kmh"].mean()), CITIES),
    Question("weather-cairo-rain", f"In weather.csv, what is Cairo's total rain_mm? {NUM1}", "number", "148.3",
             lambda t: _dp(t["weather.csv"].query("city == 'Cairo'")["rain_mm"].sum(), 1)),
    Question("weather-cold-days", f"In weather.csv, how many rows have temp_c below 0? {COUNT}", "number", "2",
             lambda t: str(int((t["weather.csv"]["temp_c"] < 0).sum()))),
    Question("weather-april-lima", f"In weather.csv, what is Lima's mean temp_c in April 2024? {NUM2}", "number", "23.62",
             lambda t: _dp(t["weather.csv"].query("city == 'Lima' and date.str.startswith('2024-04')")["temp_c"].mean(), 2)),
    Question("weather-temp-std", f"In weather.csv, what is the standard deviation (pandas default, ddof=1) of temp_c over all rows? {NUM2}",
             "number", "9.51", lambda t: _dp(t["weather.csv"]["temp_c"].std(), 2)),
    Question("students-rows", f"How many students are in students.csv? {COUNT}", "number", "60",
             lambda t: str(len(t["students.csv"]))),
    Question("students-math-mean", f"In students.csv, what is the mean math score? {NUM2}", "number", "68.12",
             lambda t: _dp(t["students.csv"]["math"].mean(), 2)),
    Question("students-best-class", f"In students.csv, which class has the highest mean physics score? {NAME}",
             "name", "Birch", lambda t: _argmax(t["students.csv"].groupby("class")["physics"].mean()), CLASSES),
    Question("students-top-english", f"In students.csv, what is the name of the student with the highest english score? {NAME}",
             "name", "Jun Eko",
             lambda t: str(t["students.csv"].loc[t["students.csv"]["english"].idxmax(), "name"])),
    Question("students-pass-math", f"In students.csv, how many students scored 50 or more in math? {COUNT}",
             "number", "55", lambda t: str(int((t["students.csv"]["math"] >= 50).sum()))),
    Question("students-class-a", f"In students.csv, how many students are in class Amber? {COUNT}", "number", "16",
             lambda t: str(int((t["students.csv"]["class"] == "Amber").sum()))),
    Question("students-english-median", f"In students.csv, what is the median english score? {NUM1}", "number", "70.5",
             lambda t: _dp(t["students.csv"]["english"].median(), 1)),
    Question("students-corr", f"In students.csv, what is the Pearson correlation between math and physics? {NUM2}",
             "number", "-0.09", lambda t: _dp(t["students.csv"]["math"].corr(t["students.csv"]["physics"]), 2)),
    Question("students-attendance", f"In students.csv, what is the mean attendance_pct of class Cedar? {NUM1}", "number", "85.0",
             lambda t: _dp(t["students.csv"].query("`class` == 'Cedar'")["attendance_pct"].mean(), 1)),
    Question("students-avg-top", f"In students.csv, the average of a student's math, physics and english scores is their overall score. What is the highest overall score? {NUM2}",
             "number", "85.67",
             lambda t: _dp(t["students.csv"][["math", "physics", "english"]].mean(axis=1).max(), 2)),
]
# fmt: on

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def numbers_in(line: str) -> list[float]:
    """The numbers a line states: "$1,234.50" is 1234.5, "42.1%" is 42.1."""
    out: list[float] = []
    for token in _NUMBER.findall(line):
        try:
            out.append(float(token.replace(",", "")))
        except ValueError:
            continue
    return out


def _last_line_with(lines: list[str], found: Callable[[str], bool]) -> str:
    return next((line for line in reversed(lines) if found(line)), "")


def _plain_lines(answer: str) -> list[str]:
    """The reply's lines outside code fences: code that prints an answer is not an answer."""
    unfenced = re.sub(r"```.*?(```|$)", "", answer, flags=re.DOTALL)
    return [line for line in unfenced.splitlines() if line.strip()]


def score(question: Question, answer: str) -> bool:
    """Whether `answer` gives the question's answer: for a number, the last line stating numbers must
    hold it at the stated rounding; for a name, the last line naming any choice names this one alone."""
    lines = _plain_lines(answer)
    if question.kind == "number":
        places = len(question.expected.partition(".")[2])
        target = float(question.expected)
        line = _last_line_with(lines, lambda text: bool(numbers_in(text)))
        return any(round(abs(value - target), places + 2) <= 0.5 * 10**-places for value in numbers_in(line))
    names = {question.expected, *question.choices}

    def mentioned(text: str) -> set[str]:
        return {n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text, re.IGNORECASE)}

    line = _last_line_with(lines, lambda text: bool(mentioned(text)))
    return mentioned(line) == {question.expected}
