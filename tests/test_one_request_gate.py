"""One gate for every model request (issue 32): nothing in the package reaches litellm's completion
API (or a provider SDK) except `LLMClient._stream_once`, which only `_attempt` calls, with a
reservation from the meter that it settles however the request ends. Reads the source with `ast`;
a new request path that goes around the budgets fails here. The guard is itself tried against
the spellings a way around it would use."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "goat_jupyter"
GATE = "agent/llm.py"
# litellm's entry points that send a model request (sync and async), and its router.
SENDERS = frozenset(
    {
        "completion",
        "acompletion",
        "text_completion",
        "atext_completion",
        "batch_completion",
        "batch_completion_models",
        "responses",
        "aresponses",
        "Router",
        "completion_with_retries",
        "acompletion_with_retries",
    }
)
PROVIDER_SDKS = ("openai", "anthropic", "litellm.llms", "google.generativeai", "mistralai", "cohere")
# Requests that spend nothing, so no budget applies; each says why.
EXEMPT = {
    # The warm-up streams one request to a throwaway ReplayServer on 127.0.0.1 (no provider, no key).
    ("agent/litellm_loader.py", "stream_one"),
    # The recording proxy forwards requests goat already sent through its own gate (the client that
    # talks to it is a metered LLMClient); it is a developer tool, never imported by the agent.
    ("replay/recorder.py", "_complete"),
}


def findings(source: str) -> Iterator[tuple[str, int, str]]:
    """(enclosing function, line, what) for each way the source could send a model request."""
    tree = ast.parse(source)
    for function, node in _walk_with_function(tree, ""):
        if isinstance(node, ast.Attribute) and node.attr in SENDERS:
            yield function, node.lineno, f".{node.attr}"
        elif isinstance(node, ast.ImportFrom) and node.module == "litellm":
            for alias in node.names:
                if alias.name in SENDERS or alias.name == "*":
                    yield function, node.lineno, f"from litellm import {alias.name}"
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield from _sdk_import(function, node)
        elif isinstance(node, ast.Call):
            for argument in node.args:
                if isinstance(argument, ast.Constant) and argument.value in SENDERS:
                    yield function, node.lineno, f"the name {argument.value!r} passed to a call (getattr)"


def _sdk_import(function: str, node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, int, str]]:
    names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    for name in names:
        if any(name == sdk or name.startswith(sdk + ".") for sdk in PROVIDER_SDKS):
            yield function, node.lineno, f"import {name}"


def _walk_with_function(node: ast.AST, function: str) -> Iterator[tuple[str, ast.AST]]:
    for child in ast.iter_child_nodes(node):
        inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
        yield inner, child
        yield from _walk_with_function(child, inner)


def package_findings() -> list[tuple[str, str, int, str]]:
    found: list[tuple[str, str, int, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for function, line, what in findings(path.read_text(encoding="utf-8")):
            if (relative, function) not in EXEMPT:
                found.append((relative, function, line, what))
    return found


def test_only_the_gate_sends_model_requests() -> None:
    outside = [f for f in package_findings() if f[0] != GATE]
    assert not outside, f"model requests outside {GATE} bypass the budgets: {outside}"
    in_gate = [f for f in package_findings() if f[0] == GATE]
    assert [(function, what) for _file, function, _line, what in in_gate] == [
        ("_stream_once", ".acompletion")
    ]


def test_the_sending_function_is_reached_only_through_a_settled_reservation() -> None:
    tree = ast.parse((PACKAGE / GATE).read_text(encoding="utf-8"))
    callers = {
        function
        for function, node in _walk_with_function(tree, "")
        if isinstance(node, ast.Attribute) and node.attr == "_stream_once" and isinstance(node.ctx, ast.Load)
    }
    assert callers == {"_attempt"}
    attempt = next(n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name == "_attempt")
    settles = [
        node
        for node in ast.walk(attempt)
        if isinstance(node, ast.Try)
        and any("settle" in ast.unparse(statement) for statement in node.finalbody)
        and any("_stream_once" in ast.unparse(statement) for statement in node.body)
    ]
    assert settles, "the reservation is settled in a finally around the request (error, cancel, retry)"
    complete = next(n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name == "complete")
    meter = [a for a in complete.args.kwonlyargs if a.arg == "meter"]
    default = complete.args.kw_defaults[complete.args.kwonlyargs.index(meter[0])] if meter else None
    assert meter and default is None, "complete() requires a meter: no request without one"


@pytest.mark.parametrize(
    "source",
    [
        "import litellm\nasync def f():\n    await litellm.acompletion(model='m', messages=[])",
        "import litellm\ndef f():\n    litellm.completion(model='m', messages=[])",
        "from litellm import acompletion",
        "from litellm import completion as c",
        "from litellm import *",
        "import litellm\ndef f():\n    return getattr(litellm, 'acompletion')",
        "import operator, litellm\ndef f():\n    return operator.attrgetter('completion')(litellm)",
        "import litellm\ndef f():\n    return litellm.Router(model_list=[])",
        "import litellm\nasync def f():\n    await litellm.aresponses(model='m', input='x')",
        "import openai",
        "from openai import AsyncOpenAI",
        "import anthropic.types",
        "from litellm.llms.openai import openai",
        "import importlib\ndef f():\n    return importlib.import_module('litellm').text_completion",
    ],
)
def test_the_guard_sees_each_spelling_of_a_request(source: str) -> None:
    assert list(findings(source)), source


def test_the_guard_lets_ordinary_code_through() -> None:
    source = (
        "import litellm\nMODES = ('chat', 'responses')\n"
        "def f(model):\n    return litellm.get_model_info(model), litellm.cost_per_token"
    )
    assert not list(findings(source))
