"""Edit and Write cases rewritten from peers' public tool tests and Claude Code's documented behaviour.

Each test names its source case. Sources: opencode packages/opencode/test/tool/edit.test.ts (the
`replace()` cases and the "line endings" block), gemini-cli packages/core/src/tools/edit.test.ts,
write-file.test.ts, line-endings.test.ts and omissionPlaceholderDetector.test.ts, and Claude Code's
tool documentation (Read before Write, curly quotes, deleted lines). Our own words and code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goat_jupyter.tools import Registry, ToolOutput, default_registry
from tests.peer_cases.helpers import error_code


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return default_registry(cwd=tmp_path)


async def prepared(registry: Registry, path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode())
    await registry.call("Read", {"file_path": str(path)})
    return path


async def edit(registry: Registry, path: Path, old: str, new: str, **extra: object) -> ToolOutput:
    return await registry.call(
        "Edit", {"file_path": str(path), "old_string": old, "new_string": new, **extra}
    )


# --- line endings -----------------------------------------------------------------------------


# opencode edit.test.ts "line endings": CRLF in new_string on an LF file must not mix styles.
async def test_crlf_new_string_on_an_lf_file_stays_lf(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "lf.txt", "alpha\nbeta\ngamma\n")
    out = await edit(registry, target, "beta", "beta-updated\r\nextra")
    assert not out.is_error
    assert target.read_bytes() == b"alpha\nbeta-updated\nextra\ngamma\n"


# opencode edit.test.ts "line endings": a CRLF old_string still finds the LF text.
async def test_crlf_old_string_matches_an_lf_file(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "lf.txt", "alpha\nbeta\ngamma\n")
    out = await edit(registry, target, "alpha\r\nbeta\r\n", "alpha\r\nomega\r\n")
    assert not out.is_error and out.metadata["match"] == "exact"
    assert target.read_bytes() == b"alpha\nomega\ngamma\n"


# gemini-cli line-endings.test.ts "preserves CRLF": LF strings on a CRLF file keep CRLF everywhere.
@pytest.mark.parametrize("style", ["\n", "\r\n"])
async def test_crlf_file_keeps_crlf_whatever_the_strings_use(
    registry: Registry, tmp_path: Path, style: str
) -> None:
    target = await prepared(registry, tmp_path / "win.txt", b"one\r\ntwo\r\nthree\r\n")
    out = await edit(registry, target, f"one{style}two", f"one{style}2{style}2b")
    assert not out.is_error
    assert target.read_bytes() == b"one\r\n2\r\n2b\r\nthree\r\n"


# --- tolerant matching ------------------------------------------------------------------------


# opencode replace() "LineTrimmedReplacer": trailing spaces the model left out.
async def test_trailing_whitespace_near_miss_is_tolerated(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "t.py", "def f():   \n    return 1  \n")
    out = await edit(registry, target, "def f():\n    return 1", "def f():\n    return 2")
    assert not out.is_error
    assert target.read_text() == "def f():\n    return 2\n"
    assert "fallback" in out.content and "trailing whitespace" in out.content


# gemini-cli edit.test.ts "flexible match ignoring indentation, new text re-indented".
async def test_indentation_near_miss_is_reindented_to_the_file(registry: Registry, tmp_path: Path) -> None:
    source = "class A:\n    def run(self):\n        if ok:\n            go()\n        return 1\n"
    target = await prepared(registry, tmp_path / "a.py", source)
    out = await edit(registry, target, "if ok:\n    go()", "if ok:\n    go()\n    done()")
    assert not out.is_error, out.content
    expected = "class A:\n    def run(self):\n        if ok:\n            go()\n            done()\n        return 1\n"
    assert target.read_text() == expected
    assert "indentation-flexible" in out.content and "+            done()" in out.content  # the diff is shown


# opencode replace() "WhitespaceNormalizedReplacer": inner runs of spaces differ.
async def test_inner_whitespace_near_miss_is_tolerated(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "w.js", "const total =   a +  b;\nexport default total;\n")
    out = await edit(registry, target, "const total = a + b;", "const total = a - b;")
    assert not out.is_error
    assert target.read_text() == "const total = a - b;\nexport default total;\n"
    assert "whitespace-normalised" in out.content


# Claude Code docs: Edit matches curly quotes to straight ones and keeps the file's quote style.
async def test_curly_quotes_in_the_file_match_straight_quotes(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "q.md", "He said \u201chello\u201d and left.\n")
    out = await edit(registry, target, 'said "hello"', 'said "goodbye"')
    assert not out.is_error
    assert target.read_text() == "He said \u201cgoodbye\u201d and left.\n"
    assert "quotes" in out.metadata["match"]


# opencode replace() "fails when multiple fuzzy candidates match": ambiguity is never guessed.
async def test_near_miss_with_two_candidates_is_refused(registry: Registry, tmp_path: Path) -> None:
    source = "def a():\n    x = 1\n\ndef b():\n    x = 1\n"
    target = await prepared(registry, tmp_path / "two.py", source)
    out = await edit(registry, target, "x = 1  ", "x = 2")  # trailing spaces: no exact match
    assert error_code(out) == "INVALID_INPUT" and "2 times" in out.content and "lines 2, 5" in out.content
    assert target.read_text() == source


# opencode replace() "replaceAll with fuzzy match": every candidate, when asked for all.
async def test_near_miss_with_replace_all_changes_every_candidate(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "two.py", "def a():\n    x = 1\n\ndef b():\n    x = 1\n")
    out = await edit(registry, target, "x = 1  ", "x = 2", replace_all=True)
    assert not out.is_error
    assert target.read_text() == "def a():\n    x = 2\n\ndef b():\n    x = 2\n"


# gemini-cli edit.test.ts "exact match ambiguity is an error even when a fallback would be unique".
async def test_exact_ambiguity_is_never_resolved_by_a_fallback(registry: Registry, tmp_path: Path) -> None:
    source = "v = 1\nv = 1\n"
    target = await prepared(registry, tmp_path / "v.py", source)
    out = await edit(registry, target, "v = 1", "v = 2")
    assert error_code(out) == "INVALID_INPUT" and "2 times" in out.content
    assert target.read_text() == source


# opencode replace() "no match at all": different words are not a near miss.
async def test_different_words_are_still_not_found(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "n.py", "value = compute(a, b)\n")
    out = await edit(registry, target, "value = compute(a, c)", "value = 0")
    assert error_code(out) == "INVALID_INPUT" and "not found" in out.content
    assert target.read_text() == "value = compute(a, b)\n"


# Claude Code docs: deleting a whole line with an empty new_string removes its line break too.
async def test_deleting_a_whole_line_removes_its_newline(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "d.py", "import os\nimport sys\nprint(1)\n")
    out = await edit(registry, target, "import sys", "")
    assert not out.is_error
    assert target.read_text() == "import os\nprint(1)\n"


async def test_deleting_part_of_a_line_keeps_the_line(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "d.py", "x = 1  # note\ny = 2\n")
    out = await edit(registry, target, "  # note", "")
    assert not out.is_error
    assert target.read_text() == "x = 1\ny = 2\n"


# --- read before write ------------------------------------------------------------------------


# Claude Code docs (Write: "you must Read the file first") and issue 16: a partial Read is not enough
# to overwrite the whole file; the error names the lines never shown.
async def test_partial_read_then_write_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "fifty.txt"
    original = "".join(f"row {i}\n" for i in range(1, 51))
    target.write_text(original)
    await registry.call("Read", {"file_path": str(target), "limit": 5})
    out = await registry.call("Write", {"file_path": str(target), "content": "short\n"})
    assert error_code(out) == "CONFLICT" and "6-50" in out.content
    assert target.read_text() == original
    edited = await edit(registry, target, "row 3\n", "row three\n")  # inside what was seen: allowed
    assert not edited.is_error


# Adversarial variant of the case above: an Edit inside the part seen must not unlock a whole Write.
async def test_an_edit_after_a_partial_read_does_not_unlock_a_whole_write(
    registry: Registry, tmp_path: Path
) -> None:
    target = tmp_path / "fifty.txt"
    target.write_text("".join(f"row {i}\n" for i in range(1, 51)))
    await registry.call("Read", {"file_path": str(target), "limit": 5})
    assert not (await edit(registry, target, "row 3\n", "row 3\nrow 3a\nrow 3b\n")).is_error
    out = await registry.call("Write", {"file_path": str(target), "content": "short\n"})
    assert error_code(out) == "CONFLICT" and "lines 8-52 of 52" in out.content
    assert not (await edit(registry, target, "row 1\n", "")).is_error  # a deleted line shifts the rest up
    out = await registry.call("Write", {"file_path": str(target), "content": "short\n"})
    assert error_code(out) == "CONFLICT" and "lines 7-51 of 51" in out.content
    await registry.call("Read", {"file_path": str(target), "offset": 7})
    out = await registry.call("Write", {"file_path": str(target), "content": "short\n"})
    assert not out.is_error


# Issue 16: "a partial Read allows Edits inside what was seen". An exact old_string anywhere proves
# the model knows the text; a near miss is trusted only inside the lines it read.
async def test_near_miss_outside_the_lines_read_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "long.py"
    original = "".join(f"value_{i} = {i}\n" for i in range(1, 41))
    target.write_text(original)
    await registry.call("Read", {"file_path": str(target), "limit": 10})
    out = await edit(registry, target, "value_30 = 30   ", "value_30 = 0")  # trailing spaces: a near miss
    assert error_code(out) == "CONFLICT" and "30" in out.content and "offset=30" in out.content
    assert target.read_text() == original
    inside = await edit(registry, target, "value_5 = 5   ", "value_5 = 0")
    assert not inside.is_error
    exact = await edit(registry, target, "value_30 = 30\n", "value_30 = 0\n")
    assert not exact.is_error


async def test_reading_the_rest_allows_the_write(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "fifty.txt"
    target.write_text("".join(f"row {i}\n" for i in range(1, 51)))
    await registry.call("Read", {"file_path": str(target), "limit": 5})
    await registry.call("Read", {"file_path": str(target), "offset": 30})
    out = await registry.call("Write", {"file_path": str(target), "content": "short\n"})
    assert error_code(out) == "CONFLICT" and "6-29" in out.content
    await registry.call("Read", {"file_path": str(target), "offset": 6, "limit": 24})
    out = await registry.call("Write", {"file_path": str(target), "content": "short\n"})
    assert not out.is_error and target.read_text() == "short\n"


async def test_partial_reads_of_different_contents_do_not_add_up(registry: Registry, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("a\nb\nc\nd\n")
    await registry.call("Read", {"file_path": str(target), "limit": 2})
    target.write_text("a\nb\nC\nD\n")  # changed by the user between the two reads
    await registry.call("Read", {"file_path": str(target), "offset": 3})
    out = await registry.call("Write", {"file_path": str(target), "content": "new\n"})
    assert error_code(out) == "CONFLICT" and "1-2" in out.content


# gemini-cli write-file.test.ts "rejects a directory path": a trailing slash names a folder.
@pytest.mark.parametrize("suffix", ["newdir/", "newdir/."])
async def test_write_to_a_path_ending_in_a_slash_is_an_error(
    registry: Registry, tmp_path: Path, suffix: str
) -> None:
    out = await registry.call("Write", {"file_path": str(tmp_path / "x") + "/" + suffix, "content": "data"})
    assert error_code(out) == "INVALID_PATH" and "folder" in out.content
    assert list(tmp_path.iterdir()) == []
    created = await edit(registry, tmp_path / "y", "", "data")  # Edit's create path: same rule
    assert not created.is_error
    out = await registry.call("Edit", {"file_path": f"{tmp_path}/z/", "old_string": "", "new_string": "d"})
    assert error_code(out) == "INVALID_PATH" and not (tmp_path / "z").exists()


# --- omission placeholders --------------------------------------------------------------------

CLASS = "class Store:\n    def get(self, key):\n        return self.data[key]\n\n    def put(self, key, value):\n        self.data[key] = value\n"


# gemini-cli omissionPlaceholderDetector.test.ts "detects standalone placeholder lines" (//, #, --, /* */).
@pytest.mark.parametrize(
    "placeholder",
    [
        "    # ... rest of methods ...",
        "    // existing code here",
        "    /* rest of code ... */",
        "    -- unchanged code ...",
        "    # ...",
        "    (rest of methods ...)",
    ],
)
async def test_write_replacing_code_with_a_placeholder_is_refused(
    registry: Registry, tmp_path: Path, placeholder: str
) -> None:
    target = await prepared(registry, tmp_path / "store.py", CLASS)
    lazy = f"class Store:\n    def get(self, key):\n        return self.data.get(key)\n\n{placeholder}\n"
    out = await registry.call("Write", {"file_path": str(target), "content": lazy})
    assert error_code(out) == "INVALID_INPUT" and "placeholder" in out.content and "complete" in out.content
    assert target.read_text() == CLASS


# Other spellings of the same omission: HTML comments, a Unicode ellipsis, capitals, a bare phrase.
@pytest.mark.parametrize(
    ("name", "placeholder"),
    [
        ("page.html", "  <!-- ... rest of the page ... -->"),
        ("store.py", "    # \u2026 rest of code \u2026"),
        ("store.py", "    # REST OF METHODS ..."),
        ("store.py", "    # rest of the class"),
        ("store.ts", "    // ...existing code..."),
        ("store.py", "    # Remaining methods unchanged ..."),
    ],
)
async def test_other_spellings_of_a_placeholder_are_refused(
    registry: Registry, tmp_path: Path, name: str, placeholder: str
) -> None:
    target = await prepared(registry, tmp_path / name, CLASS)
    out = await registry.call(
        "Write", {"file_path": str(target), "content": "class Store:\n" + placeholder + "\n"}
    )
    assert error_code(out) == "INVALID_INPUT", out.content
    assert target.read_text() == CLASS


async def test_edit_replacing_code_with_a_placeholder_is_refused(registry: Registry, tmp_path: Path) -> None:
    target = await prepared(registry, tmp_path / "store.py", CLASS)
    old = "    def put(self, key, value):\n        self.data[key] = value\n"
    out = await edit(registry, target, old, "    # ... existing code ...\n")
    assert error_code(out) == "INVALID_INPUT" and "placeholder" in out.content
    assert target.read_text() == CLASS


# gemini-cli omissionPlaceholderDetector.test.ts "does not detect placeholders embedded in normal code",
# "inline in a comment", "unrelated ellipsis text"; plus string literals spanning lines.
@pytest.mark.parametrize(
    "line",
    [
        'NOTE = "(rest of methods ...)"',
        "return value  # rest of methods ...",
        'message = "loading..."',
        "# Keep the existing code paths working for older Python releases",
        "# Loading...",
        'HELP = """\n# ... rest of code ...\n"""',
        "TEMPLATE = `\n// existing code here\n`",
    ],
)
async def test_legitimate_lines_are_not_placeholders(registry: Registry, tmp_path: Path, line: str) -> None:
    target = await prepared(registry, tmp_path / "m.py", CLASS)
    out = await registry.call("Write", {"file_path": str(target), "content": CLASS + line + "\n"})
    assert not out.is_error, out.content


