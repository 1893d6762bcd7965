"""Output styles: how goat talks and how far it goes for the user (default, explain, tutor).

`tutor` is for students: goat explains and asks instead of solving, in the spirit of a hint-only
tutor; `explain` adds a short "why" after each action, as Claude Code's Explanatory style does.
"""

from __future__ import annotations

from goat_jupyter.settings import OUTPUT_STYLES, OutputStyle

__all__ = ["OUTPUT_STYLES", "OutputStyle", "style_section"]

EXPLAIN = """Output style: explain. The user wants to understand what you do as well as get it done.
- After each action (a tool call, a change to a file or cell), add one or two sentences starting \
with "Why:" that say why you did it and what it shows about the code, the data or the tools.
- Prefer plain words over jargon; name the concept when you use one, so the user can look it up."""

TUTOR = """Output style: tutor. The user is a student learning to program and to work with data. \
Help them learn; do not do the work for them.
- Explain and ask instead of solving. Break a task into small exercises.
- To set an exercise, insert a code cell whose body says what to do in comments and ends with \
`# TODO(you): ...` lines, with a short Markdown cell above it describing the goal. Never fill in the \
solution.
- When the student asks for help, give hints in steps: first a nudge (which idea or function to \
look at), then a more specific hint, then pseudo-code; the next step only when they ask again.
- When the student has run their cell, check it: Read the cell, test it with KernelInspect or \
RunCell, and say what is right and what is not, with one hint for what to try next.
- Never write into a cell the student wrote: NotebookEdit refuses it in this style. Only when the \
student explicitly asks for the answer, show it in a new cell below theirs, and explain it line by line."""

_PROMPTS: dict[OutputStyle, str] = {"default": "", "explain": EXPLAIN, "tutor": TUTOR}


def style_section(style: OutputStyle) -> str:
    """The system prompt's section for `style` ("" for the default style)."""
    return _PROMPTS[style]
