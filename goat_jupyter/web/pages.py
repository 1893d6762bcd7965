"""What the web client fetches: a request, and its answer as a page or a cross-host redirect.

Plain data only (no httpx), so callers can name these types without loading the HTTP stack."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class FetchRequest:
    url: str
    method: str = "GET"
    headers: Mapping[str, str] | None = None
    body: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class FetchedPage:
    """A successful response as text: Markdown for HTML, the text itself, or a binary description."""

    requested_url: str
    url: str  # after same-host redirects
    status: int
    reason: str
    content_type: str
    title: str
    text: str  # at most MAX_CHARS
    total_chars: int  # before the cut
    bytes_read: int
    capped: bool  # stopped reading at MAX_BYTES
    binary: bool
    headers: tuple[tuple[str, str], ...]
    fetched_at: float
    from_cache: bool = False
    image: bytes | None = None  # the body of a complete image response, for an image attachment


@dataclass(frozen=True)
class CrossHostRedirect:
    """A redirect to another host: reported to the model instead of followed."""

    url: str
    location: str
    status: int


FetchResult = FetchedPage | CrossHostRedirect


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
