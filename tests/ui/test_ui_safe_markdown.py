"""The model's Markdown through goat's escaping and then JupyterLab 4.6's own renderer (marked, run in
node from the labextension's node_modules): no element or attribute outside a small allow-list."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jupyterlab
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goat_jupyter.ui.safe.markdown import NO_MATH_CLASS, NO_MATH_OPEN, ZWSP, StreamedMarkdown, safe_markdown

REPO = Path(__file__).resolve().parents[2]
LABEXTENSION = REPO / "labextension"
SCRIPT = Path(__file__).with_name("marked_render.mjs")

# What goat's Markdown may become: elements, and the attributes each may carry.
ALLOWED: dict[str, frozenset[str]] = {
    **{
        tag: frozenset()
        for tag in [
            "p",
            "em",
            "strong",
            "ul",
            "li",
            "blockquote",
            "hr",
            "br",
            "table",
            "thead",
            "tbody",
            "tr",
            "del",
        ]
    },
    **{f"h{level}": frozenset({"id"}) for level in range(1, 7)},
    "pre": frozenset(),
    "code": frozenset({"class"}),
    "a": frozenset({"href", "title"}),
    "ol": frozenset({"start"}),
    "th": frozenset({"align"}),
    "td": frozenset({"align"}),
    "input": frozenset({"type", "disabled", "checked"}),  # GFM task lists: a disabled checkbox
}
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


@dataclass(frozen=True)
class Element:
    tag: str
    attrs: dict[str, str]
    outside: bool  # outside goat's mathjax_ignore block (MathJax would read it)


class Marked:
    """One node process for the whole module: a Markdown string in, the elements it renders to out."""

    def __init__(self) -> None:
        if not (LABEXTENSION / "node_modules" / "marked").is_dir():
            pytest.fail(
                f"{LABEXTENSION}/node_modules has no marked: build the labextension first "
                "(bash scripts/build-labextension; .ci/run does it through pip install)"
            )
        node = shutil.which("node")
        assert node is not None, "node is needed to run JupyterLab's Markdown renderer"
        self.process = subprocess.Popen(
            [node, str(SCRIPT), str(LABEXTENSION)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.versions = cast(dict[str, str], self._read()["versions"])

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the node renderer stopped"
        return cast(dict[str, Any], json.loads(line))

    def render(self, markdown: str) -> tuple[str, list[Element]]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(markdown) + "\n")
        self.process.stdin.flush()
        reply = self._read()
        elements = [Element(e["tag"], e["attrs"], e["outside"]) for e in reply["elements"]]
        return cast(str, reply["html"]), elements

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def marked() -> Iterator[Marked]:
    renderer = Marked()
    yield renderer
    renderer.close()


def scheme_of(url: str) -> str | None:
    """The URL's scheme as a browser reads it: leading controls and spaces stripped, tabs and newlines gone."""
    cleaned = re.sub(r"[\t\n\r]", "", url.lstrip("".join(map(chr, range(0x21)))))
    match = _SCHEME.match(cleaned)
    return match.group(1).lower() if match else None


def violations(elements: list[Element]) -> list[str]:
    found: list[str] = []
    wrapper, *rest = elements or [Element("#none", {}, True)]
    if wrapper.tag != "div" or wrapper.attrs != {"class": NO_MATH_CLASS}:
        found.append(f"the text does not open with goat's {NO_MATH_CLASS} block: {wrapper}")
    for element in rest:
        if element.outside:
            found.append(f"{element.tag} outside the {NO_MATH_CLASS} block")
        allowed = ALLOWED.get(element.tag)
        if allowed is None:
            found.append(f"element {element.tag} {element.attrs}")
            continue
        found += [f"{element.tag}[{name}]" for name in element.attrs if name not in allowed]
        href = element.attrs.get("href")
        if href is not None and scheme_of(href) not in (None, *SAFE_SCHEMES):
            found.append(f"a[href={href!r}]")
        if element.tag == "code" and not re.fullmatch(r"(language-\S*)?", element.attrs.get("class", "")):
            found.append(f"code[class={element.attrs['class']!r}]")
        if element.tag == "input" and element.attrs.get("type") != "checkbox":
            found.append(f"input {element.attrs}")
    return found


def assert_safe(marked: Marked, text: str) -> str:
    html, elements = marked.render(safe_markdown(text))
    assert violations(elements) == [], (text, html)
    return html


def test_the_renderer_is_the_one_jupyterlab_ships(marked: Marked) -> None:
    lab = ".".join(jupyterlab.__version__.split(".")[:2])
    assert marked.versions["markedparser"].startswith(lab + "."), (marked.versions, jupyterlab.__version__)
    major = marked.versions["markedRange"].lstrip("^~").split(".")[0]
    assert marked.versions["marked"].split(".")[0] == major, marked.versions


