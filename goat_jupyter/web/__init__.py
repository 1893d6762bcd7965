"""The `web` runtime behind WebFetch and WebSearch: one WebService per session (it holds the cache)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from goat_jupyter.errors import InvalidInputError, LLMError, ToolExecutionError
from goat_jupyter.tools.base import ToolContext, ToolOutput
from goat_jupyter.tools.read_formats import ShownImage, prepare_image
from goat_jupyter.web.fetch import (
    DEFAULT_TIMEOUT_S,
    CrossHostRedirect,
    FetchedPage,
    FetchRequest,
    WebFetcher,
    human_size,
    upgrade_url,
)
from goat_jupyter.web.search import (
    SearchProvider,
    SearchResult,
    filter_results,
    normalise_domain,
    providers_from_env,
)
from goat_jupyter.web.summarize import ClientFactory, answer_from_page, default_client, small_model_settings

if TYPE_CHECKING:
    from goat_jupyter.tools.web_fetch import WebFetchInput
    from goat_jupyter.tools.web_search import WebSearchInput

__all__ = ["SearchProvider", "SearchResult", "WebFetcher", "WebService", "upgrade_url"]

MAX_SEARCH_RESULTS = 10
PROVIDER_ALIASES = {"ddg": "duckduckgo", "brave_search": "brave", "brave-search": "brave"}


class WebService:
    """Fetches pages (with a per-session cache), answers prompts about them, and searches the web."""

    def __init__(
        self,
        *,
        llm_client: ClientFactory = default_client,
        providers: Mapping[str, SearchProvider] | None = None,
        environ: Mapping[str, str] | None = None,
        fetcher: WebFetcher | None = None,
    ) -> None:
        self.llm_client = llm_client
        self.providers = providers
        self.environ = environ
        self.fetcher = fetcher or WebFetcher()

    async def fetch(self, args: WebFetchInput, ctx: ToolContext) -> ToolOutput:
        request = FetchRequest(
            args.url, args.method, args.headers, args.body, args.timeout or DEFAULT_TIMEOUT_S
        )
        result = await self.fetcher.fetch(request)
        if isinstance(result, CrossHostRedirect):
            return ToolOutput(redirect_notice(result, args.prompt), metadata=_redirect_metadata(result))
        metadata = page_metadata(result)
        if result.image is not None and (shown := await asyncio.to_thread(decoded_image, result.image)):
            return image_output(result, shown, args.prompt, self.fetcher.clock(), metadata)
        if not args.prompt or result.binary or not result.text.strip():
            return ToolOutput(render_page(result, self.fetcher.clock()), metadata=metadata)
        return await self._answer(result, args.prompt, ctx, metadata)

    async def _answer(
        self, page: FetchedPage, prompt: str, ctx: ToolContext, metadata: dict[str, Any]
    ) -> ToolOutput:
        client = self.llm_client(small_model_settings(ctx.session.settings))
        ctx.progress(output=f"Asking {client.model} about {page.url}")
        content = page_content(page)
        try:
            answer = await answer_from_page(
                client,
                url=page.url,
                content=content,
                prompt=prompt,
                on_retry=lambda n: ctx.progress(output=n),
            )
        except LLMError as exc:
            raise ToolExecutionError(
                f"Fetched {page.url}, but the small model {client.model} could not answer the prompt: "
                f"{exc.message} Call WebFetch again without `prompt` to get the page itself."
            ) from None
        usage = answer.usage
        metadata["summary_model"] = answer.model
        metadata["summary_usage"] = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cost_usd": usage.cost_usd,
        }
        return ToolOutput(answer.text, metadata=metadata)

    async def search(self, args: WebSearchInput, ctx: ToolContext) -> ToolOutput:
        provider = self.provider(ctx.session.settings.web_search_provider)
        allowed = [d for d in map(normalise_domain, args.allowed_domains or []) if d]
        blocked = [d for d in map(normalise_domain, args.blocked_domains or []) if d]
        if allowed and blocked:
            raise InvalidInputError("Give allowed_domains or blocked_domains, not both, and search again.")
        found = await provider.search(args.query, allowed_domains=allowed, blocked_domains=blocked)
        results = filter_results(found, allowed, blocked)[:MAX_SEARCH_RESULTS]
        text = format_results(args.query, provider.name, results, allowed, blocked)
        metadata = {
            "provider": provider.name,
            "urls": [r.url for r in results],
            "dropped": len(found) - len(results),
        }
        return ToolOutput(text, metadata=metadata)

    def provider(self, name: str) -> SearchProvider:
        """The provider the settings name (case-insensitive, a few aliases)."""
        available = self.providers or providers_from_env(os.environ if self.environ is None else self.environ)
        key = name.strip().lower()
        found = available.get(PROVIDER_ALIASES.get(key, key))
        if found is None:
            raise ToolExecutionError(
                f"Unknown web_search_provider {name!r}. Available providers: {', '.join(available)}. "
                "Change it with the Config tool or %goat config."
            )
        return found


def decoded_image(raw: bytes) -> ShownImage | None:
    """The image downscaled like Read's, or None when it cannot be decoded (then it is described)."""
    try:
        return prepare_image(raw)
    except ToolExecutionError:
        return None


