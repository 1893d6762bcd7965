"""WebSearch against local fake provider endpoints (real HTTP on 127.0.0.1) serving realistic pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goat_jupyter.settings import Settings
from goat_jupyter.tools import ToolCall, ToolOutput, default_registry
from goat_jupyter.tools.context import Services
from goat_jupyter.tools.runner import Executor
from goat_jupyter.web import WebService
from goat_jupyter.web.results import domain_matches, normalise_domain
from goat_jupyter.web.search import BraveProvider, DuckDuckGoProvider, query_with_sites
from tests.web_fixtures.server import LocalSite, Reply, closed_port_url, fixture_bytes

DDG_PAGE = fixture_bytes("duckduckgo_results.html")
BRAVE_JSON = fixture_bytes("brave_results.json")
DDG_PATH, BRAVE_PATH = "/html/", "/res/v1/web/search"


async def search(
    service: WebService, tmp_path: Path, provider: str = "duckduckgo", **args: Any
) -> ToolOutput:
    registry = default_registry(cwd=tmp_path)
    registry.session.settings = Settings(web_search_provider=provider)
    executor = Executor(registry, registry.session, services=Services(web=service))
    return await executor.run_one(ToolCall("search_1", "WebSearch", args))


def ddg_site() -> LocalSite:
    return LocalSite({DDG_PATH: Reply(body=DDG_PAGE)})


def env_for(site: LocalSite, **extra: str) -> dict[str, str]:
    return {
        "GOAT_DUCKDUCKGO_URL": site.url(DDG_PATH),
        "GOAT_BRAVE_SEARCH_URL": site.url(BRAVE_PATH),
        **extra,
    }


# --- DuckDuckGo (keyless default) -------------------------------------------------------------


async def test_duckduckgo_results_are_a_numbered_list(tmp_path: Path) -> None:
    with ddg_site() as site:
        out = await search(WebService(environ=env_for(site)), tmp_path, query="python bisect insort")
        request = site.requests[0]
    assert not out.is_error
    assert request.method == "POST" and request.form()["q"] == ["python bisect insort"]
    lines = out.content.splitlines()
    assert lines[0] == "Web search results for 'python bisect insort' (duckduckgo):"
    assert lines[2:5] == [
        "1. bisect — Array bisection algorithm — Python 3.13.1 documentation",
        "   https://docs.python.org/3/library/bisect.html",
        "   This module provides support for maintaining a list in sorted order without having to sort "
        "the list after each insertion. bisect.insort_left(a, x, lo=0, hi=len(a), *, key=None) & more.",
    ]
    assert "2. Insert an item into sorted list in Python - Stack Overflow" in out.content
    assert "5. TimeComplexity - Python Wiki" in out.content and "6." not in out.content
    assert "Learn Python Fast" not in out.content and "y.js" not in out.content  # the ad is skipped
    assert "uddg=" not in out.content
    assert out.metadata["provider"] == "duckduckgo" and len(out.metadata["urls"]) == 5


async def test_allowed_domains_keep_only_those_sites_and_reach_the_provider(tmp_path: Path) -> None:
    with ddg_site() as site:
        service = WebService(environ=env_for(site))
        out = await search(service, tmp_path, query="bisect", allowed_domains=["python.org"])
        query = site.requests[0].form()["q"][0]
    assert query == "bisect site:python.org"
    assert out.metadata["urls"] == [
        "https://docs.python.org/3/library/bisect.html",
        "https://wiki.python.org/moin/TimeComplexity",
    ]
    assert "only from python.org" in out.content and "stackoverflow" not in out.content


async def test_blocked_domains_drop_those_sites(tmp_path: Path) -> None:
    blocked = ["stackoverflow.com", "https://www.GeeksforGeeks.org/"]
    with ddg_site() as site:
        out = await search(
            WebService(environ=env_for(site)), tmp_path, query="bisect", blocked_domains=blocked
        )
        query = site.requests[0].form()["q"][0]
    assert query == "bisect -site:stackoverflow.com -site:www.geeksforgeeks.org"
    assert "stackoverflow.com" not in "".join(out.metadata["urls"])
    assert "geeksforgeeks" not in "".join(out.metadata["urls"])
    assert len(out.metadata["urls"]) == 3 and out.metadata["dropped"] == 2


async def test_both_domain_lists_is_an_input_error(tmp_path: Path) -> None:
    with ddg_site() as site:
        out = await search(
            WebService(environ=env_for(site)),
            tmp_path,
            query="bisect",
            allowed_domains=["python.org"],
            blocked_domains=["stackoverflow.com"],
        )
        assert site.requests == []
    assert out.is_error and out.error_code == "INVALID_INPUT"
    assert "allowed_domains or blocked_domains" in out.content


async def test_too_short_query_is_an_input_error(tmp_path: Path) -> None:
    out = await search(WebService(), tmp_path, query="a")
    assert out.is_error and out.error_code == "INVALID_INPUT" and "query" in out.content


async def test_no_results_page(tmp_path: Path) -> None:
    empty = b'<html><body><div id="links" class="results"><div class="no-results">No results.</div></div></body></html>'
    with LocalSite({DDG_PATH: Reply(body=empty)}) as site:
        out = await search(WebService(environ=env_for(site)), tmp_path, query="zzqqxx nothing")
    assert not out.is_error and out.content.startswith("No results found for 'zzqqxx nothing'")


async def test_bot_check_page_is_a_clear_error(tmp_path: Path) -> None:
    anomaly = b'<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></body></html>'
    with LocalSite({DDG_PATH: Reply(202, anomaly)}) as site:
        out = await search(WebService(environ=env_for(site)), tmp_path, query="python bisect")
    assert out.is_error and "bot check" in out.content and "brave" in out.content


async def test_unreachable_provider_is_a_clear_non_fatal_error(tmp_path: Path) -> None:
    dead = closed_port_url(DDG_PATH)
    with ddg_site() as site:
        service = WebService(providers={"duckduckgo": DuckDuckGoProvider(dead)})
        out = await search(service, tmp_path, query="python bisect")
        # The session goes on: the next search, with a working provider, succeeds.
        service.providers = {"duckduckgo": DuckDuckGoProvider(site.url(DDG_PATH))}
        again = await search(service, tmp_path, query="python bisect")
    assert out.is_error and out.error_code == "EXECUTION_ERROR"
    assert "duckduckgo" in out.content and "could not be reached" in out.content and dead in out.content
    assert not again.is_error and "1. bisect" in again.content


async def test_provider_error_status_is_reported(tmp_path: Path) -> None:
    with LocalSite({DDG_PATH: Reply(503, b"down for maintenance")}) as site:
        out = await search(WebService(environ=env_for(site)), tmp_path, query="python bisect")
    assert out.is_error and "HTTP 503" in out.content


# --- Brave (API key) --------------------------------------------------------------------------


async def test_brave_sends_the_key_and_parses_json(tmp_path: Path) -> None:
    with LocalSite({BRAVE_PATH: Reply(body=BRAVE_JSON, content_type="application/json")}) as site:
        service = WebService(environ=env_for(site, BRAVE_API_KEY="brv-123"))
        out = await search(service, tmp_path, provider="Brave", query="python bisect insort")
        request = site.requests[0]
    assert request.method == "GET" and request.path == BRAVE_PATH
    assert request.headers["X-Subscription-Token"] == "brv-123"
    assert request.query["q"] == ["python bisect insort"] and request.query["count"] == ["20"]
    assert not out.is_error and out.metadata["provider"] == "brave"
    assert "1. bisect — Array bisection algorithm — Python 3.13.1 documentation" in out.content
    assert "bisect.insort(a, x, lo=0, hi=len(a), *, key=None) inserts x" in out.content
    assert "<strong>" not in out.content and "&quot;" not in out.content
    assert '"""Bisection algorithms."""' in out.content


async def test_brave_passes_and_applies_domain_filters(tmp_path: Path) -> None:
    with LocalSite({BRAVE_PATH: Reply(body=BRAVE_JSON, content_type="application/json")}) as site:
        service = WebService(environ=env_for(site, BRAVE_SEARCH_API_KEY="brv-9"))
        out = await search(
            service, tmp_path, provider="brave", query="bisect", allowed_domains=["github.com", "python.org"]
        )
        query = site.requests[0].query["q"][0]
    assert query == "bisect (site:github.com OR site:python.org)"
    assert out.metadata["urls"] == [
        "https://docs.python.org/3/library/bisect.html",
        "https://github.com/python/cpython/blob/main/Lib/bisect.py",
    ]


async def test_brave_without_a_key_says_which_variable_to_set(tmp_path: Path) -> None:
    with LocalSite({BRAVE_PATH: Reply(body=BRAVE_JSON)}) as site:
        out = await search(WebService(environ=env_for(site)), tmp_path, provider="brave", query="bisect")
        assert site.requests == []
    assert out.is_error and "BRAVE_API_KEY" in out.content and "duckduckgo" in out.content


async def test_brave_rejecting_the_key(tmp_path: Path) -> None:
    unauthorized = Reply(401, b'{"type": "ErrorResponse"}', content_type="application/json")
    with LocalSite({BRAVE_PATH: unauthorized}) as site:
        service = WebService(environ=env_for(site, BRAVE_API_KEY="wrong"))
        out = await search(service, tmp_path, provider="brave", query="bisect")
    assert out.is_error and "rejected the API key" in out.content and "401" in out.content


async def test_brave_unreachable_is_a_clear_error(tmp_path: Path) -> None:
    service = WebService(providers={"brave": BraveProvider("key", closed_port_url(BRAVE_PATH))})
    out = await search(service, tmp_path, provider="brave", query="bisect")
    assert out.is_error and "brave" in out.content and "could not be reached" in out.content


async def test_unknown_provider_lists_the_available_ones(tmp_path: Path) -> None:
    out = await search(WebService(environ={}), tmp_path, provider="altavista", query="bisect")
    assert out.is_error and "altavista" in out.content
    assert "duckduckgo" in out.content and "brave" in out.content


# --- helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "domain"),
    [
        ("Python.org", "python.org"),
        ("https://docs.python.org/3/", "docs.python.org"),
        ("*.example.com", "example.com"),
        ("example.com.", "example.com"),
    ],
)
def test_domains_are_normalised(raw: str, domain: str) -> None:
    assert normalise_domain(raw) == domain


def test_domain_matching_covers_subdomains_only() -> None:
    assert domain_matches("https://docs.python.org/3/", "python.org")
    assert domain_matches("https://python.org/", "python.org")
    assert not domain_matches("https://notpython.org/", "python.org")
    assert not domain_matches("https://python.org.evil.com/", "python.org")


def test_site_operators() -> None:
    assert query_with_sites("q", [], []) == "q"
    assert query_with_sites("q", ["a.com"], []) == "q site:a.com"
    assert query_with_sites("q", [], ["a.com", "b.org"]) == "q -site:a.com -site:b.org"