def test_the_checker_sees_what_unescaped_markdown_would_do(marked: Marked) -> None:
    """Without goat's escaping the same payloads do render live HTML: the harness can see an attack."""
    _, elements = marked.render(NO_MATH_OPEN + "```x`\n<img src=x onerror=alert(1)>\n[a](JaVaScRiPt:x)")
    found = violations(elements)
    assert any(v.startswith("element img") for v in found) and "a[href='JaVaScRiPt:x']" in found, found


ONERROR = "<img src=x onerror=\"fetch('/api/contents/pwned.txt',{method:'PUT'})\">"
PAYLOADS = {
    "open fence with a backquote in its info string": f"```x`\n{ONERROR}",
    "closed fence with a backquote in its info string": f"```x`\n{ONERROR}\n```",
    "tab-indented fence": f"\t```\n{ONERROR}\n\t```",
    "tab before a fence in a list": f"- a\n\n\t```\n{ONERROR}\n\t```",
    "tilde fence": f"~~~\n{ONERROR}\n~~~",
    "tilde fence with backquotes in its info string": f"~~~ `x`\n{ONERROR}\n~~~",
    "fence that marked closes on ```~": f"```\n```~\n{ONERROR}\n```",
    "fence closed by tildes": f"```\n~~~\n{ONERROR}\n```",
    "unclosed fence in a list": f"- item\n  ```\n{ONERROR}",
    "unclosed fence in a blockquote": f"> ```\n{ONERROR}",
    "fence in a blockquote, lazy line": f"> ```\n> x\n{ONERROR}\n> ```",
    "nested lists and quotes": f"1. a\n   > - b\n   >   ```\n   >   {ONERROR}\n   >   ```",
    "indented code": f"    {ONERROR}",
    "html block": f"<div>\n{ONERROR}\n</div>",
    "script block": "<script>window.__pwned=1</script>",
    "inline html": f"text {ONERROR} text",
    "comment and cdata": "<!-- x --> <![CDATA[ <img src=x onerror=alert(1)> ]]> <?php x ?>",
    "svg": "<svg/onload=alert(1)>",
    "code span lookalike": f"a \\` {ONERROR} `",
    "code span across a blank line": f"p ` one\n\n{ONERROR} two `",
    "backtick runs of other lengths": f"``a`{ONERROR}`",
    "html block swallowing a list before a fence": f"{ONERROR}\n\t```\n- a\n\n  ```\n{ONERROR}\n\n```\n```~\n{ONERROR}\n```",
    "code span over a line break": f"*`\n```{ONERROR}*`",
    "emphasis across a double-backtick span": f"*``\n```x`{ONERROR}*\\`",
    "tilde before a code span": f"a~`{ONERROR}`",
    "bare url before a code span": f"https://x.org/`{ONERROR}`",
    "autolink": "<javascript:alert(1)>",
    "autolink upper case": "<JAVASCRIPT:alert(1)>",
    "data autolink": "<data:text/html,<script>alert(1)</script>>",
    "inline link": "[x](javascript:alert(1))",
    "link with upper-case scheme": "[x](JavaScript:alert(1))",
    "link with tab in its scheme": "[x](java\tscript:alert(1))",
    "link with control characters in its scheme": "[x](\x01java\x0bscript:alert(1))",
    "link with an entity-encoded colon": "[x](javascript&#58;alert(1))",
    "link with a named-entity colon": "[x](javascript&colon;alert(1))",
    "link with entity-encoded letters": "[x](&#106;avascript:alert(1))",
    "link with a backslash-escaped colon": "[x](javascript\\:alert(1))",
    "link in angle brackets": "[x](<javascript:alert(1)>)",
    "link with a leading space": "[x]( javascript:alert(1))",
    "vbscript link": "[x](vbscript:msgbox(1))",
    "data link": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "reference link": "[x][r]\n\n[r]: javascript:alert(1)",
    "reference link with a title holding <": '[x][r]\n\n[r]: javascript:alert(1) "<img src=x onerror=alert(1)>"',
    "link title with <": '[x](https://example.org "<img src=x onerror=alert(1)>")',
    "image": "![x](https://example.org/track.png)",
    "image with a javascript source": "![x](javascript:alert(1))",
    "reference image": "![x][i]\n\n[i]: https://example.org/track.png",
    "math holding html": "$<img src=x onerror=alert(1)>$",
    "math markers": "@@0@@ $a$ @@1@@",
    "table cell": f"| a | b |\n|---|---|\n| {ONERROR} | `<b>` |",
    "heading": f"# {ONERROR}",
    "setext heading": f"{ONERROR}\n===",
    "emphasis around html": f"**{ONERROR}**",
    "entity-encoded tag": "&lt;img src=x onerror=alert(1)&gt; &#60;script&#62;",
    "csi and osc controls": "\x1b]52;c;cHduZWQ=\x07 \x1b[2J <b>x</b>",
}


