"""Where the model runs: endpoints on this machine read long prompts slowly and must not time out."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOCAL_PROVIDERS = ("ollama/", "ollama_chat/", "lm_studio/", "llamafile/")


def is_loopback_url(url: str) -> bool:
    """True for an http(s) URL whose host is this machine (localhost, 127.0.0.0/8, ::1, 0.0.0.0)."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def is_local_endpoint(model: str, api_base: str | None) -> bool:
    """The model is served on this machine: a loopback API base, or a local provider with none set."""
    if api_base:
        return is_loopback_url(api_base)
    return model.lower().startswith(LOCAL_PROVIDERS)


def reading_allowance_s(prompt_tokens: int, tokens_per_s: float) -> float:
    """Seconds a local server may need to read a prompt before its first token (uncached, slowest)."""
    return max(prompt_tokens, 0) / tokens_per_s


def reading_status(prompt_tokens: int) -> str:
    """The live status while a local model reads its prompt."""
    return f"The model is reading a {prompt_tokens / 1000:.1f}k-token prompt…"
