"""WebFetch's `prompt`: the session's small model answers it from the fetched page alone.

The model client is whatever the host passes that fits PageModel (agent/llm.py's LLMClient does);
this package sits below the agent and never imports it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from goat_jupyter.settings import Settings


class TokenUsage(Protocol):
    """What a model call cost (agent/turns.py's Usage)."""

    @property
    def prompt_tokens(self) -> int: ...

    @property
    def completion_tokens(self) -> int: ...

    @property
    def cost_usd(self) -> float | None: ...


class ModelReply(Protocol):
    """One answer of the model (agent/turns.py's AssistantTurn)."""

    @property
    def text(self) -> str: ...

    @property
    def usage(self) -> TokenUsage: ...


class PageModel(Protocol):
    """The model client that answers a prompt about a page (agent/llm.py's LLMClient)."""

    @property
    def model(self) -> str: ...

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_retry: Callable[[str], None],
    ) -> ModelReply: ...


ClientFactory = Callable[[Settings], PageModel]
"""Builds a model client for given settings (the host's own factory, so endpoints match)."""

SYSTEM_PROMPT = """\
You read one web page for another AI agent and answer its request about that page.
- Use only the page content given below. Do not add facts from memory; if the page does not \
contain the answer, say so plainly.
- Be concise: give the answer itself, with the specific names, numbers, code or links that \
support it. No preamble, no closing remarks.
- Quote sparingly: keep each quotation short (well under a paragraph) and put it in quotation \
marks; paraphrase the rest. Code snippets the request asks for may be copied as code blocks.
- Mention when the page looks cut off, empty, or like an error or login page."""


@dataclass
class PageAnswer:
    text: str
    model: str
    usage: TokenUsage


def small_model_settings(settings: Settings) -> Settings:
    """The session's settings with the small model (default: the main model) as `model`."""
    return settings.model_copy(update={"model": settings.small_model or settings.model})


def page_messages(url: str, content: str, prompt: str) -> list[dict[str, str]]:
    user = f"Page URL: {url}\n\n<page>\n{content}\n</page>\n\nRequest about this page:\n{prompt}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


async def answer_from_page(
    client: PageModel,
    *,
    url: str,
    content: str,
    prompt: str,
    on_retry: Callable[[str], None] = lambda _notice: None,
) -> PageAnswer:
    """Ask the small model `prompt` about `content`; LLMError propagates after its retries."""
    turn = await client.complete(
        page_messages(url, content, prompt), None, on_text=lambda _delta: None, on_retry=on_retry
    )
    text = turn.text.strip() or "(The model returned an empty answer about this page.)"
    return PageAnswer(text, client.model, turn.usage)
