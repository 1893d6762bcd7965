"""Read's non-text formats: images (downscaled for the model) and PDFs (text per page)."""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from goat_jupyter.errors import InvalidInputError, ToolExecutionError
from goat_jupyter.tools.base import Attachment, ToolOutput

if TYPE_CHECKING:  # Pillow and pypdf are imported when an image or PDF is read, not at %load_ext
    from PIL import Image
    from pypdf import PdfReader

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MAX_IMAGE_SIDE = 1568
MAX_PDF_PAGES_PER_CALL = 20
MAX_PDF_PAGES_WITHOUT_RANGE = 10
PAGE_FORMS = (
    'Accepted forms: "3" (one page), "1-5" (a range) or "10-" (page 10 to the end); pages count from 1 '
    f"and one call reads at most {MAX_PDF_PAGES_PER_CALL} pages."
)
_PAGE_SPEC = re.compile(r"\s*(\d+)\s*(?:(-)\s*(\d*)\s*)?")
_PASS_THROUGH = {"PNG": "image/png", "JPEG": "image/jpeg"}


@dataclass
class ShownImage:
    """An image ready for the model: encoded bytes plus the sizes before and after downscaling."""

    mime_type: str
    data: bytes
    source_format: str
    original_size: tuple[int, int]
    shown_size: tuple[int, int]

    def attachment(self, description: str) -> Attachment:
        return Attachment(self.mime_type, base64.b64encode(self.data).decode("ascii"), description)

    def describe(self) -> str:
        (ow, oh), (sw, sh) = self.original_size, self.shown_size
        shown = "shown at full size" if (ow, oh) == (sw, sh) else f"shown at {sw}x{sh} px"
        kind = self.mime_type.split("/")[1].upper()
        return f"{self.source_format} image, {ow}x{oh} px, {shown} as {kind} ({len(self.data):,} bytes)"


def prepare_image(raw: bytes, max_side: int = MAX_IMAGE_SIDE) -> ShownImage:
    """Downscale to at most `max_side` px on the long side; PNG and JPEG that already fit pass unchanged."""
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(raw))
        with image:
            source_format = image.format or "unknown"
            original = image.size
            if max(original) <= max_side and source_format in _PASS_THROUGH:
                return ShownImage(_PASS_THROUGH[source_format], raw, source_format, original, original)
            if source_format == "JPEG":
                image.draft("RGB", (max_side, max_side))  # decode JPEGs at reduced size
            image.thumbnail((max_side, max_side))
            mime_type, data = _encode(image, as_jpeg=source_format == "JPEG")
            return ShownImage(mime_type, data, source_format, original, image.size)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ToolExecutionError(f"The image could not be decoded: {exc}") from None


def _encode(image: Image.Image, *, as_jpeg: bool) -> tuple[str, bytes]:
    out = io.BytesIO()
    if as_jpeg:
        image.convert("RGB").save(out, format="JPEG", quality=85)
        return "image/jpeg", out.getvalue()
    if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        image = image.convert("RGBA")
    image.save(out, format="PNG", optimize=True)
    return "image/png", out.getvalue()


def read_image(path: Path) -> ToolOutput:
    """One image attachment and a one-line description of it."""
    shown = prepare_image(path.read_bytes())
    line = f"Image {path}: {shown.describe()}."
    return ToolOutput(line, metadata={"path": str(path)}, attachments=[shown.attachment(line)])


def parse_pages(spec: str, page_count: int) -> range:
    """Page numbers (1-based, as a range) for "3", "1-5" or "10-"; errors show the accepted forms."""
    match = _PAGE_SPEC.fullmatch(spec)
    if match is None:
        raise InvalidInputError(f"Invalid pages {spec!r}. {PAGE_FORMS}")
    start = int(match.group(1))
    end = page_count if match.group(2) and not match.group(3) else int(match.group(3) or start)
    if start < 1 or end < start:
        raise InvalidInputError(
            f"Invalid pages {spec!r}: the range is empty or starts before 1. {PAGE_FORMS}"
        )
    if start > page_count:
        raise InvalidInputError(f"Invalid pages {spec!r}: the PDF has {page_count} pages. {PAGE_FORMS}")
    end = min(end, page_count)
    if end - start + 1 > MAX_PDF_PAGES_PER_CALL:
        raise InvalidInputError(
            f"pages {spec!r} covers {end - start + 1} pages; read at most {MAX_PDF_PAGES_PER_CALL} "
            f'per call, e.g. "{start}-{start + MAX_PDF_PAGES_PER_CALL - 1}". {PAGE_FORMS}'
        )
    return range(start, end + 1)


def read_pdf(path: Path, pages: str | None) -> ToolOutput:
    """Extracted text of the chosen pages, each under a page header."""
    reader = _open_pdf(path)
    count = len(reader.pages)
    if pages is None:
        if count > MAX_PDF_PAGES_WITHOUT_RANGE:
            raise InvalidInputError(
                f"{path} has {count} pages; PDFs over {MAX_PDF_PAGES_WITHOUT_RANGE} pages need `pages`, "
                f'e.g. "1-{MAX_PDF_PAGES_PER_CALL}". {PAGE_FORMS}'
            )
        chosen = range(1, count + 1)
    else:
        chosen = parse_pages(pages, count)
    parts = [f"PDF {path}: {count} pages; showing {_describe(chosen)}."]
    for number in chosen:
        text = _page_text(reader, number).strip()
        parts.append(f"--- Page {number} of {count} ---\n{text or '(no extractable text on this page)'}")
    if chosen and chosen[-1] < count:
        parts.append(f'(More pages follow: continue with pages "{chosen[-1] + 1}-".)')
    meta = {"path": str(path), "page_count": count, "pages": [chosen.start, chosen.stop - 1]}
    return ToolOutput("\n\n".join(parts), metadata=meta)


def _describe(chosen: range) -> str:
    if not chosen:
        return "no pages"
    return f"page {chosen.start}" if len(chosen) == 1 else f"pages {chosen.start}-{chosen.stop - 1}"


def _open_pdf(path: Path) -> PdfReader:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ToolExecutionError(f"{path} is an encrypted PDF and needs a password.")
        return reader
    except (PyPdfError, ValueError, OSError) as exc:
        raise ToolExecutionError(f"{path} could not be read as a PDF: {exc}") from None


def _page_text(reader: PdfReader, number: int) -> str:
    try:
        return reader.pages[number - 1].extract_text()
    except Exception as exc:  # pypdf raises many kinds of errors on damaged pages
        return f"(text extraction failed on this page: {exc})"
