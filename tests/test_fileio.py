"""fileio: encoding and line-ending detection, binary sniffing, atomic writes, similar names."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from goat_jupyter.errors import PermissionDeniedError, ToolExecutionError
from goat_jupyter.fileio import (
    TextFormat,
    atomic_write_bytes,
    count_lines,
    decode_text,
    detect_bom,
    detect_newline,
    encode_text,
    missing_file_error,
    os_errors,
    similar_file,
    sniff_binary,
    sniff_format,
)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"plain", ("utf-8", b"")),
        (b"\xef\xbb\xbfx", ("utf-8", b"\xef\xbb\xbf")),
        (b"\xff\xfex\x00", ("utf-16-le", b"\xff\xfe")),
        (b"\xfe\xff\x00x", ("utf-16-be", b"\xfe\xff")),
        (b"\xff\xfe\x00\x00x\x00\x00\x00", ("utf-32-le", b"\xff\xfe\x00\x00")),
    ],
)
def test_detect_bom(head: bytes, expected: tuple[str, bytes]) -> None:
    assert detect_bom(head) == expected


def test_detect_newline_only_reports_pure_crlf() -> None:
    assert detect_newline("a\r\nb\r\n") == "\r\n"
    assert detect_newline("a\nb\n") == "\n"
    assert detect_newline("a\r\nb\n") == "\n"
    assert detect_newline("no break") == "\n"


@pytest.mark.parametrize(
    "data",
    [b"x\r\ny\r\n", b"x\ny", b"\xef\xbb\xbfbom\r\n", "wide\r\n".encode("utf-16"), b"bad \xff byte\n"],
)
def test_decode_then_encode_round_trips_bytes(data: bytes) -> None:
    text, fmt = decode_text(data)
    assert "\r\n" not in text or fmt.newline == "\n"
    assert encode_text(text, fmt) == data


def test_decode_rejects_broken_utf16() -> None:
    with pytest.raises(ToolExecutionError):
        decode_text(b"\xff\xfe\x00\xd8")  # a lone high surrogate


def test_encode_turns_lf_into_crlf_for_crlf_files() -> None:
    assert encode_text("a\nb\r\n", TextFormat(newline="\r\n")) == b"a\r\nb\r\n"
    assert encode_text("a\r\nb\n", TextFormat()) == b"a\r\nb\n"


def test_unencodable_text_is_a_clear_error() -> None:
    with pytest.raises(ToolExecutionError) as caught:
        encode_text("lone \ud800 surrogate", TextFormat())
    assert "utf-8" in caught.value.message


def test_count_lines() -> None:
    assert [count_lines(t) for t in ("", "a", "a\n", "a\nb", "\n\n")] == [0, 1, 1, 2, 2]


def test_sniff_binary(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("text\n")
    (tmp_path / "n.txt").write_bytes(b"a\x00b")
    (tmp_path / "u16.txt").write_bytes("utf16 has NULs\n".encode("utf-16"))
    (tmp_path / "x.zip").write_text("pretend")
    assert sniff_binary(tmp_path / "t.txt") is None
    assert sniff_binary(tmp_path / "u16.txt") is None
    assert "NUL" in (sniff_binary(tmp_path / "n.txt") or "")
    assert ".zip" in (sniff_binary(tmp_path / "x.zip") or "")


def test_sniff_format(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes("a\r\nb\r\n".encode("utf-16"))
    assert sniff_format(tmp_path / "w.txt") == TextFormat("utf-16-le", b"\xff\xfe", "\r\n")


def test_atomic_write_keeps_mode_and_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "f.sh"
    target.write_text("old")
    target.chmod(0o700)
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert os.listdir(tmp_path) == ["f.sh"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_atomic_write_into_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(PermissionDeniedError), os_errors(folder / "f", "writing"):
            atomic_write_bytes(folder / "f", b"x")
    finally:
        folder.chmod(0o700)


def test_os_errors_become_goat_errors(tmp_path: Path) -> None:
    with pytest.raises(ToolExecutionError) as caught, os_errors(tmp_path / "loop", "reading"):
        raise IsADirectoryError(21, "Is a directory")
    assert "Is a directory" in caught.value.message and str(tmp_path / "loop") in caught.value.message


def test_os_permission_error_becomes_permission_denied(tmp_path: Path) -> None:
    with pytest.raises(PermissionDeniedError), os_errors(tmp_path / "f", "writing"):
        raise PermissionError(13, "Permission denied")


def test_similar_file_and_missing_file_error(tmp_path: Path) -> None:
    (tmp_path / "analysis.py").write_text("")
    assert similar_file(tmp_path / "analysys.py") == tmp_path / "analysis.py"
    assert similar_file(tmp_path / "zzzz.md") is None
    error = missing_file_error(tmp_path / "nowhere" / "x.txt", tmp_path)
    assert error.code == "FILE_NOT_FOUND" and "does not exist" in error.message
