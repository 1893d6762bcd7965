"""goat's summary offered to the notebook as `text/llm+plain` on outputs (an IPython formatter), so
other agents reading the saved notebook get it too.

Only where it adds to what the output already says without bloating it: objects with their own
`_repr_llm_`, and objects with a registered summariser that are not plain Python values (a dict's
text/plain already is its structure), when the summary is at most OFFER_MAX_CHARS. Measured on a
5,000 x 30 DataFrame (benchmarks/bench_llm_repr.py): the output grows by 27% (2.8 KB on its
10.3 KB of text/html and text/plain); in exchange a reader gets per-column statistics, not 10 rows.
"""

from __future__ import annotations

from typing import Any

from IPython.core.formatters import BaseFormatter, catch_format_error
from traitlets import ObjectName, Unicode

from goat_jupyter.represent import LLM_MIME, find, represent

OFFER_MAX_CHARS = 4_000


class LLMFormatter(BaseFormatter):
    """`text/llm+plain`: the object's `_repr_llm_()`, else goat's summary where one fits."""

    format_type = Unicode(LLM_MIME)
    print_method = ObjectName("_repr_llm_")

    @catch_format_error
    def __call__(self, obj: Any) -> Any:
        own = super().__call__(obj)
        if own is not None or not self.enabled or not offered(obj):
            return own
        text = represent(obj)
        return text if len(text) <= OFFER_MAX_CHARS else None


def offered(obj: object) -> bool:
    return type(obj).__module__ != "builtins" and not isinstance(obj, BaseException) and find(obj) is not None


def install(ip: Any) -> None:
    formatter = ip.display_formatter
    if LLM_MIME not in formatter.formatters:
        formatter.formatters[LLM_MIME] = LLMFormatter(parent=formatter)


def uninstall(ip: Any) -> None:
    ip.display_formatter.formatters.pop(LLM_MIME, None)
