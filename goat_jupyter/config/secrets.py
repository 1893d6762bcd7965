"""The values of the provider keys goat knows, and the redaction that keeps them out of what the
model and the notebook see.

Known: the key store (`~/.goat/keys.json`) and the environment variables whose names say they hold a
secret (`*_API_KEY`, `*_TOKEN`, `*_KEY`, `*SECRET*`, `*PASSWORD*`, ...), values over 8 characters
(shorter ones would wreck ordinary output). Only exact values (and their JSON-escaped spelling) are
found: a key that was base64-encoded, cut, split over lines or otherwise transformed is not."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goat_jupyter.config.keys import key_store_path, read_keys, store_stamp

MIN_SECRET_CHARS = 9
_SECRET_NAME = re.compile(r"SECRET|PASSWORD|PASSWD|(?:^|_)(?:API_?KEY|KEY|TOKEN)(?:_|$)", re.IGNORECASE)
_NOT_A_SECRET = re.compile(r"_(?:FILE|PATH|DIR|URL|BASE|VERSION|REGION|TYPE)$", re.IGNORECASE)


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """A variable whose value is a credential by its name (OPENAI_API_KEY, HF_TOKEN, AWS_SECRET_...)."""
    return bool(_SECRET_NAME.search(name)) and not _NOT_A_SECRET.search(name)


def marker(name: str) -> str:
    return f"[redacted: {name}]"


@dataclass(frozen=True)
class Secrets:
    """A fixed set of secret values with their names; redacts text in one pass when any is present."""

    names: dict[str, str] = field(default_factory=lambda: dict[str, str]())  # value -> variable name
    firsts: frozenset[str] = frozenset()  # first characters of the values (where a split one may start)
    beginnings: frozenset[str] = frozenset()  # every proper beginning of a value
    longest: int = 0

    @classmethod
    def of(cls, named: Mapping[str, str]) -> Secrets:
        """From name -> value; a value under several names is shown with the first name."""
        names: dict[str, str] = {}
        for name, value in sorted(named.items()):
            if len(value) < MIN_SECRET_CHARS:
                continue
            for spelling in (value, json.dumps(value)[1:-1]):  # the session file holds JSON text
                names.setdefault(spelling, name)
        if not names:
            return cls()
        beginnings = frozenset(value[:end] for value in names for end in range(1, len(value)))
        return cls(names, frozenset(v[0] for v in names), beginnings, max(map(len, names)))

    def _present(self, text: str) -> re.Pattern[str] | None:
        """A matcher for the values that occur in `text` (a substring test per value is the fastest
        scan CPython has; a regex alternation of all values would try each at every position)."""
        present = tuple(value for value in self.names if value in text)
        return _alternation(present) if present else None

    def redact(self, text: str) -> str:
        """`text` with every known value replaced by `[redacted: NAME]`."""
        pattern = self._present(text) if self.names else None
        if pattern is None:
            return text
        return pattern.sub(lambda found: marker(self.names[found.group()]), text)

    def let_out(self, text: str) -> tuple[str, str]:
        """(`text` redacted up to where a value may still be arriving, the raw rest to hold back).

        Letting pieces out this way gives exactly what redacting the whole text at once gives."""
        hold = self._partial_start(text)
        pattern = self._present(text) if self.names else None
        if pattern is None:
            return text[:hold], text[hold:]
        parts: list[str] = []
        done = 0
        for found in pattern.finditer(text):
            if found.end() > hold:  # may grow into a longer value, or is cut by the held rest
                hold = min(hold, found.start())
                break
            parts += [text[done : found.start()], marker(self.names[found.group()])]
            done = found.end()
        parts.append(text[done:hold])
        return "".join(parts), text[hold:]

    def _partial_start(self, text: str) -> int:
        """The first index whose rest is a proper beginning of some value (len(text): none)."""
        best = len(text)
        for first in self.firsts:  # str.find per first character: no Python loop over the text
            index = text.find(first, max(0, len(text) - self.longest + 1))
            while -1 < index < best:
                if text[index:] in self.beginnings:
                    best = index
                    break
                index = text.find(first, index + 1)
        return best


@functools.lru_cache(maxsize=64)
def _alternation(values: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for these values, the longest first so a value inside another loses."""
    return re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))


_NONE = Secrets()
_cache: tuple[object, Secrets] = ((), _NONE)


@functools.lru_cache(maxsize=8)
def _store_path(goat_home: str | None, home: str | None) -> Path:
    """The key store's path for these variables (computing it costs more than the rest of a check)."""
    return key_store_path()


def known_secrets(environ: Mapping[str, str] | None = None) -> Secrets:
    """The secrets as they are now; rebuilt only when the environment's secret variables or the key
    store change (a key saved in the panel, `%goat config reload`, a variable set in a cell)."""
    global _cache
    env = os.environ if environ is None else environ
    from_env = tuple(
        (k, env[k]) for k in [k for k in env if is_secret_name(k)] if len(env[k]) >= MIN_SECRET_CHARS
    )
    store = _store_path(os.environ.get("GOAT_HOME"), os.environ.get("HOME"))
    fingerprint = (from_env, store_stamp(store))
    if _cache[0] == fingerprint:
        return _cache[1]
    stored = {k: v for k, v in read_keys(store).items() if is_secret_name(k)}
    secrets = Secrets.of({**stored, **dict(from_env)})
    _cache = (fingerprint, secrets)
    return secrets


def redact(text: str) -> str:
    """`text` without the value of any key goat knows."""
    return known_secrets().redact(text)


class StreamRedactor:
    """Redacts a text that arrives in pieces (streamed output, model text): a value split across two
    pieces is still found, because the end of a piece that may begin one waits for the next piece.
    The secrets are taken when the stream starts (a model turn, a tool call): checking them per piece
    would cost more than the redaction."""

    def __init__(self, secrets: Secrets | None = None) -> None:
        self._secrets = secrets if secrets is not None else known_secrets()
        self._held = ""

    def feed(self, piece: str) -> str:
        shown, self._held = self._secrets.let_out(self._held + piece)
        return shown

    def flush(self) -> str:
        """What is still held back (the stream ended)."""
        text, self._held = self._held, ""
        return self._secrets.redact(text)
