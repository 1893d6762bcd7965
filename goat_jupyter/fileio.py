"""File helpers for Read/Write/Edit: encoding and line-ending detection, binary sniffing, atomic writes."""

from __future__ import annotations

import contextlib
import difflib
import itertools
import os
import secrets
import stat
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from goat_jupyter.errors import (
    ConflictError,
    FileNotFoundGoatError,
    PermissionDeniedError,
    ToolExecutionError,
)

Newline = Literal["\n", "\r\n"]
SNIFF_BYTES = 8192
FORMAT_SAMPLE_BYTES = 1 << 16

# Longest BOM first: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)

BINARY_EXTENSIONS = frozenset(
    """
    .7z .a .aac .arrow .avi .avro .bin .bmp .bz2 .class .db .deb .dll .dmg .doc .docx .dylib .eot .exe
    .feather .flac .gz .h5 .hdf5 .ico .iso .jar .joblib .lz4 .mkv .mov .mp3 .mp4 .npy .npz .o .obj .odp
    .ods .odt .ogg .onnx .orc .otf .parquet .pickle .pkl .ppt .pptx .psd .pt .pth .pyc .pyd .pyo .rar
    .rpm .safetensors .so .sqlite .sqlite3 .tar .tgz .tif .tiff .ttf .wasm .wav .webm .whl .woff .woff2
    .xls .xlsb .xlsx .xz .zip .zst
    """.split()  # noqa: SIM905 - a word list reads better than 80 quoted items
)


@dataclass(frozen=True)
class TextFormat:
    """How a text file is stored: codec, byte-order mark and line ending."""

    encoding: str = "utf-8"
    bom: bytes = b""
    newline: Newline = "\n"

    @property
    def errors(self) -> str:
        # surrogateescape round-trips bytes that are not valid UTF-8, so edits never corrupt them.
        return "surrogateescape" if self.encoding == "utf-8" else "strict"


def detect_bom(head: bytes) -> tuple[str, bytes]:
    """The codec and BOM announced by the first bytes; plain UTF-8 when there is no BOM."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding, bom
    return "utf-8", b""


def detect_newline(text: str) -> Newline:
    """CRLF only when every line break in `text` is CRLF; mixed or LF files are left alone."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf == text.count("\n") else "\n"


@contextlib.contextmanager
def os_errors(path: Path, action: str) -> Generator[None]:
    """Turn OS errors from file work on `path` into goat errors the model can read."""
    try:
        yield
    except PermissionError:
        raise PermissionDeniedError(f"The operating system does not allow {action} {path}.") from None
    except OSError as exc:
        raise ToolExecutionError(f"{action.capitalize()} {path} failed: {exc.strerror or exc}.") from None


def missing_file_error(path: Path, cwd: Path) -> FileNotFoundGoatError:
    """FILE_NOT_FOUND naming the working directory and, when there is one, a similarly named file."""
    message = f"File not found: {path} (the working directory is {cwd})."
    if not path.parent.is_dir():
        message += f" Its folder {path.parent} does not exist either."
    elif (similar := similar_file(path)) is not None:
        message += f" Did you mean {similar}?"
    return FileNotFoundGoatError(message)


def similar_file(path: Path) -> Path | None:
    """The closest name to `path` in its folder (difflib), if any is close enough."""
    try:
        with os.scandir(path.parent) as entries:
            names = [entry.name for entry in itertools.islice(entries, 10_000)]
    except OSError:
        return None
    matches = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    return path.parent / matches[0] if matches else None


def sniff_binary(path: Path) -> str | None:
    """Why `path` looks binary (its extension, or NUL bytes in its first 8 KB), or None for text."""
    if path.suffix.lower() in BINARY_EXTENSIONS:
        return f"its extension {path.suffix} marks a binary format"
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    encoding, _ = detect_bom(head)
    if encoding.startswith("utf-8") and b"\x00" in head:
        return "it contains NUL bytes"
    return None


def sniff_format(path: Path) -> TextFormat:
    """The format of an existing file, judged from its first 64 KB."""
    with path.open("rb") as handle:
        head = handle.read(FORMAT_SAMPLE_BYTES)
    encoding, bom = detect_bom(head)
    sample = head[len(bom) :].decode(encoding, errors="replace")
    return TextFormat(encoding, bom, detect_newline(sample))


def decode_text(data: bytes) -> tuple[str, TextFormat]:
    """Whole-file text with CRLF turned into LF when the file is pure CRLF, plus its format."""
    encoding, bom = detect_bom(data)
    fmt = TextFormat(encoding, bom)
    try:
        text = data[len(bom) :].decode(encoding, errors=fmt.errors)
    except UnicodeDecodeError as exc:
        raise ToolExecutionError(f"The file is not valid {encoding} text ({exc.reason}).") from None
    newline = detect_newline(text)
    if newline == "\r\n":
        text = text.replace("\r\n", "\n")
    return text, TextFormat(encoding, bom, newline)


