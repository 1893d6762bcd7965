"""Web search providers behind one protocol: keyless DuckDuckGo (HTML) and the Brave Search API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from bs4 import BeautifulSoup, Tag

from goat_jupyter.errors import ToolExecutionError
from goat_jupyter.web.fetch import shared_ssl_context
from goat_jupyter.web.results import (
    SearchProvider,
    SearchResult,
)

DUCKDUCKGO_URL = "https://html.duckduckgo.com/html/"
BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
BRAVE_KEY_VARS = ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY")
SEARCH_TIMEOUT_S = 20.0
USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) goat-jupyter WebSearch"


class SearchUnavailableError(ToolExecutionError):
    """The provider could not be reached or refused the request; the session goes on."""


def query_with_sites(query: str, allowed: Sequence[str], blocked: Sequence[str]) -> str:
    """Add `site:` operators, which both DuckDuckGo and Brave understand."""
    parts = [query]
    if len(allowed) == 1:
        parts.append(f"site:{allowed[0]}")
    elif allowed:
        parts.append("(" + " OR ".join(f"site:{d}" for d in allowed) + ")")
    parts.extend(f"-site:{d}" for d in blocked)
    return " ".join(parts)


def plain_text(fragment: str) -> str:
    """Text of an HTML fragment (snippets carry <b>/<strong> highlights and entities)."""
    return " ".join(BeautifulSoup(fragment, "html.parser").get_text().split())


class DuckDuckGoProvider:
    """DuckDuckGo's no-JavaScript HTML results page; needs no API key."""

    name = "duckduckgo"

    def __init__(self, base_url: str = DUCKDUCKGO_URL, timeout_s: float = SEARCH_TIMEOUT_S) -> None:
        self.base_url = base_url
        self.timeout_s = timeout_s

    async def search(
        self, query: str, *, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> list[SearchResult]:
        form = {"q": query_with_sites(query, allowed_domains, blocked_domains), "b": "", "kl": ""}
        response = await _request(self.name, "POST", self.base_url, self.timeout_s, data=form)
        _raise_for_status(self.name, response)
        if response.status_code == 202 or "anomaly-modal" in response.text:
            raise SearchUnavailableError(
                "DuckDuckGo asked for a bot check instead of answering (rate limited). Try again in a "
                "while, or set web_search_provider to brave with BRAVE_API_KEY in the environment."
            )
        return parse_duckduckgo(response.text, str(response.url))


def parse_duckduckgo(html: str, page_url: str = DUCKDUCKGO_URL) -> list[SearchResult]:
    """Organic results of a DuckDuckGo HTML page; ads are skipped, redirect links unwrapped."""
    soup = BeautifulSoup(html, "html.parser")
    results: list[SearchResult] = []
    for card in soup.select("div.result"):
        classes = card.get_attribute_list("class")
        link = card.select_one("a.result__a")
        if "result--ad" in classes or link is None:
            continue
        url = _unwrap_duckduckgo(urljoin(page_url, str(link.get("href") or "")))
        snippet = card.select_one(".result__snippet")
        if url and "duckduckgo.com/y.js" not in url:
            text = snippet.get_text() if isinstance(snippet, Tag) else ""
            results.append(SearchResult(" ".join(link.get_text().split()), url, " ".join(text.split())))
    return results


def _unwrap_duckduckgo(href: str) -> str:
    """`https://duckduckgo.com/l/?uddg=<target>&rut=...` -> `<target>`."""
    parts = urlsplit(href)
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return href


class BraveProvider:
    """The Brave Search API (needs an API key: BRAVE_API_KEY)."""

    name = "brave"

    def __init__(self, api_key: str | None, base_url: str = BRAVE_URL, timeout_s: float = SEARCH_TIMEOUT_S):
        self.api_key = api_key
        self.base_url = base_url
        self.timeout_s = timeout_s

    async def search(
        self, query: str, *, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> list[SearchResult]:
        if not self.api_key:
            raise SearchUnavailableError(
                "The brave search provider needs an API key: set BRAVE_API_KEY in the environment, "
                "or set web_search_provider to duckduckgo (no key needed)."
            )
        params = {"q": query_with_sites(query, allowed_domains, blocked_domains), "count": "20"}
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key}
        response = await _request(
            self.name, "GET", self.base_url, self.timeout_s, params=params, headers=headers
        )
        if response.status_code in (401, 403):
            raise SearchUnavailableError(
                f"Brave Search rejected the API key (HTTP {response.status_code}). Check BRAVE_API_KEY."
            )
        _raise_for_status(self.name, response)
        try:
            payload: object = response.json()
        except ValueError:
            raise SearchUnavailableError("Brave Search answered with something that is not JSON.") from None
        return parse_brave(payload)


def parse_brave(payload: object) -> list[SearchResult]:
    """Results from the API's `web.results` list (descriptions carry <strong> highlights)."""
    web = _as_dict(_as_dict(payload).get("web"))
    items = web.get("results")
    results: list[SearchResult] = []
    for raw in cast("list[object]", items) if isinstance(items, list) else []:
        item = _as_dict(raw)
        url = item.get("url")
        if isinstance(url, str) and url:
            title = plain_text(str(item.get("title") or url))
            results.append(SearchResult(title, url, plain_text(str(item.get("description") or ""))))
    return results


def _as_dict(value: object) -> dict[str, Any]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


async def _request(provider: str, method: str, url: str, timeout_s: float, **kwargs: Any) -> httpx.Response:
    """One request to a provider; network failures become a clear, non-fatal error."""
    try:
        tls = await shared_ssl_context()
        async with httpx.AsyncClient(
            timeout=timeout_s, headers={"User-Agent": USER_AGENT}, verify=tls
        ) as client:
            return await client.request(method, url, **kwargs)
    except httpx.TimeoutException:
        raise SearchUnavailableError(
            f"The {provider} search provider at {url} did not answer within {timeout_s:g} s. "
            "Try again later; other tools still work."
        ) from None
    except httpx.HTTPError as exc:
        raise SearchUnavailableError(
            f"The {provider} search provider at {url} could not be reached ({type(exc).__name__}: {exc}). "
            "Try again later, or choose another provider with the web_search_provider setting."
        ) from None


def _raise_for_status(provider: str, response: httpx.Response) -> None:
    if response.status_code == 429:
        raise SearchUnavailableError(
            f"The {provider} search provider is rate limiting (HTTP 429). Try later."
        )
    if not response.is_success:
        raise SearchUnavailableError(
            f"The {provider} search provider answered HTTP {response.status_code} {response.reason_phrase}."
        )


def providers_from_env(environ: Mapping[str, str]) -> dict[str, SearchProvider]:
    """The built-in providers, configured from the environment (base URLs overridable for tests)."""
    brave_key = next((environ[v] for v in BRAVE_KEY_VARS if environ.get(v)), None)
    return {
        "duckduckgo": DuckDuckGoProvider(environ.get("GOAT_DUCKDUCKGO_URL") or DUCKDUCKGO_URL),
        "brave": BraveProvider(brave_key, environ.get("GOAT_BRAVE_SEARCH_URL") or BRAVE_URL),
    }
