"""WebFetch over real HTTP on 127.0.0.1: conversion, caps, cache, redirects, errors and `prompt`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.agent.llm import LLMClient, Meter, MeteredClient, RetryPolicy
from goat_jupyter.agent.loop import Agent
from goat_jupyter.agent.session import Session
from goat_jupyter.agent.spend import RunSpend
from goat_jupyter.replay import ReplayServer
from goat_jupyter.settings import Settings
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor
from goat_jupyter.web import WebService
from goat_jupyter.web.fetch import MAX_BYTES, MAX_CHARS, WebFetcher, is_loopback, same_host, upgrade_url
from tests.agent_helpers import text_turn, tool_turn
from tests.web_fixtures.server import LocalSite, Reply, closed_port_url, fixture_bytes

BISECT_PAGE = fixture_bytes("python_bisect.html")
FNMATCH_PAGE = fixture_bytes("python_fnmatch.html")


async def fetch(
    service: WebService, tmp_path: Path, settings: Settings | None = None, **args: Any
) -> ToolOutput:
    registry = default_registry(cwd=tmp_path)
    if settings is not None:
        registry.session.settings = settings
    executor = Executor(registry, registry.session, services=Services(web=service))
    return await executor.run_one(ToolCall("fetch_1", "WebFetch", args))


def replay_client(base_url: str) -> Callable[[Settings], LLMClient]:
    def build(settings: Settings) -> LLMClient:
        extra = {"api_base": base_url, "api_key": "test-key"}
        return LLMClient(settings.model, retry=RetryPolicy(max_retries=0), extra=extra)

    return build


def page_client(base_url: str) -> Callable[[Settings], MeteredClient]:
    """The page model as a host builds it: charged to a run's spend (here one without limits)."""
    return lambda settings: replay_client(base_url)(settings).metered(Meter(RunSpend()))


# --- URLs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://example.com/a?b=1", "https://example.com/a?b=1"),
        ("https://example.com", "https://example.com/"),
        ("example.com/docs", "https://example.com/docs"),
        ("HTTP://Example.com/x", "https://Example.com/x"),
        ("http://127.0.0.1:8000/page", "http://127.0.0.1:8000/page"),
        ("http://localhost:8888/tree", "http://localhost:8888/tree"),
        ("http://[::1]:9000/", "http://[::1]:9000/"),
        ("http://127.4.5.6/", "http://127.4.5.6/"),
        ("http://app.localhost/", "http://app.localhost/"),
        ("http://10.0.0.1/", "https://10.0.0.1/"),
    ],
)
def test_http_is_upgraded_except_on_loopback(given: str, expected: str) -> None:
    assert upgrade_url(given) == expected


def test_loopback_and_same_host_rules() -> None:
    assert is_loopback("localhost") and is_loopback("127.0.0.1") and is_loopback("[::1]")
    assert not is_loopback("localhost.example.com") and not is_loopback("192.168.1.1")
    assert same_host("https://www.python.org/a", "https://python.org/b")
    assert same_host("http://127.0.0.1:1/a", "http://127.0.0.1:2/b")
    assert not same_host("http://127.0.0.1:1/a", "http://localhost:1/a")


async def test_unsupported_scheme_is_an_input_error(tmp_path: Path) -> None:
    out = await fetch(WebService(), tmp_path, url="ftp://example.com/file.txt")
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert "ftp" in out.content and "http" in out.content


# --- conversion -------------------------------------------------------------------------------


