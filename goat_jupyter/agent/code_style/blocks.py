"""Code actions (issue 34): in code style a reply's fenced python and bash blocks are the action.

A reply with no tool call whose Markdown holds closed fences labelled python (py, python3, ipython)
or bash (sh, shell) is run, block by block, in order, stopping at the first that fails: a python
block as a new code cell below the `%%goat` cell (NotebookEdit insert, then RunCell, through the
executor: the same rules, locks, modes and approvals as those calls), a bash block as a Bash call.
A fence that names a file after its label (```python sum100.py, ```text notes/todo.md) is a file
block: its content is written to that file (a Write call) and nothing runs, the small model's way to
create or replace a script before running it from a bash block (Aider's whole-file format). So is a
python block whose first line is a comment naming a file the user's prompt names (`# sum100.py`),
the way small models write a file they were asked for.

Blocks that do not run (the rule the README states):
- in plan mode nothing runs (the reply is the plan);
- when the user's prompt says not to run code ("don't run it", "without running", "do not execute");
- a fence with any other label, or none (```text, ```json, output the model quotes), an unclosed
  fence (a reply cut short) and an empty block.
Prose around a block never stops it: "after running this code you will get the result" is the
small model's way of offering an action it should have taken, and it runs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from goat_jupyter.settings import Settings

Language = Literal["python", "bash", "file"]
LABELS: dict[str, Language] = {
    "python": "python",
    "py": "python",
    "python3": "python",
    "ipython": "python",
    "bash": "bash",
    "sh": "bash",
    "shell": "bash",
}
# A file name after the fence's label: a path with an extension or a folder, not an option or a title.
_FILE_NAME = re.compile(
    r"^(?:(?:file|filename|title|path)=)?[\"']?([\w~.][\w.~/-]*(?:\.\w+|/[\w.-]+))[\"']?$"
)
_DONT_RUN = re.compile(r"\b(?:don[’']?t|do\s+not|never|without)\s+(?:run|running|execut\w*)\b", re.IGNORECASE)


@dataclass(frozen=True)
class CodeBlock:
    language: Language
    source: str
    end_line: int = field(default=0, compare=False)  # the line after its closing fence
    path: str = ""  # a file block's file, as the model wrote it


@functools.cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark")


def _closed(token: Token, lines: list[str]) -> bool:
    """CommonMark lets a fence run to the end of the text; a block cut off there is not run."""
    if token.map is None:
        return False
    end = token.map[1]
    if end - token.map[0] < 2 or end > len(lines):
        return False
    closing = lines[end - 1].strip()
    fence = token.markup
    return closing.startswith(fence) and set(closing) == {fence[0]}


def _block(token: Token, lines: list[str]) -> CodeBlock | None:
    if token.type != "fence" or not token.info.strip():
        return None
    label, *rest = token.info.split()
    path = _file_name(rest[0]) if rest else ""
    language: Language | None = "file" if path else LABELS.get(label.lower())
    if language is None or not token.content.strip() or not _closed(token, lines):
        return None
    return CodeBlock(language, token.content.rstrip("\n"), token.map[1] if token.map else 0, path)


def _file_name(word: str) -> str:
    found = _FILE_NAME.match(word)
    return found.group(1) if found else ""


def code_blocks(text: str, prompt: str = "") -> list[CodeBlock]:
    """The runnable blocks of a reply, in order; `prompt`: the user's words, for `# name.py` files."""
    if "```" not in text and "~~~" not in text:
        return []
    lines = text.splitlines()
    found = (_block(token, lines) for token in _markdown().parse(text))
    return [_named_in(block, prompt) for block in found if block is not None]


def _named_in(block: CodeBlock, prompt: str) -> CodeBlock:
    """A python block headed `# sum100.py`, where the prompt asks for sum100.py, is that file."""
    if block.language != "python" or not prompt:
        return block
    first, _, rest = block.source.partition("\n")
    name = _file_name(first.removeprefix("#").strip()) if first.startswith("#") else ""
    if not name or not re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", prompt) or not rest.strip():
        return block
    return CodeBlock("file", block.source, block.end_line, name)


def up_to_last_block(text: str, blocks: list[CodeBlock]) -> str:
    """The reply as the model keeps it: what it wrote after its last block (a small model goes on
    with the output it expects, and the answer it would give) is cut, as a stop sequence would."""
    if not blocks or not blocks[-1].end_line:
        return text
    return "\n".join(text.splitlines()[: blocks[-1].end_line])


def held_back(prompt: str, settings: Settings) -> str | None:
    """Why this run's code blocks are shown and not run; None when they run."""
    if settings.permission_mode == "plan":
        return "plan mode is on, so nothing runs"
    if _DONT_RUN.search(prompt):
        return "the prompt asks not to run code"
    return None


def action_style_for(settings: Settings, profile: str) -> Literal["tools", "code"]:
    """The setting, or for `auto` code in the lean profile (local endpoints, small windows)."""
    if settings.action_style != "auto":
        return settings.action_style
    return "code" if profile == "lean" else "tools"
