"""HTML to Markdown for WebFetch: drop page chrome, keep headings, code blocks and absolute links."""

from __future__ import annotations

import re
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from bs4.dammit import EncodingDetector
from markdownify import MarkdownConverter

# Elements that never carry the page's content (scripts, styling, menus, forms, embedded media).
NOISE_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "nav",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "link",
    "meta",
)
NOISE_ROLES = ("navigation", "search")
MIN_MAIN_CHARS = 200  # a <main> shorter than this is probably not the whole content
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_HIGHLIGHT_CLASS = re.compile(r"^(?:highlight|language|lang)-([A-Za-z0-9_+#.-]+)$")


def decode_html(raw: bytes, header_charset: str | None) -> str:
    """Decode by the header's charset, else the page's own <meta> declaration, else UTF-8."""
    declared = header_charset or EncodingDetector.find_declared_encoding(raw, is_html=True)
    return decode_text(raw, declared)


def decode_text(raw: bytes, charset: str | None) -> str:
    """Decode with `charset` when Python knows it; bad bytes become U+FFFD instead of failing."""
    for encoding in (charset, "utf-8"):
        if not encoding:
            continue
        try:
            return raw.decode(encoding, errors="replace")
        except LookupError:
            continue
    return raw.decode("utf-8", errors="replace")


def html_to_markdown(html: str, base_url: str) -> tuple[str, str]:
    """Return (title, markdown) of the page's main content; links are made absolute."""
    soup = BeautifulSoup(html, "html.parser")
    title = _title_of(soup)
    base = _base_href(soup, base_url)
    _drop_noise(soup)
    _absolutise_links(soup, base)
    root = _main_content(soup)
    converter = MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        code_language_callback=_code_language,
    )
    markdown = converter.convert_soup(root if root is not None else soup)
    return title, tidy_markdown(markdown)


def tidy_markdown(markdown: str) -> str:
    """Trim trailing spaces and collapse runs of blank lines."""
    return _BLANK_RUNS.sub("\n\n", _TRAILING_SPACE.sub("\n", markdown)).strip()


def _title_of(soup: BeautifulSoup) -> str:
    tag = soup.title
    return " ".join(tag.get_text().split()) if tag is not None else ""


def _base_href(soup: BeautifulSoup, page_url: str) -> str:
    tag = soup.find("base", href=True)
    href = tag.get("href") if isinstance(tag, Tag) else None
    return urljoin(page_url, href) if isinstance(href, str) else page_url


def _drop_noise(soup: BeautifulSoup) -> None:
    """Remove chrome; find_all is used rather than CSS selectors because it is several times faster."""
    noise = [
        *soup.find_all(NOISE_TAGS),
        *soup.find_all(_is_hidden_or_menu),
        *soup.find_all("a", class_="headerlink"),  # Sphinx's ¶ permalinks
    ]
    for tag in noise:
        if not tag.decomposed:
            tag.decompose()


def _is_hidden_or_menu(tag: Tag) -> bool:
    return tag.get("aria-hidden") == "true" or tag.get("role") in NOISE_ROLES


def _absolutise_links(soup: BeautifulSoup, base: str) -> None:
    """Same-page anchors become plain text; other links and images point to absolute URLs."""
    for anchor in soup.find_all("a"):
        href = anchor.get("href")
        if not isinstance(href, str) or href.startswith(("#", "javascript:")):
            anchor.unwrap()
        else:
            anchor["href"] = urljoin(base, href.strip())
    for image in soup.find_all("img"):
        src = image.get("src")
        if not isinstance(src, str) or src.startswith("data:"):
            image.decompose()  # inline data URIs are huge and useless as text
        else:
            image["src"] = urljoin(base, src.strip())


def _main_content(soup: BeautifulSoup) -> Tag | None:
    """The page's main element when it is marked up clearly, else None (use the whole page)."""
    for found in (soup.find_all("main"), soup.find_all(role="main"), soup.find_all("article")):
        if len(found) == 1 and len(found[0].get_text(strip=True)) >= MIN_MAIN_CHARS:
            return found[0]
    return soup.body


def _code_language(pre: Tag) -> str | None:
    """A fence language from classes like `highlight-python3` (Sphinx) or `language-js` on or above <pre>."""
    code = pre.find("code")
    candidates = [pre, *pre.parents]
    if isinstance(code, Tag):
        candidates.insert(0, code)
    for element in candidates[:4]:
        for name in element.get_attribute_list("class"):
            match = _HIGHLIGHT_CLASS.match(name or "")
            if match and match.group(1) not in ("default", "none", "text"):
                return match.group(1)
    return None
