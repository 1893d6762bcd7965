"""WebFetcher: one HTTP request (plus same-host redirects) read into text, with caps and a cache."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

import httpx

from goat_jupyter.errors import InvalidInputError, ToolExecutionError, ToolTimeoutError
from goat_jupyter.web.convert import decode_html, decode_text, html_to_markdown
from goat_jupyter.web.pages import (
    CrossHostRedirect,
    FetchedPage,
    FetchRequest,
    FetchResult,
    human_size,
)

MAX_BYTES = 10 * 1024 * 1024
MAX_CHARS = 2_000_000  # the executor stores a long page whole for Read/Grep (tools/runner.py)
CACHE_TTL_S = 15 * 60
CACHE_ENTRIES = 64
MAX_REDIRECTS = 10
ERROR_BODY_CHARS = 2_000
USER_AGENT = "Mozilla/5.0 (compatible; goat-jupyter WebFetch)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"RIFF")
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
    }
)


_ssl_context: ssl.SSLContext | None = None


async def shared_ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once (loading the CA bundle costs about 0.25 s) off the loop."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = await asyncio.to_thread(httpx.create_ssl_context)
    return _ssl_context


def is_loopback(host: str) -> bool:
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def upgrade_url(url: str) -> str:
    """A checked http(s) URL; http becomes https except on loopback. A missing scheme means https."""
    url = url.strip()
    if "://" not in url:
        url = "https://" + url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidInputError(f"Unsupported URL scheme {parts.scheme!r} in {url}: use an http(s) URL.")
    if not parts.hostname:
        raise InvalidInputError(f"The URL {url} has no host name. Give a fully formed URL.")
    if scheme == "http" and not is_loopback(parts.hostname):
        scheme = "https"
    return urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, parts.fragment))


def same_host(first: str, second: str) -> bool:
    """Whether two URLs name the same host (a leading `www.` is ignored; ports are not compared)."""

    def host(url: str) -> str:
        name = (urlsplit(url).hostname or "").rstrip(".").lower()
        return name.removeprefix("www.")

    return host(first) == host(second)


class WebFetcher:
    """Fetches pages for one session; GET results are cached for 15 minutes."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_bytes: int = MAX_BYTES,
        max_chars: int = MAX_CHARS,
        cache_ttl_s: float = CACHE_TTL_S,
    ) -> None:
        self.clock = clock
        self.max_bytes = max_bytes
        self.max_chars = max_chars
        self.cache_ttl_s = cache_ttl_s
        self._cache: OrderedDict[str, FetchedPage] = OrderedDict()

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """Fetch `request.url`; raise GoatErrors for bad URLs, network failures and non-2xx."""
        url = upgrade_url(request.url)
        key = _cache_key(url, request)
        cached = self._cached(key)
        if cached is not None:
            return replace(cached, from_cache=True)
        try:
            result = await asyncio.wait_for(self._follow(url, request), request.timeout_s)
        except (asyncio.TimeoutError, httpx.TimeoutException):
            raise ToolTimeoutError(f"Fetching {url} timed out after {request.timeout_s:g} s.") from None
        except httpx.HTTPError as exc:
            raise ToolExecutionError(_describe_failure(url, exc)) from None
        if key is not None and isinstance(result, FetchedPage):
            self._store(key, result)
        return result

    def _cached(self, key: str | None) -> FetchedPage | None:
        if key is None or key not in self._cache:
            return None
        page = self._cache[key]
        if self.clock() - page.fetched_at > self.cache_ttl_s:
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return page

    def _store(self, key: str, page: FetchedPage) -> None:
        self._cache[key] = page
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)

    async def _follow(self, url: str, request: FetchRequest) -> FetchResult:
        """Send the request, following redirects only while they stay on the same host."""
        start, method, body = url, request.method, request.body
        client_headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT}
        tls = await shared_ssl_context()
        async with httpx.AsyncClient(headers=client_headers, timeout=request.timeout_s, verify=tls) as client:
            for _ in range(MAX_REDIRECTS + 1):
                stream = client.stream(method, url, headers=dict(request.headers or {}), content=body)
                async with stream as response:
                    location = response.headers.get("location")
                    if not (response.is_redirect and location):
                        return await self._read(response, start, url)
                    target = urljoin(url, location)
                    if urlsplit(target).scheme not in ("http", "https") or not same_host(url, target):
                        return CrossHostRedirect(url, target, response.status_code)
                    url = upgrade_url(target)
                    method, body = _method_after_redirect(response.status_code, method, body)
        raise ToolExecutionError(f"{request.url} redirected more than {MAX_REDIRECTS} times; giving up.")

    async def _read(self, response: httpx.Response, requested: str, url: str) -> FetchedPage:
        limit = self.max_bytes if response.is_success else 64 * 1024
        raw, capped = await read_capped(response, limit)
        mime = (response.headers.get("content-type") or "").split(";")[0].strip().lower()
        kind = classify(mime, raw)
        if kind == "binary":
            title, text = "", describe_binary(url, mime, len(raw), capped)
        elif kind == "html":
            html = decode_html(raw, response.charset_encoding)
            title, text = await asyncio.to_thread(html_to_markdown, html, url)
        else:
            title, text = "", decode_text(raw, response.charset_encoding)
        if not response.is_success:
            status = f"{response.status_code} {response.reason_phrase}".strip()
            raise ToolExecutionError(
                f"{url} answered with HTTP status {status}.", output=text[:ERROR_BODY_CHARS].strip()
            )
        return FetchedPage(
            requested_url=requested,
            url=url,
            status=response.status_code,
            reason=response.reason_phrase,
            content_type=mime or "unknown",
            title=title,
            text=text[: self.max_chars],
            total_chars=len(text),
            bytes_read=len(raw),
            capped=capped,
            binary=kind == "binary",
            headers=tuple(response.headers.items()),
            fetched_at=self.clock(),
            image=raw if kind == "binary" and not capped and is_image(mime, raw) else None,
        )


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """Read the (decompressed) body up to `limit` bytes; True when more was left unread."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        if size + len(chunk) > limit:
            chunks.append(chunk[: limit - size])
            return b"".join(chunks), True  # leaving the stream closes the connection
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def classify(mime: str, raw: bytes) -> str:
    """'html', 'text' or 'binary', from the content type and, when it is vague, the bytes."""
    if mime in HTML_TYPES:
        return "html"
    if mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return "text"
    if mime and mime != "application/octet-stream":
        return "binary"
    head = raw[:8192]
    if b"\x00" in head:
        return "binary"
    start = head.lstrip()[:64].lower()
    return "html" if start.startswith((b"<!doctype html", b"<html")) else "text"


def is_image(mime: str, raw: bytes) -> bool:
    """An image the model can be shown: by its type, or by its first bytes when the type is vague."""
    if mime in IMAGE_TYPES:
        return True
    return mime in ("", "application/octet-stream") and raw.startswith(IMAGE_MAGIC)


def describe_binary(url: str, mime: str, size: int, capped: bool) -> str:
    what = mime or "binary data"
    amount = f"more than {human_size(size)}" if capped else human_size(size)
    return (
        f"The response is binary content ({what}, {amount}) and is not shown as text. "
        f"To use it, download it with Bash (for example `curl -sSL -o <file> '{url}'`) and open the "
        "file with Read, which shows images and extracts text from PDFs."
    )


def _cache_key(url: str, request: FetchRequest) -> str | None:
    if request.method != "GET" or request.body:
        return None
    headers = sorted((k.lower(), v) for k, v in (request.headers or {}).items())
    page = urldefrag(url).url  # the fragment never reaches the server
    return page if not headers else f"{page} {headers}"


def _method_after_redirect(status: int, method: str, body: str | None) -> tuple[str, str | None]:
    """Browsers' rule: 303 (and 301/302 after POST) turn into a GET without a body."""
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        return "GET", None
    return method, body


def _describe_failure(url: str, exc: httpx.HTTPError) -> str:
    host = urlsplit(url).hostname or url
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        return f"Could not connect to {host} ({detail}). Check the URL, or try again later."
    return f"Fetching {url} failed: {type(exc).__name__}: {detail}"