async def test_placeholders_are_fine_where_no_code_is_replaced(registry: Registry, tmp_path: Path) -> None:
    skeleton = "def todo():\n    # ... rest of code ...\n    pass\n"
    created = await registry.call("Write", {"file_path": str(tmp_path / "new.py"), "content": skeleton})
    assert not created.is_error  # a new file replaces nothing
    kept = await registry.call(
        "Write", {"file_path": str(tmp_path / "new.py"), "content": skeleton + "x = 1\n"}
    )
    assert not kept.is_error  # the placeholder was already there
    docs = await prepared(registry, tmp_path / "README.md", "# Usage\n")
    out = await registry.call(
        "Write", {"file_path": str(docs), "content": "```js\n// existing code here\n```\n"}
    )
    assert not out.is_error  # prose files show abbreviated code on purpose


# The approval preview must show what the tolerant Edit will do, not predict a failure.
async def test_the_approval_preview_follows_the_tolerant_match(tmp_path: Path) -> None:
    from goat_jupyter.ui.preview import preview_html

    (tmp_path / "p.py").write_text("def f():\n        return 1\n")
    args = {
        "file_path": "p.py",
        "old_string": "def f():\n    return 1",
        "new_string": "def f():\n    return 2",
    }
    html = await preview_html("Edit", args, tmp_path)
    assert "+        return 2" in html and "will fail" not in html
    ambiguous = await preview_html(
        "Edit", {"file_path": "p.py", "old_string": "zzz", "new_string": "y"}, tmp_path
    )
    assert "was not found" in ambiguous and "will fail" in ambiguous


