"""Code style (issue 34): the model acts by writing fenced python and bash blocks, run as the notebook
cells and Bash calls they stand for (blocks.py: which blocks run; runs.py: running them)."""

from goat_jupyter.agent.code_style.blocks import (
    CodeBlock,
    action_style_for,
    code_blocks,
    held_back,
    up_to_last_block,
)
from goat_jupyter.agent.code_style.runs import NO_NOTEBOOK, CodeResults, CodeRunner, bounded_error

__all__ = [
    "NO_NOTEBOOK",
    "CodeBlock",
    "CodeResults",
    "CodeRunner",
    "action_style_for",
    "bounded_error",
    "code_blocks",
    "held_back",
    "up_to_last_block",
]