@pytest.mark.parametrize("text", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_no_payload_renders_html_or_unsafe_links(marked: Marked, text: str) -> None:
    html = assert_safe(marked, text)
    assert "<img" not in html and "<script" not in html and "<svg" not in html


def test_code_keeps_its_angle_brackets_and_dollars(marked: Marked) -> None:
    html = assert_safe(
        marked, "Use `List<int>` here:\n\n```python\nif a < b and cost == '$5':\n    pass\n```\n"
    )
    assert "<code>List&lt;int&gt;</code>" in html
    assert "if a &lt; b and cost == &#39;$5&#39;:" in html


def test_code_in_a_list_item_keeps_its_text(marked: Marked) -> None:
    html = assert_safe(marked, "1. Run:\n\n   ```bash\n   sort < in.txt\n   ```\n")
    assert "sort &lt; in.txt" in html and "&amp;lt;" not in html


def test_text_outside_code_reads_as_written(marked: Marked) -> None:
    html = assert_safe(
        marked, "Costs $0.03 of $0.05 & a < b; see https://example.org or [docs](https://x.org/a:b)"
    )
    assert "$0.03 of $0.05 &amp; a &lt; b" in html
    assert '<a href="https://example.org">' in html and '<a href="https://x.org/a:b">docs</a>' in html


def test_a_non_http_scheme_is_broken_invisibly() -> None:
    assert safe_markdown("[x](javascript:alert(1))") == NO_MATH_OPEN + f"[x](javascript{ZWSP}:alert(1))"
    assert safe_markdown("Note: fine. mailto:a@b.c") == NO_MATH_OPEN + "Note: fine. mailto:a@b.c"


def test_an_image_becomes_a_link() -> None:
    assert safe_markdown("![chart](https://e.org/c.png)") == NO_MATH_OPEN + "\\![chart](https://e.org/c.png)"


def test_dollars_are_escaped_once() -> None:
    assert safe_markdown("$5 and \\$6") == NO_MATH_OPEN + "\\$5 and \\$6"


# A grammar of nasty pieces, line by line: containers and indentation, fences, then inline pieces
# (backtick runs, tags, attributes, links, entities, math).
PREFIXES = [
    "",
    "",
    "> ",
    "- ",
    "  ",
    "   ",
    "\t",
    "1. ",
    "    ",
    "> - ",
    " > ",
    "<img src=x onerror=alert(1)>",
    "<div>",
]
FENCES = ["", "", "", "```", "~~~", "````", "```~", "~~~`", "```x`", "``` py", "~~~ `a`"]
INLINE = [
    "`",
    "``",
    "\\`",
    "\t",
    "  ",
    "| a | b |",
    "|---|---|",
    "#",
    "===",
    "---",
    "<",
    ">",
    "</",
    "<img src=x onerror=alert(1)>",
    "<script>",
    "</script>",
    "<div>",
    "</div>",
    "<a href='javascript:alert(1)'>",
    "<svg/onload=alert(1)>",
    "<!--",
    "-->",
    "<![CDATA[",
    "<?",
    "<b",
    " onerror=",
    '"',
    "'",
    "=",
    "[",
    "]",
    "(",
    ")",
    "![",
    "[x]",
    "[r]: ",
    "[x][r]",
    "](",
    "<javascript:x>",
    "javascript:",
    "JaVaScRiPt:",
    "java\tscript:",
    "vbscript:",
    "data:text/html,",
    "javascript&#58;",
    "&colon;",
    "&#x3C;",
    "&lt;",
    "&",
    "https://example.org",
    "mailto:a@b.c",
    "\\",
    "\\:",
    ":",
    "$",
    "$$",
    "\\\\(",
    "\\begin{x}",
    "@@0@@",
    "*",
    "_",
    "~~",
    "x",
    "word ",
    "\x00",
    "\x1b[1m",
    "\u0085",
]
LINE = st.tuples(
    st.sampled_from(PREFIXES), st.sampled_from(FENCES), st.lists(st.sampled_from(INLINE), max_size=5)
).map(lambda parts: parts[0] + parts[1] + "".join(parts[2]))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, max_size=10).map("\n".join))
def test_random_markdown_renders_only_allowed_elements(marked: Marked, text: str) -> None:
    assert_safe(marked, text)


def test_a_streaming_text_is_parsed_at_most_once_per_pause_and_the_final_text_always() -> None:
    streamed = StreamedMarkdown()
    long = "word `a<b` " * 2000
    first, current = streamed.render(long, final=False)
    assert current and first == safe_markdown(long)
    later, current = streamed.render(long + "more", final=False)  # within the pause after a slow parse
    assert not current and later == first
    final, current = streamed.render(long + "more", final=True)
    assert current and final == safe_markdown(long + "more")
