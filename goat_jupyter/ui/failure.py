"""A run that failed, said as one sentence with what to check; the full error text folded below."""

from __future__ import annotations

from html import escape

from goat_jupyter.agent.provider_errors import ProviderSetupError, key_variable
from goat_jupyter.ui import style
from goat_jupyter.ui.safe.markdown import no_math
from goat_jupyter.ui.text import first_line


def explain_exception(exc: BaseException, model: str) -> tuple[str, str]:
    """(the one sentence, the full error text to fold below it)."""
    if isinstance(exc, ProviderSetupError):
        cause = exc.__cause__
        return str(exc), f"{type(cause).__name__}: {cause}" if cause is not None else ""
    error_text = f"{type(exc).__name__}: {exc}"
    return explain(error_text, model), error_text


def explain(error_text: str, model: str) -> str:
    """One sentence: what went wrong and what to check."""
    text = error_text.lower()
    config = f"`%goat config model=...` (now {model})"
    if "authentication" in text or "api key" in text or "401" in text:
        return f"The provider rejected the API key for {model}: check {key_variable(model)}, or pick another model with {config}."
    if "notfound" in text or "not found" in text or "does not exist" in text or "404" in text:
        return f"The provider does not know the model {model}: check its name with {config}."
    if "ratelimit" in text or "rate limit" in text or "429" in text or "quota" in text:
        return f"The provider is rate limiting {model} or the quota is used up: wait a minute, or check the account's quota."
    if "connection" in text or "timeout" in text or "timed out" in text or "api_base" in text:
        return "The model endpoint could not be reached: check the network and the endpoint variable (for example OPENAI_API_BASE)."
    if "context" in text and ("length" in text or "window" in text or "too long" in text):
        return "The conversation is too long for the model: start a new one with `%%goat --new`, or use a model with a larger context."
    return f"The run stopped on an error: {first_line(error_text, 160)}"


def failure_bundle(sentence: str, error_text: str) -> dict[str, str]:
    """The sentence, with the full error folded below it when there is more to read."""
    folded = (
        f'<details><summary style="{style.SUMMARY}">full error</summary>'
        f'<pre style="{style.PRE}">{escape(error_text)}</pre></details>'
        if error_text
        else ""
    )
    html = (
        f'<div style="{style.RECORD.format(color=style.RED)};font-size:inherit">'
        f'<span style="color:{style.RED}">✗</span> {escape(sentence)}{folded}</div>'
    )
    plain = f"✗ {sentence}\n{error_text}" if error_text else f"✗ {sentence}"
    return no_math({"text/html": html, "text/plain": plain})
