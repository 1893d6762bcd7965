"""The web client behind WebFetch and WebSearch: one WebService per session (it holds the cache).

Cheap to import and to build: httpx and BeautifulSoup load on the first fetch or search, not when
a session attaches its services."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from goat_jupyter.errors import NotAvailableError, ToolExecutionError
from goat_jupyter.settings import Settings
from goat_jupyter.web.pages import FetchRequest, FetchResult
from goat_jupyter.web.results import SearchProvider, SearchResult, filter_results
from goat_jupyter.web.summarize import ClientFactory, PageModel, small_model_settings

if TYPE_CHECKING:
    from goat_jupyter.web.fetch import WebFetcher

__all__ = ["SearchFound", "WebService"]

MAX_SEARCH_RESULTS = 10
PROVIDER_ALIASES = {"ddg": "duckduckgo", "brave_search": "brave", "brave-search": "brave"}


@dataclass(frozen=True)
class SearchFound:
    """A provider's results after the domain filters, at most MAX_SEARCH_RESULTS of them."""

    provider: str
    results: list[SearchResult]
    dropped: int  # left out by the filters or the cap


class WebService:
    """Fetches pages (with a per-session cache), builds the model that answers prompts about them,
    and searches the web."""

    def __init__(
        self,
        *,
        llm_client: ClientFactory | None = None,
        providers: Mapping[str, SearchProvider] | None = None,
        environ: Mapping[str, str] | None = None,
        fetcher: WebFetcher | None = None,
    ) -> None:
        self.llm_client = llm_client
        self.providers = providers
        self.environ = environ
        self._fetcher = fetcher

    @property
    def fetcher(self) -> WebFetcher:
        if self._fetcher is None:  # the first fetch loads httpx and BeautifulSoup
            from goat_jupyter.web.fetch import WebFetcher

            self._fetcher = WebFetcher()
        return self._fetcher

    def now(self) -> float:
        """The fetcher's clock, which dates the cached pages."""
        return self.fetcher.clock()

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """The page, from the cache when fresh; GoatErrors for bad URLs, network failures, non-2xx."""
        return await self.fetcher.fetch(request)

    def page_model(self, settings: Settings) -> PageModel:
        """The client of the settings' small model (default: the main model)."""
        if self.llm_client is None:
            raise NotAvailableError(
                "No model client is attached to this session's web service to answer `prompt`. "
                "Call WebFetch again without `prompt` to get the page itself."
            )
        return self.llm_client(small_model_settings(settings))

    def provider(self, name: str) -> SearchProvider:
        """The provider the settings name (case-insensitive, a few aliases)."""
        available = self.providers or _providers_from_env(
            os.environ if self.environ is None else self.environ
        )
        key = name.strip().lower()
        found = available.get(PROVIDER_ALIASES.get(key, key))
        if found is None:
            raise ToolExecutionError(
                f"Unknown web_search_provider {name!r}. Available providers: {', '.join(available)}. "
                "Change it with the Config tool or %goat config."
            )
        return found

    async def search(
        self, provider: SearchProvider, query: str, allowed: Sequence[str], blocked: Sequence[str]
    ) -> SearchFound:
        """`query` through `provider`, keeping only results the (normalised) domain lists let through."""
        found = await provider.search(query, allowed_domains=allowed, blocked_domains=blocked)
        results = filter_results(found, allowed, blocked)[:MAX_SEARCH_RESULTS]
        return SearchFound(provider.name, results, len(found) - len(results))


def _providers_from_env(environ: Mapping[str, str]) -> dict[str, SearchProvider]:
    from goat_jupyter.web.search import providers_from_env

    return providers_from_env(environ)