def image_output(
    page: FetchedPage, shown: ShownImage, prompt: str | None, now: float, metadata: dict[str, Any]
) -> ToolOutput:
    """An image response: header lines and a description; the image itself goes as an attachment."""
    header = page_header(page, now)
    line = f"Image from {page.url}: {shown.describe()}."
    note = (
        "\n(The image is attached for you to look at; `prompt` is not applied to images.)" if prompt else ""
    )
    metadata["image"] = True
    return ToolOutput(f"{header}\n\n{line}{note}", metadata=metadata, attachments=[shown.attachment(line)])


def page_content(page: FetchedPage) -> str:
    """The page text plus notes on anything left out (the size cap, the character cut)."""
    notes: list[str] = []
    if page.total_chars > len(page.text):
        notes.append(
            f"[Content cut: showing the first {len(page.text):,} of {page.total_chars:,} characters; "
            "the rest was left out.]"
        )
    if page.capped and not page.binary:
        notes.append(
            f"[Stopped reading after {human_size(page.bytes_read)}: the response is larger, so the end is missing.]"
        )
    return "\n\n".join([page.text, *notes]) if notes else page.text


def render_page(page: FetchedPage, now: float) -> str:
    """Header lines (URL, status, type, size, cache) and the page as Markdown or text."""
    body = page_content(page)
    if not page.text.strip():
        headers = "\n".join(f"{k}: {v}" for k, v in page.headers)
        body = f"(The response has no body.)\nResponse headers:\n{headers}"
    return page_header(page, now) + "\n\n" + body


def page_header(page: FetchedPage, now: float) -> str:
    lines = [f"URL: {page.url}"]
    if page.url != page.requested_url:
        lines.append(f"(redirected from {page.requested_url})")
    facts = [f"HTTP {page.status} {page.reason}".strip(), page.content_type, human_size(page.bytes_read)]
    if page.from_cache:
        facts.append(f"from cache, fetched {_age(now - page.fetched_at)} ago")
    lines.append(" · ".join(facts))
    if page.title:
        lines.append(f"Title: {page.title}")
    return "\n".join(lines)


def redirect_notice(redirect: CrossHostRedirect, prompt: str | None) -> str:
    again = "the same prompt" if prompt else "the same arguments"
    return (
        f"{redirect.url} redirects (HTTP {redirect.status}) to a different host: {redirect.location}\n"
        f"Redirects to another host are not followed. To fetch it, call WebFetch again with "
        f"url={redirect.location!r} and {again}."
    )


def format_results(
    query: str, provider: str, results: list[SearchResult], allowed: list[str], blocked: list[str]
) -> str:
    scope = f", only from {', '.join(allowed)}" if allowed else ""
    scope += f", excluding {', '.join(blocked)}" if blocked else ""
    if not results:
        return f"No results found for {query!r} ({provider}{scope}). Try other words or fewer filters."
    lines = [f"Web search results for {query!r} ({provider}{scope}):", ""]
    for number, result in enumerate(results, 1):
        lines.append(f"{number}. {result.title}")
        lines.append(f"   {result.url}")
        if result.snippet:
            lines.append(f"   {result.snippet}")
        lines.append("")
    lines.append("Use WebFetch on a result's URL to read the page.")
    return "\n".join(lines)


def page_metadata(page: FetchedPage) -> dict[str, Any]:
    return {
        "url": page.url,
        "status": page.status,
        "content_type": page.content_type,
        "bytes": page.bytes_read,
        "chars": page.total_chars,
        "truncated": page.total_chars > len(page.text),
        "capped": page.capped,
        "cached": page.from_cache,
    }


def _redirect_metadata(redirect: CrossHostRedirect) -> dict[str, Any]:
    return {"url": redirect.url, "status": redirect.status, "redirect_url": redirect.location}


def _age(seconds: float) -> str:
    return f"{int(seconds)} s" if seconds < 90 else f"{round(seconds / 60)} min"
