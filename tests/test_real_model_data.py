"""The real-model benchmark's data questions (issue 34): the generated CSVs are the same every time,
pandas on the written files gives every stored closed-form answer, and the scorer accepts an answer
however it is formatted but never a wrong, ambiguous or merely shown one. Also the local-model
script's check of the served chat template, against a real HTTP server."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.real_model.data_questions import QUESTIONS, Question, make_tables, score, write_tables

ROOT = Path(__file__).resolve().parents[1]


def by_id(qid: str) -> Question:
    return next(q for q in QUESTIONS if q.qid == qid)


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.csv"))}


def test_the_tables_are_the_same_bytes_every_time(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_tables(tmp_path / "a")
    write_tables(tmp_path / "b", make_tables())
    assert digests(tmp_path / "a") == digests(tmp_path / "b")
    assert set(digests(tmp_path / "a")) == {"sales.csv", "weather.csv", "students.csv"}


def test_pandas_on_the_written_csvs_gives_every_stored_answer(tmp_path: Path) -> None:
    write_tables(tmp_path)
    tables = {name: pd.read_csv(tmp_path / name) for name in ("sales.csv", "weather.csv", "students.csv")}
    assert [q.compute(tables) for q in QUESTIONS] == [q.expected for q in QUESTIONS]


def test_at_least_thirty_questions_each_with_its_form_and_a_unique_id() -> None:
    assert len(QUESTIONS) >= 30
    assert len({q.qid for q in QUESTIONS}) == len(QUESTIONS)
    assert all("Answer with" in q.text for q in QUESTIONS)
    assert all(q.expected in q.choices for q in QUESTIONS if q.choices)


def test_another_seed_gives_other_tables() -> None:
    assert not make_tables(35)["sales.csv"].equals(make_tables()["sales.csv"])


@pytest.mark.parametrize(
    "answer",
    ["42.10", "42.1", "$42.10", "**42.10**", "The mean is 42.10.", "I read the file.\nThe mean is $42.10"],
)
def test_a_two_place_number_in_any_dress_passes(answer: str) -> None:
    question = Question("q", "?", "number", "42.10", lambda t: "42.10")
    assert score(question, answer)


@pytest.mark.parametrize(
    "answer",
    [
        "42.11",
        "42",
        "4210",
        "",
        "The mean is 42.10.\nAfter running this code you will get 3 rows.",  # the last stated number counts
        "```python\nprint(round(df.price.mean(), 2))  # 42.10\n```\nRun this code to get the answer.",
        "```python\nx = 42.10\n```",  # code that shows the number is not an answer
    ],
)
def test_a_wrong_late_or_only_shown_number_fails(answer: str) -> None:
    question = Question("q", "?", "number", "42.10", lambda t: "42.10")
    assert not score(question, answer)


def test_thousands_separators_signs_and_counts() -> None:
    assert score(Question("q", "?", "number", "54082.50", lambda t: ""), "Total revenue: $54,082.50")
    assert score(Question("q", "?", "number", "-0.09", lambda t: ""), "r = -0.09")
    assert not score(Question("q", "?", "number", "-0.09", lambda t: ""), "r = 0.09")
    assert score(Question("q", "?", "number", "240", lambda t: ""), "There are 240 orders.")
    assert not score(Question("q", "?", "number", "240", lambda t: ""), "There are 241 orders.")


@pytest.mark.parametrize(
    "answer", ["North", "north", "**NORTH**", "The region is North.", "Counting...\nNorth"]
)
def test_a_name_passes_in_any_case(answer: str) -> None:
    assert score(by_id("sales-top-region"), answer)


@pytest.mark.parametrize(
    "answer", ["South", "North and South", "North, then West", "Northern", "", "```\nNorth\n```"]
)
def test_a_wrong_hedged_or_partial_name_fails(answer: str) -> None:
    assert not score(by_id("sales-top-region"), answer)


DRESS = ["{}", "${}", "**{}**", "The answer is {}.", "Result:\n\n{}", "`{}`", "\\boxed{{{}}}"]


@given(st.sampled_from(QUESTIONS), st.sampled_from(DRESS))
def test_every_stored_answer_passes_its_own_question(question: Question, dress: str) -> None:
    assert score(question, dress.format(question.expected))


@given(
    st.sampled_from([q for q in QUESTIONS if q.kind == "number"]),
    st.sampled_from(DRESS),
    st.sampled_from([-1, 1]),
)
def test_one_unit_off_in_the_last_place_fails(question: Question, dress: str, sign: int) -> None:
    places = len(question.expected.partition(".")[2])
    off = float(question.expected) + sign * 10**-places
    assert not score(question, dress.format(f"{off:.{places}f}"))


class Props(BaseHTTPRequestHandler):
    body: ClassVar[dict[str, Any]] = {}

    def do_GET(self) -> None:
        data = json.dumps(self.body).encode()
        self.send_response(200 if self.path == "/props" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def props_server() -> Iterator[tuple[int, type[Props]]]:
    handler = type("Handler", (Props,), {"body": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], handler
    server.shutdown()


def check(port: int) -> str:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "local_model_server.py"),
            "check",
            "--port",
            str(port),
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stderr


TOOL_TEMPLATE = "{%- if tools %}# Tools{% for m in messages %}{{ m.tool_calls }}{% endfor %}{% endif %}"


@pytest.mark.parametrize(
    ("props", "aware"),
    [
        ({"chat_template": TOOL_TEMPLATE}, True),
        ({"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}, False),
        (
            {
                "chat_template": TOOL_TEMPLATE,
                "chat_template_caps": {"supports_tools": True, "supports_tool_calls": True},
            },
            True,
        ),
        # the server's own verdict wins over words in the template
        (
            {
                "chat_template": TOOL_TEMPLATE,
                "chat_template_caps": {"supports_tools": True, "supports_tool_calls": False},
            },
            False,
        ),
        ({}, False),
    ],
)
def test_the_template_check_says_plainly_whether_tools_reach_the_model(
    props_server: tuple[int, type[Props]], props: dict[str, Any], aware: bool
) -> None:
    port, handler = props_server
    handler.body = props
    said = check(port)
    assert ("is tool-aware" in said) is aware
    assert ("does not mention tools" in said) is not aware


def test_the_template_check_fails_when_no_server_answers() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Props)
    port = server.server_address[1]
    server.server_close()
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "local_model_server.py"),
            "check",
            "--port",
            str(port),
            "--timeout",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert "no server answered" in done.stderr
