"""WebFetch: fetch a URL, convert HTML to Markdown, optionally answer a prompt about it."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from goat_jupyter.errors import LLMError, ToolExecutionError
from goat_jupyter.text import cut_middle
from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required
from goat_jupyter.tools.files import ShownImage, prepare_image
from goat_jupyter.web import WebService
from goat_jupyter.web.pages import DEFAULT_TIMEOUT_S, CrossHostRedirect, FetchedPage, FetchRequest, human_size
from goat_jupyter.web.summarize import answer_from_page

PROMPT_PAGE_CHARS = 100_000  # what the small model reads of a page


class WebFetchInput(ToolInput):
    url: str = Field(description="Fully formed URL (http is upgraded to https).")
    prompt: str | None = Field(
        default=None, description="What to extract from the page (answered by a small model)."
    )
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = Field(default="GET")
    headers: dict[str, str] | None = Field(default=None, description="Extra request headers.")
    body: str | None = Field(default=None, description="Request body for POST/PUT/PATCH.")
    timeout: float | None = Field(default=None, gt=0, le=120, description="Timeout in seconds (default 30).")


class WebFetchTool(Tool[WebFetchInput]):
    name = "WebFetch"
    deferred = True
    search_hint = "fetch a URL"
    input_model = WebFetchInput
    side_effect = "network"

    def title_for(self, args: WebFetchInput) -> str:
        return f"Fetch {args.url}" if args.method == "GET" else f"{args.method} {args.url}"

    async def run(self, args: WebFetchInput, ctx: ToolContext) -> ToolOutput | str:
        web = required(ctx.services.web, "web", self.name)
        request = FetchRequest(
            args.url, args.method, args.headers, args.body, args.timeout or DEFAULT_TIMEOUT_S
        )
        result = await web.fetch(request)
        if isinstance(result, CrossHostRedirect):
            return ToolOutput(redirect_notice(result, args.prompt), metadata=_redirect_metadata(result))
        metadata = page_metadata(result)
        if result.image is not None and (shown := await asyncio.to_thread(decoded_image, result.image)):
            return image_output(result, shown, args.prompt, web.now(), metadata)
        if not args.prompt or result.binary or not result.text.strip():
            return ToolOutput(render_page(result, web.now()), metadata=metadata)
        return await answer_prompt(web, result, args.prompt, ctx, metadata)


async def answer_prompt(
    web: WebService, page: FetchedPage, prompt: str, ctx: ToolContext, metadata: dict[str, Any]
) -> ToolOutput:
    """The small model's answer to `prompt` about the page, in place of the page."""
    client = web.page_model(ctx.session.settings)
    ctx.progress(output=f"Asking {client.model} about {page.url}")
    content = cut_middle(page_content(page), PROMPT_PAGE_CHARS)
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
