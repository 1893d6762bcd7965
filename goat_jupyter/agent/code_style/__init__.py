"""Code style (issue 34): the model acts by writing fenced python and bash blocks, run as the notebook
cells and Bash calls they stand for (blocks.py: which blocks run; runs.py: running them; look.py: what
the model is shown before it writes any)."""

from goat_jupyter.agent.code_style.blocks import (
    CodeBlock,
    action_style_for,
    code_blocks,
    held_back,
    up_to_last_block,
)
from goat_jupyter.agent.code_style.look import first_look
from goat_jupyter.agent.code_style.runs import (
    FIX_NOTE,
    FIX_NOTES,
    FIXABLE,
    NO_NOTEBOOK,
    CodeResults,
    CodeRunner,
    bounded_error,
)

__all__ = [
    "FIXABLE",
    "FIX_NOTE",
    "FIX_NOTES",
    "NO_NOTEBOOK",
    "CodeBlock",
    "CodeResults",
    "CodeRunner",
    "action_style_for",
    "bounded_error",
    "code_blocks",
    "first_look",
    "held_back",
    "up_to_last_block",
]