def read_text(path: Path) -> tuple[str, TextFormat]:
    """Decode a whole text file for editing (see `decode_text`)."""
    return decode_text(path.read_bytes())


def encode_text(text: str, fmt: TextFormat) -> bytes:
    """Bytes for `text` in `fmt`: BOM kept, LF turned into CRLF for CRLF files."""
    if fmt.newline == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    try:
        return fmt.bom + text.encode(fmt.encoding, errors=fmt.errors)
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        raise ToolExecutionError(
            f"The text cannot be stored as {fmt.encoding}: {bad!r} at character {exc.start} is not encodable."
        ) from None


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a final line without a line break still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


@dataclass(frozen=True)
class DiskVersion:
    """Which version of a file is on disk: a change by anyone moves at least one of these."""

    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> DiskVersion:
        return cls(st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


ABSENT: Literal["absent"] = "absent"
Expected = DiskVersion | Literal["absent"] | None  # None: write whatever is there
TEMP_MARK = ".goat-"
STALE_TEMP_AGE_S = 24 * 3600


def write_text_atomic(path: Path, text: str, fmt: TextFormat, *, expected: Expected = None) -> None:
    """Write `text` in `fmt`, atomically, keeping the current file's mode and owner."""
    atomic_write_bytes(path, encode_text(text, fmt), expected=expected)


def atomic_write_bytes(path: Path, data: bytes, *, expected: Expected = None) -> None:
    """Temp file in the same folder, fsync, then rename over `path` (through symlinks).

    With `expected`, the file must still be that version (or still be absent) right before the rename:
    a change made meanwhile by another process is reported as a conflict, never overwritten."""
    target = Path(os.path.realpath(path))
    try:
        previous = target.stat()
    except FileNotFoundError:
        previous = None
    remove_stale_temps(target)
    temp = target.with_name(f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        # 0o666 lets the umask decide a new file's mode; an existing file's mode is copied below.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if previous is None else 0o600)
        try:
            _write_all(fd, data)
            if previous is not None:
                _copy_ownership(fd, previous)
            os.fsync(fd)
        finally:
            os.close(fd)
        _put_in_place(temp, target, expected)
    finally:
        temp.unlink(missing_ok=True)  # interrupted or refused: never leave the temp file behind


def _put_in_place(temp: Path, target: Path, expected: Expected) -> None:
    if expected == ABSENT:
        _create_exclusive(temp, target)
        return
    if expected is not None:
        _check_version(target, expected)
    os.replace(temp, target)


def _create_exclusive(temp: Path, target: Path) -> None:
    """A hard link fails when the name exists: no file someone created meanwhile is replaced."""
    try:
        os.link(temp, target)
    except FileExistsError:
        raise _changed_meanwhile(target) from None
    except OSError:  # filesystems without hard links: check, then rename (a small window remains)
        if os.path.lexists(target):
            raise _changed_meanwhile(target) from None
        os.replace(temp, target)


def _check_version(target: Path, expected: DiskVersion) -> None:
    try:
        current = DiskVersion.of(target.stat())
    except (FileNotFoundError, NotADirectoryError):
        current = None
    if current != expected:
        raise _changed_meanwhile(target)


def _changed_meanwhile(target: Path) -> ConflictError:
    return ConflictError(
        f"{target} was changed by another process while this change was being made, so it was not written "
        "(the other change is kept). Read the file again and redo the change."
    )


def remove_stale_temps(target: Path) -> None:
    """Delete temp files that an interrupted write to `target` left behind (their process is gone)."""
    prefix = f".{target.name}{TEMP_MARK}"
    try:
        with os.scandir(target.parent) as entries:
            leftovers = [e.path for e in entries if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    except OSError:
        return
    for leftover in leftovers:
        if _is_stale(leftover, leftover[len(str(target.parent)) + 1 + len(prefix) :]):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def _is_stale(path: str, rest: str) -> bool:
    pid_text = rest.split("-", 1)[0]
    if pid_text.isdigit() and int(pid_text) != os.getpid() and not _process_alive(int(pid_text)):
        return True
    try:
        return time.time() - os.lstat(path).st_mtime > STALE_TEMP_AGE_S
    except OSError:
        return False


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def read_versioned(path: Path) -> tuple[bytes, os.stat_result]:
    """The whole file and the stat of the very inode it was read from."""
    with path.open("rb") as handle:
        st = os.fstat(handle.fileno())
        return handle.read(), st


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_ownership(fd: int, previous: os.stat_result) -> None:
    os.fchmod(fd, stat.S_IMODE(previous.st_mode))
    if (previous.st_uid, previous.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(PermissionError):  # only root may give a file away
            os.fchown(fd, previous.st_uid, previous.st_gid)
