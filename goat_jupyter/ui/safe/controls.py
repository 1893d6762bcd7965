"""Terminal control characters out of text that goat prints or shows: what arrives is only text."""

from __future__ import annotations

import re

# ESC sequences first (CSI `ESC [ ... final`, OSC/DCS/APC/PM/SOS strings up to BEL or ST, two-byte
# escapes), so their parameters go with them; then every other C0 control but tab and newline, DEL
# and C1 (0x80-0x9f, among them the one-byte CSI and OSC).
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|[\x9b][0-?]*[ -/]*[@-~]?"
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """`text` without escape sequences or control characters, tabs and line breaks kept (CR as LF)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _SEQUENCE.sub("", text))