async def test_python_docs_page_becomes_markdown(tmp_path: Path) -> None:
    with LocalSite({"/3/library/bisect.html": Reply(body=BISECT_PAGE)}) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/3/library/bisect.html"))
    text = Path(out.metadata["full_output"]).read_text()  # the page is long: the model Reads it there
    assert not out.is_error and out.content.startswith(text[:2_000])
    assert text.startswith(f"URL: {site.url('/3/library/bisect.html')}\nHTTP 200 OK · text/html")
    assert "Title: bisect — Array bisection algorithm — Python 3.11.2 documentation" in text
    # Headings, code blocks and links survive; links are absolute.
    assert "\n# `bisect` — Array bisection algorithm\n" in text
    assert "\n## Searching Sorted Lists\n" in text and "\n## Examples\n" in text
    assert "```python3\ndef index(a, x):\n    'Locate the leftmost value exactly equal to x'" in text
    assert (
        ">>> [grade(score) for score in [33, 99, 77, 70, 89, 90, 100]]\n['F', 'A', 'C', 'C', 'B', 'A', 'A']"
        in text
    )
    assert f"[key function]({site.url('/3/glossary.html#term-key-function')})" in text
    assert "[Lib/bisect.py](https://github.com/python/cpython/tree/3.11/Lib/bisect.py)" in text
    # Page chrome, scripts and permalink marks are gone.
    for noise in ("Previous topic", "Quick search", "Report a Bug", "jquery", "¶", "<span", "@media"):
        assert noise not in text, noise
    assert out.metadata["status"] == 200 and out.metadata["cached"] is False


async def test_text_json_and_charsets(tmp_path: Path) -> None:
    latin = "Café crème: naïve façade".encode("latin-1")
    declared = '<html><head><meta charset="windows-1252"><title>Zoë</title></head><body><p>“smart” – quotes</p></body></html>'
    routes = {
        "/latin.txt": Reply(body=latin, content_type="text/plain; charset=ISO-8859-1"),
        "/meta.html": Reply(body=declared.encode("cp1252"), content_type="text/html"),
        "/data.json": Reply(body=b'{"answer": 42}', content_type="application/json"),
    }
    service = WebService()
    with LocalSite(routes) as site:
        plain = await fetch(service, tmp_path, url=site.url("/latin.txt"))
        html = await fetch(service, tmp_path, url=site.url("/meta.html"))
        data = await fetch(service, tmp_path, url=site.url("/data.json"))
    assert plain.content.endswith("\n\nCafé crème: naïve façade")
    assert "Title: Zoë" in html.content and html.content.endswith("“smart” – quotes")
    assert data.content.endswith('\n\n{"answer": 42}') and "application/json" in data.content


