"""What a web search finds, the provider contract, and the domain filters (no HTTP here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    """Anything that turns a query into results; domain lists are hints the provider may use."""

    name: str

    async def search(
        self, query: str, *, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> list[SearchResult]: ...


def normalise_domain(domain: str) -> str:
    """`https://Docs.Python.org/3/` -> `docs.python.org`."""
    text = domain.strip().lower()
    host = urlsplit(text if "://" in text else "//" + text).hostname or text
    return host.rstrip(".").removeprefix("*.")


def domain_matches(url: str, domain: str) -> bool:
    """The URL's host is `domain` or one of its subdomains."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    return host == domain or host.endswith("." + domain)


def filter_results(
    results: Sequence[SearchResult], allowed: Sequence[str], blocked: Sequence[str]
) -> list[SearchResult]:
    return [
        r
        for r in results
        if (not allowed or any(domain_matches(r.url, d) for d in allowed))
        and not any(domain_matches(r.url, d) for d in blocked)
    ]
