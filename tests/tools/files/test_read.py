"""Read: text windows, notices and errors, images, PDFs and notebooks, through the registry."""

from __future__ import annotations

import base64
import io
import os
import tracemalloc
from pathlib import Path

import nbformat
import pytest
from nbformat import v4
from PIL import Image

from goat_jupyter.tools import Registry, default_registry


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


async def read(registry: Registry, path: Path | str, **extra: object):
    return await registry.call("Read", {"file_path": str(path), **extra})


def make_pdf(path: Path, page_texts: list[str]) -> None:
    """A minimal valid PDF with one line of Helvetica text per page, xref offsets computed."""
    count = len(page_texts)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(page_texts):
        stream = f"BT /F1 24 Tf 72 700 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))


def png_bytes(size: tuple[int, int], color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


# --- text ---------------------------------------------------------------------------------


async def test_lines_are_numbered_from_one_with_a_tab(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\ngamma\n")
    out = await read(registry, tmp_path / "a.txt")
    assert not out.is_error
    assert out.content == "1\talpha\n2\tbeta\n3\tgamma"


async def test_offset_and_limit_show_a_window_and_how_to_continue(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"row {i}\n" for i in range(1, 11)))
    out = await read(registry, tmp_path / "a.txt", offset=4, limit=3)
    lines = out.content.splitlines()
    assert lines[:3] == ["4\trow 4", "5\trow 5", "6\trow 6"]
    assert "4-6 of 10" in out.content and "offset=7" in out.content


async def test_offset_zero_is_treated_as_one(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\ny\n")
    out = await read(registry, tmp_path / "a.txt", offset=0)
    assert out.content == "1\tx\n2\ty"


async def test_default_limit_is_2000_lines(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    out = await read(registry, tmp_path / "big.txt")
    numbered = [line for line in out.content.splitlines() if "\t" in line]
    assert len(numbered) == 2000 and numbered[-1] == "2000\t2000"
    assert "1-2000 of 2500" in out.content and "offset=2001" in out.content


async def test_last_line_without_newline_is_shown(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo")
    out = await read(registry, tmp_path / "a.txt")
    assert out.content == "1\tone\n2\ttwo"
    assert out.metadata["total_lines"] == 2


async def test_long_line_is_cut_with_a_marker(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("short\n" + "x" * 5000 + "\nafter\n")
    out = await read(registry, tmp_path / "wide.txt")
    second = out.content.splitlines()[1]
    assert second.startswith("2\t" + "x" * 2000 + "...")
    assert "3000 more characters" in second
    assert out.content.splitlines()[2] == "3\tafter"


async def test_huge_multibyte_line_reports_exact_length(registry: Registry, tmp_path: Path) -> None:
    line = "é" * 300_000 + "€" * 300_000  # far beyond what Read keeps of one line
    (tmp_path / "wide.txt").write_text(line + "\r\nnext\r\n", encoding="utf-8", newline="")
    out = await read(registry, tmp_path / "wide.txt")
    first, second = out.content.splitlines()
    assert first.startswith("1\t" + "é" * 2000 + "...")
    assert f"{600_000 - 2000} more characters" in first
    assert second == "2\tnext"


async def test_output_is_bounded_by_characters_with_a_continue_offset(
    registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / "wide.txt").write_text("".join(f"{i} " + "y" * 1000 + "\n" for i in range(1, 501)))
    out = await read(registry, tmp_path / "wide.txt")
    shown = out.metadata["last_line"]
    assert 50 < shown < 500
    assert len(out.content) <= registry.get("Read").max_output_chars  # pyright: ignore[reportOptionalMemberAccess]
    assert f"offset={shown + 1}" in out.content


async def test_empty_file_is_a_notice_not_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    out = await read(registry, tmp_path / "empty.txt")
    assert not out.is_error
    assert "empty" in out.content and "0 lines" in out.content


async def test_offset_past_the_end_is_a_notice_with_the_line_count(
    registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    out = await read(registry, tmp_path / "a.txt", offset=10)
    assert not out.is_error
    assert "3 lines" in out.content and "10" in out.content


async def test_crlf_lines_show_without_carriage_returns(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    out = await read(registry, tmp_path / "win.txt")
    assert out.content == "1\tone\n2\ttwo"


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
async def test_bom_encodings_are_decoded(registry: Registry, tmp_path: Path, encoding: str) -> None:
    target = tmp_path / "enc.txt"
    data = "naïve\r\nçà\r\n".encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    target.write_bytes(data)
    out = await read(registry, target)
    assert out.content == "1\tnaïve\n2\tçà"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
async def test_windows_across_chunk_boundaries_match_the_file(
    registry: Registry, tmp_path: Path, encoding: str
) -> None:
    lines = [f"{i:05d} " + "é" * (i % 97) for i in range(1, 12_001)]  # about 1.2 MB: several read chunks
    target = tmp_path / "many.txt"
    target.write_text("\n".join(lines) + "\n", encoding=encoding)
    for offset in (1, 2_500, 5_000, 11_999):
        out = await read(registry, target, offset=offset, limit=1_500)
        numbered = [line for line in out.content.split("\n") if "\t" in line]
        expected = [f"{n}\t{lines[n - 1]}" for n in range(offset, min(offset + 1_500, 12_001))]
        assert numbered == expected, offset
        assert out.metadata["total_lines"] == 12_000


async def test_streamed_read_deep_in_a_huge_file_keeps_memory_flat(
    registry: Registry, tmp_path: Path
) -> None:
    big = tmp_path / "huge.log"
    with big.open("w") as handle:
        for start in range(1, 2_600_001, 100_000):
            handle.write("".join(f"line {i}\n" for i in range(start, start + 100_000)))
    tracemalloc.start()
    try:
        out = await read(registry, big, offset=2_500_000, limit=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.content.splitlines()[:3] == [
        "2500000\tline 2500000",
        "2500001\tline 2500001",
        "2500002\tline 2500002",
    ]
    assert "of 2600000" in out.content and "offset=2500003" in out.content
    assert peak < 8 * 1024 * 1024, f"peak traced memory {peak} bytes for a {big.stat().st_size}-byte file"


# --- paths and errors -----------------------------------------------------------------------


async def test_relative_path_resolves_against_cwd_and_records_the_read(
    registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "r.txt").write_text("hi\n")
    out = await read(registry, "sub/r.txt")
    assert out.content == "1\thi"
    assert out.metadata["path"] == str(tmp_path / "sub" / "r.txt")
    assert registry.session.file_reads.was_read(tmp_path / "sub" / "r.txt")


async def test_tilde_is_expanded(registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("from home\n")
    monkeypatch.setenv("HOME", str(home))
    out = await read(registry, "~/notes.txt")
    assert out.content == "1\tfrom home"
    assert out.metadata["path"] == str(home / "notes.txt")


async def test_missing_file_names_cwd_and_a_similar_file(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "results.csv").write_text("a,b\n")
    out = await read(registry, "result.csv")
    assert out.is_error and out.content.startswith("Error: ")
    assert out.metadata["error_code"] == "FILE_NOT_FOUND"
    assert str(tmp_path) in out.content
    assert str(tmp_path / "results.csv") in out.content


async def test_missing_file_without_a_similar_name(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "zzz.bin").write_text("")
    out = await read(registry, "report.md")
    assert out.metadata["error_code"] == "FILE_NOT_FOUND"
    assert "zzz" not in out.content and str(tmp_path) in out.content


async def test_directory_points_to_ls_and_glob(registry: Registry, tmp_path: Path) -> None:
    out = await read(registry, tmp_path)
    assert out.is_error
    assert "LS" in out.content and "Glob" in out.content


async def test_nul_bytes_mean_binary(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "blob.dat").write_bytes(b"abc\x00def" * 10)
    out = await read(registry, tmp_path / "blob.dat")
    assert out.is_error and "binary" in out.content


async def test_binary_extension_is_refused(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "table.parquet").write_text("not really parquet but the extension says so")
    out = await read(registry, tmp_path / "table.parquet")
    assert out.is_error and "binary" in out.content


async def test_pages_on_a_text_file_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    out = await read(registry, tmp_path / "a.txt", pages="1")
    assert out.metadata["error_code"] == "INVALID_INPUT"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
async def test_unreadable_file_is_permission_denied(registry: Registry, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("x\n")
    secret.chmod(0)
    out = await read(registry, secret)
    assert out.metadata["error_code"] == "PERMISSION_DENIED"


# --- images ---------------------------------------------------------------------------------


async def test_large_png_is_downscaled_to_an_attachment(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(png_bytes((3000, 2000)))
    out = await read(registry, tmp_path / "big.png")
    assert not out.is_error and len(out.attachments) == 1
    attachment = out.attachments[0]
    assert attachment.mime_type == "image/png"
    shown = Image.open(io.BytesIO(base64.b64decode(attachment.data)))
    assert shown.size == (1568, 1045)
    assert "\n" not in out.content
    assert "PNG" in out.content and "3000x2000" in out.content and "1568x1045" in out.content
    assert "bytes" in out.content


async def test_small_jpeg_passes_unchanged(registry: Registry, tmp_path: Path) -> None:
    Image.new("RGB", (40, 30), "blue").save(tmp_path / "p.jpg", format="JPEG")
    out = await read(registry, tmp_path / "p.jpg")
    attachment = out.attachments[0]
    assert attachment.mime_type == "image/jpeg"
    assert base64.b64decode(attachment.data) == (tmp_path / "p.jpg").read_bytes()


async def test_large_jpeg_stays_jpeg_and_gif_becomes_png(registry: Registry, tmp_path: Path) -> None:
    Image.new("RGB", (2000, 4000), "green").save(tmp_path / "tall.jpeg", format="JPEG")
    Image.new("P", (20, 20)).save(tmp_path / "anim.gif", format="GIF")
    Image.new("RGBA", (50, 60)).save(tmp_path / "w.webp", format="WEBP")
    tall = await read(registry, tmp_path / "tall.jpeg")
    assert tall.attachments[0].mime_type == "image/jpeg"
    assert max(Image.open(io.BytesIO(base64.b64decode(tall.attachments[0].data))).size) == 1568
    for name in ("anim.gif", "w.webp"):
        out = await read(registry, tmp_path / name)
        assert out.attachments[0].mime_type == "image/png", name


async def test_corrupt_image_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot an image")
    out = await read(registry, tmp_path / "broken.png")
    assert out.is_error and not out.attachments


# --- PDF ------------------------------------------------------------------------------------


async def test_small_pdf_reads_every_page_with_headers(registry: Registry, tmp_path: Path) -> None:
    make_pdf(tmp_path / "doc.pdf", ["Hello first", "Second page", "Third one"])
    out = await read(registry, tmp_path / "doc.pdf")
    assert not out.is_error
    assert "Page 1 of 3" in out.content and "Page 3 of 3" in out.content
    assert "Hello first" in out.content and "Third one" in out.content
    assert (
        out.content.index("Hello first") < out.content.index("Second page") < out.content.index("Third one")
    )


async def test_pdf_over_ten_pages_needs_pages(registry: Registry, tmp_path: Path) -> None:
    make_pdf(tmp_path / "long.pdf", [f"Text of page {i}" for i in range(1, 13)])
    out = await read(registry, tmp_path / "long.pdf")
    assert out.metadata["error_code"] == "INVALID_INPUT"
    assert "12 pages" in out.content and "pages" in out.content


@pytest.mark.parametrize(
    ("pages", "shown", "hidden"),
    [("3", [3], [2, 4]), ("2-4", [2, 3, 4], [1, 5]), ("10-", [10, 11, 12], [9]), (" 5 - 5 ", [5], [4, 6])],
)
async def test_pdf_page_ranges(
    registry: Registry, tmp_path: Path, pages: str, shown: list[int], hidden: list[int]
) -> None:
    make_pdf(tmp_path / "long.pdf", [f"Text of page {i}" for i in range(1, 13)])
    out = await read(registry, tmp_path / "long.pdf", pages=pages)
    assert not out.is_error, out.content
    for number in shown:
        assert f"Text of page {number}\n" in out.content + "\n" and f"Page {number} of 12" in out.content
    for number in hidden:
        assert f"Text of page {number}\n" not in out.content + "\n"


@pytest.mark.parametrize("pages", ["abc", "0", "5-2", "30", "1,3", "-4", "1-25"])
async def test_bad_pdf_ranges_show_the_accepted_forms(registry: Registry, tmp_path: Path, pages: str) -> None:
    make_pdf(tmp_path / "long.pdf", [f"p{i}" for i in range(1, 26)])
    out = await read(registry, tmp_path / "long.pdf", pages=pages)
    assert out.metadata["error_code"] == "INVALID_INPUT"
    assert '"3"' in out.content and '"1-5"' in out.content and '"10-"' in out.content


async def test_pdf_open_range_over_twenty_pages_is_refused(registry: Registry, tmp_path: Path) -> None:
    make_pdf(tmp_path / "long.pdf", [f"p{i}" for i in range(1, 31)])
    out = await read(registry, tmp_path / "long.pdf", pages="5-")
    assert out.is_error and "20" in out.content


async def test_damaged_pdf_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf body")
    out = await read(registry, tmp_path / "bad.pdf")
    assert out.is_error


# --- notebooks ------------------------------------------------------------------------------


def make_notebook(path: Path) -> nbformat.NotebookNode:
    image = base64.b64encode(png_bytes((30, 20), "blue")).decode()
    code = v4.new_code_cell("print('hi')\n1 + 1", id="first-code", execution_count=4)
    code.outputs = [
        v4.new_output("stream", name="stdout", text="hi\n"),
        v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=4),
        v4.new_output("display_data", data={"image/png": image, "text/plain": "<Figure>"}),
    ]
    failing = v4.new_code_cell("1/0", id="failing")
    failing.outputs = [
        v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["\x1b[0;31mZeroDivisionError\x1b[0m", "Traceback line \x1b[1;32m1\x1b[0m"],
        )
    ]
    noisy = v4.new_code_cell("for i in range(5000): print(i)", id="noisy")
    noisy.outputs = [v4.new_output("stream", name="stdout", text="".join(f"{i}\n" for i in range(5000)))]
    notes = v4.new_markdown_cell("# Title\nSome *notes*", id="notes")
    nb = v4.new_notebook(cells=[notes, code, failing, noisy])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return nb


async def test_notebook_cells_show_ids_types_sources_and_outputs(registry: Registry, tmp_path: Path) -> None:
    make_notebook(tmp_path / "nb.ipynb")
    out = await read(registry, tmp_path / "nb.ipynb")
    assert not out.is_error
    text = out.content
    assert 'id="notes" type="markdown"' in text and "# Title\nSome *notes*" in text
    assert 'id="first-code" type="code" execution_count="4"' in text and "print('hi')\n1 + 1" in text
    assert "[stdout]\nhi" in text and "[result]\n2" in text
    assert text.index("notes") < text.index("first-code") < text.index("failing") < text.index("noisy")
    assert "ZeroDivisionError: division by zero" in text and "Traceback line 1" in text
    assert "\x1b" not in text


async def test_notebook_output_images_become_attachments(registry: Registry, tmp_path: Path) -> None:
    make_notebook(tmp_path / "nb.ipynb")
    out = await read(registry, tmp_path / "nb.ipynb")
    assert len(out.attachments) == 1
    assert out.attachments[0].mime_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(out.attachments[0].data))).size == (30, 20)
    assert "image 1" in out.content


async def test_notebook_big_outputs_are_elided_with_a_hint(registry: Registry, tmp_path: Path) -> None:
    make_notebook(tmp_path / "nb.ipynb")
    out = await read(registry, tmp_path / "nb.ipynb")
    noisy = out.content[out.content.index('id="noisy"') :]
    assert "elided" in noisy and "4999" not in noisy
    assert '["cells"][3]["outputs"]' in noisy and str(tmp_path / "nb.ipynb") in noisy
    assert registry.session.file_reads.was_read(tmp_path / "nb.ipynb")


async def test_notebook_without_cell_ids_uses_index_refs(registry: Registry, tmp_path: Path) -> None:
    raw = (
        '{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": ['
        '{"cell_type": "code", "metadata": {}, "source": ["a = 1\\n", "a"], "outputs": [], "execution_count": null}'
        "]}"
    )
    (tmp_path / "old.ipynb").write_text(raw)
    out = await read(registry, tmp_path / "old.ipynb")
    assert 'id="cell-0" type="code"' in out.content and "a = 1\na" in out.content


async def test_invalid_notebook_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    out = await read(registry, tmp_path / "bad.ipynb")
    assert out.is_error and "notebook" in out.content


async def test_notebook_with_malformed_cells_is_an_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "odd.ipynb").write_text('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [7]}')
    out = await read(registry, tmp_path / "odd.ipynb")
    assert out.is_error and "notebook" in out.content