# opencode replace() "LineTrimmedReplacer" with nested blocks: the relative indentation the model got
# wrong is mapped line by line to the file's (4 spaces in old_string are 8 in the file, 8 are 12).
async def test_line_trimmed_match_maps_each_indentation_level(registry: Registry, tmp_path: Path) -> None:
    source = "def f(items):\n        for item in items:\n            use(item)\n        return 1\n"
    target = await prepared(registry, tmp_path / "nested.py", source)
    old = "def f(items):\n    for item in items:\n        use(item)"
    new = "def f(items):\n    for item in items:\n        use(item)\n        log(item)\n    done()"
    out = await edit(registry, target, old, new)
    assert not out.is_error and "line-trimmed" in out.content
    expected = "def f(items):\n        for item in items:\n            use(item)\n            log(item)\n        done()\n        return 1\n"
    assert target.read_text() == expected


# A long old_string that matches nowhere in a big file must fail fast, not scan block by block
# (a hang guard, not a timing assertion: the old block scan took minutes here).
@pytest.mark.timeout(30)
async def test_a_long_miss_on_a_big_file_fails_fast(registry: Registry, tmp_path: Path) -> None:
    source = "".join(f"    value_{i:06d} = compute({i}, {i % 7})\n" for i in range(60_000))
    target = await prepared(registry, tmp_path / "big.py", source)
    old = "".join(f"value_{i:06d} = compute({i}, 9)\n" for i in range(1_000))
    out = await edit(registry, target, old, "x = 1\n")
    assert error_code(out) == "INVALID_INPUT" and "not found" in out.content


@pytest.mark.timeout(60)
async def test_replace_all_with_many_matches_stays_linear(registry: Registry, tmp_path: Path) -> None:
    source = "".join(f"value_{i} = {i}\n" for i in range(40_000))
    target = await prepared(registry, tmp_path / "many.py", source)
    out = await edit(registry, target, "value_", "v_", replace_all=True)
    assert not out.is_error and out.metadata["replacements"] == 40_000
    assert target.read_text() == source.replace("value_", "v_")