async def test_binary_content_is_described_not_dumped(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
    with LocalSite({"/logo.png": Reply(body=png, content_type="image/png")}) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/logo.png"), prompt="What is in the picture?")
    assert not out.is_error
    assert "image/png" in out.content and "2.0 KB" in out.content and "Read" in out.content
    assert "PNG" not in out.content and "IHDR" not in out.content and "\x00" not in out.content


def png_bytes(width: int, height: int) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


async def test_image_response_is_an_attachment_downscaled_like_read(tmp_path: Path) -> None:
    big = png_bytes(3000, 1000)
    routes = {
        "/chart.png": Reply(body=big, content_type="image/png"),
        "/blob": Reply(body=png_bytes(40, 20), content_type="application/octet-stream"),
    }
    with LocalSite(routes) as site:
        service = WebService()
        out = await fetch(service, tmp_path, url=site.url("/chart.png"), prompt="What does it show?")
        again = await fetch(service, tmp_path, url=site.url("/chart.png"))
        sniffed = await fetch(service, tmp_path, url=site.url("/blob"))
    assert not out.is_error and len(out.attachments) == 1
    image = out.attachments[0]
    assert image.mime_type == "image/png" and "3000x1000" in out.content and "1568x523" in out.content
    assert "prompt" in out.content and out.metadata["image"] is True
    assert again.attachments and "from cache" in again.content
    assert sniffed.attachments and "40x20" in sniffed.content


# --- caps -------------------------------------------------------------------------------------


def endless_text(total: int, chunk: int = 256 * 1024) -> Iterator[bytes]:
    block = (b"0123456789abcdef" * (chunk // 16))[:chunk]
    for _ in range(total // chunk):
        yield block


async def test_reading_stops_at_10_mb(tmp_path: Path) -> None:
    total = 64 * 1024 * 1024
    stream = Reply(body=endless_text(total), content_type="text/plain")
    with LocalSite({"/huge.txt": stream}) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/huge.txt"))
    assert not out.is_error
    assert out.metadata["bytes"] == MAX_BYTES and out.metadata["capped"] is True
    assert "Stopped reading after 10.0 MB" in out.content
    assert out.metadata["truncated"] is True and len(out.content) < 9_000
    assert "Stopped reading after 10.0 MB" in Path(out.metadata["full_output"]).read_text()
    assert stream.sent < total  # the server was cut off, not drained


async def test_a_long_page_is_stored_whole_for_read_and_grep(tmp_path: Path) -> None:
    lines = [f"line {n:06d}" for n in range(25_000)]  # 11 characters + newline each: 300 000 characters
    body = "\n".join(lines).encode()
    with LocalSite({"/long.txt": Reply(body=body, content_type="text/plain")}) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/long.txt"))
    assert not out.is_error and out.metadata["truncated"] is False and out.metadata["capped"] is False
    assert "line 000000" in out.content and "line 024999" in out.content and len(out.content) < 9_000
    assert "line 012000" not in out.content
    assert Path(out.metadata["full_output"]).read_text().endswith(body.decode())
    registry = default_registry(cwd=tmp_path)
    path = out.metadata["full_output"]
    found = await registry.call("Grep", {"pattern": "line 024998", "path": path, "output_mode": "content"})
    page = await registry.call(
        "Read", {"file_path": path, "offset": 12_004, "limit": 1}
    )  # after 4 header lines
    assert "line 024998" in found.content and "line 012000" in page.content


async def test_content_is_cut_at_max_chars(tmp_path: Path) -> None:
    body = ("x" * 99 + "\n").encode() * 25_000  # 2.5 M characters
    with LocalSite({"/longer.txt": Reply(body=body, content_type="text/plain")}) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/longer.txt"))
    assert out.metadata["truncated"] is True
    stored = Path(out.metadata["full_output"]).read_text()
    assert f"[Content cut: showing the first {MAX_CHARS:,} of {len(body):,} characters" in stored


# --- cache ------------------------------------------------------------------------------------


async def test_second_get_is_served_from_the_cache(tmp_path: Path) -> None:
    with LocalSite({"/page.html": Reply(body=b"<h1>Hello</h1><p>first version</p>")}) as site:
        service = WebService()
        first = await fetch(service, tmp_path, url=site.url("/page.html"))
        second = await fetch(service, tmp_path, url=site.url("/page.html"))
        anchored = await fetch(service, tmp_path, url=site.url("/page.html#intro"))
        assert site.hits("/page.html") == 1
    assert first.metadata["cached"] is False and second.metadata["cached"] is True
    assert anchored.metadata["cached"] is True
    assert "from cache" in second.content and "first version" in second.content


async def test_cache_expires_after_15_minutes(tmp_path: Path) -> None:
    now = [1000.0]
    service = WebService(fetcher=WebFetcher(clock=lambda: now[0]))
    with LocalSite({"/page.html": Reply(body=b"<p>hi</p>")}) as site:
        await fetch(service, tmp_path, url=site.url("/page.html"))
        now[0] += 14 * 60
        await fetch(service, tmp_path, url=site.url("/page.html"))
        assert site.hits("/page.html") == 1
        now[0] += 2 * 60
        await fetch(service, tmp_path, url=site.url("/page.html"))
        assert site.hits("/page.html") == 2


async def test_post_sends_body_and_headers_and_is_never_cached(tmp_path: Path) -> None:
    echo = Reply(body=b'{"ok": true}', content_type="application/json")
    with LocalSite({"/api": echo}) as site:
        service = WebService()
        for _ in range(2):
            out = await fetch(
                service,
                tmp_path,
                url=site.url("/api"),
                method="POST",
                headers={"X-Token": "abc"},
                body='{"q": 1}',
            )
            assert not out.is_error and out.content.endswith('{"ok": true}')
        seen = site.requests
    assert [r.method for r in seen] == ["POST", "POST"]
    assert seen[0].body == b'{"q": 1}' and seen[0].headers["X-Token"] == "abc"


async def test_head_shows_the_response_headers(tmp_path: Path) -> None:
    with LocalSite(
        {"/file": Reply(body=b"x" * 500, content_type="text/plain", headers={"ETag": '"v1"'})}
    ) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/file"), method="HEAD")
    assert not out.is_error and "Response headers:" in out.content
    assert 'etag: "v1"' in out.content.lower() and "content-length: 500" in out.content.lower()


# --- redirects and errors ---------------------------------------------------------------------


async def test_same_host_redirect_is_followed(tmp_path: Path) -> None:
    routes = {
        "/old": Reply(302, headers={"Location": "/new?x=1"}),
        "/new": Reply(body=b"<h1>Moved here</h1><p>The new home.</p>"),
    }
    with LocalSite(routes) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/old"))
        paths = [r.path for r in site.requests]
    assert not out.is_error and paths == ["/old", "/new"]
    assert out.content.startswith(f"URL: {site.url('/new?x=1')}\n(redirected from {site.url('/old')})")
    assert "# Moved here" in out.content and "The new home." in out.content


async def test_redirect_to_another_host_is_reported_not_followed(tmp_path: Path) -> None:
    with LocalSite({"/away": Reply(301)}) as site:
        target = site.url("/elsewhere", host="localhost")
        site.routes["/away"] = Reply(301, headers={"Location": target})
        out = await fetch(WebService(), tmp_path, url=site.url("/away"), prompt="Summarise")
        paths = [r.path for r in site.requests]
    assert not out.is_error and paths == ["/away"]
    assert target in out.content and "different host" in out.content
    assert "call WebFetch again" in out.content and "same prompt" in out.content
    assert out.metadata["redirect_url"] == target


async def test_non_2xx_is_an_error_with_the_status(tmp_path: Path) -> None:
    routes = {"/missing": Reply(404, b"<html><body><h1>Nothing here</h1><p>Try the index.</p></body></html>")}
    with LocalSite(routes) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/missing"))
    assert out.is_error and out.error_code == "EXECUTION_ERROR"
    assert out.content.startswith(f"Error: {site.url('/missing')} answered with HTTP status 404 Not Found.")
    assert "Nothing here" in out.content


async def test_unreachable_host_and_timeout_are_clear_errors(tmp_path: Path) -> None:
    refused = await fetch(WebService(), tmp_path, url=closed_port_url("/x"))
    assert refused.is_error and "Could not connect to 127.0.0.1" in refused.content
    with LocalSite({"/slow": Reply(body=b"late", delay_s=1.5)}) as site:
        slow = await fetch(WebService(), tmp_path, url=site.url("/slow"), timeout=0.3)
    assert slow.is_error and slow.error_code == "TIMEOUT" and "0.3 s" in slow.content


# --- prompt -----------------------------------------------------------------------------------


async def test_prompt_is_answered_by_the_small_model(tmp_path: Path) -> None:
    answer = "fnmatch.translate() turns a shell pattern into a regular expression."
    settings = Settings(model="openai/main-model", small_model="openai/tiny-model")
    with (
        ReplayServer([text_turn(answer)]) as llm,
        LocalSite({"/fnmatch.html": Reply(body=FNMATCH_PAGE)}) as site,
    ):
        service = WebService(llm_client=page_client(llm.url))
        prompt = "What does translate() do?"
        out = await fetch(service, tmp_path, settings, url=site.url("/fnmatch.html"), prompt=prompt)
        request = llm.requests[0]
    assert not out.is_error and out.content == answer
    assert request["model"] == "tiny-model" and "tools" not in request
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "only the page content" in system.lower()
    assert prompt in user and site.url("/fnmatch.html") in user
    assert "# `fnmatch` — Unix filename pattern matching" in user and "fnmatch.translate(" in user
    assert out.metadata["summary_model"] == "openai/tiny-model"
    assert out.metadata["summary_usage"]["completion_tokens"] > 0


async def test_small_model_defaults_to_the_main_model(tmp_path: Path) -> None:
    with (
        ReplayServer([text_turn("It sorts.")]) as llm,
        LocalSite({"/p.html": Reply(body=b"<p>bisect keeps lists sorted</p>")}) as site,
    ):
        service = WebService(llm_client=page_client(llm.url))
        settings = Settings(model="openai/main-model")
        out = await fetch(service, tmp_path, settings, url=site.url("/p.html"), prompt="What?")
        assert llm.requests[0]["model"] == "main-model"
    assert out.content == "It sorts."


async def test_failing_small_model_gives_an_error_that_suggests_no_prompt(tmp_path: Path) -> None:
    failing = {"error": {"status": 400, "message": "context too long"}}
    with ReplayServer([failing]) as llm, LocalSite({"/p.html": Reply(body=b"<p>text</p>")}) as site:
        service = WebService(llm_client=page_client(llm.url))
        out = await fetch(
            service, tmp_path, Settings(model="openai/m"), url=site.url("/p.html"), prompt="What?"
        )
    assert out.is_error and "could not answer the prompt" in out.content and "without `prompt`" in out.content


async def test_agent_uses_webfetch_with_a_prompt_end_to_end(tmp_path: Path) -> None:
    with LocalSite({"/bisect.html": Reply(body=BISECT_PAGE)}) as site:
        url = site.url("/bisect.html")
        turns = [
            tool_turn("WebFetch", {"url": url, "prompt": "Which function inserts in order?"}),
            text_turn("insort() inserts x in a in sorted order.", match="Request about this page"),
            text_turn("Use bisect.insort.", match="insort() inserts"),
        ]
        with ReplayServer(turns) as llm:
            session = Session(workspace=tmp_path, settings=Settings(model="openai/replay"))
            registry = default_registry(session=session)
            services = Services(web=WebService(llm_client=page_client(llm.url)))
            executor = Executor(registry, session, services=services)
            agent = Agent(
                session, registry, executor, replay_client(llm.url)(session.settings), lambda _e: None
            )
            result = await agent.run("How do I insert into a sorted list? Read the bisect docs.")
            summariser_request = llm.requests[1]
    tool_messages = [m for m in session.messages if m["role"] == "tool"]
    assert result.text == "Use bisect.insort."
    assert tool_messages[0]["content"] == "insort() inserts x in a in sorted order."
    assert "Which function inserts in order?" in summariser_request["messages"][1]["content"]
    assert "insort_left" in summariser_request["messages"][1]["content"]
    assert site.hits("/bisect.html") == 1


async def test_prompt_without_a_model_client_says_to_fetch_without_prompt(tmp_path: Path) -> None:
    with LocalSite({"/p.html": Reply(body=b"<p>text</p>")}) as site:
        out = await fetch(WebService(), tmp_path, url=site.url("/p.html"), prompt="What?")
        plain = await fetch(WebService(), tmp_path, url=site.url("/p.html"))
    assert out.is_error and "No model client" in out.content and "without `prompt`" in out.content
    assert not plain.is_error and "text" in plain.content


def test_the_http_stack_loads_on_the_first_fetch_not_with_the_tools() -> None:
    code = (
        "import sys\n"
        "from goat_jupyter.tools import default_registry\n"
        "from goat_jupyter.tools.context import Services\n"
        "from goat_jupyter.web import WebService\n"
        "default_registry(); Services(web=WebService())\n"
        "print(sorted(m for m in ('httpx', 'bs4', 'markdownify') if m in sys.modules))\n"
        "WebService().fetcher\n"
        "print(sorted(m for m in ('httpx', 'bs4', 'markdownify') if m in sys.modules))\n"
    )
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert lines.splitlines() == ["[]", "['bs4', 'httpx', 'markdownify']"]
