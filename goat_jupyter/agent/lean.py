"""The lean profile for small models (issue 23): core tools only, short descriptions, no optional fields
a small model misreads (subagent model names, modes, background flags), and notes it cannot take for
the user's words. Chosen for endpoints on this machine and small windows unless the settings say."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from goat_jupyter.settings import Settings

SMALL_WINDOW = 32_768  # at or below this many tokens, `auto` picks the lean profile

LEAN_PROMPT = """You are goat, an assistant inside a Jupyter notebook. Do what the user asks by calling \
the tools, one step at a time; read before you edit. Use NotebookEdit and RunCell for notebook cells, \
KernelInspect for the user's live variables, Bash for shell commands. When a tool call is denied, do not \
retry it; say so. When the work is done, answer in one or two sentences with the result."""

# Code style (issue 34): the model's code is the action, so the prompt shows one whole turn.
CODE_PROMPT = """You are goat, an assistant inside a Jupyter notebook. You act by writing code, and goat \
runs it:
- a ```python block runs as a new cell in the user's kernel (their variables, such as df, are there);
- a ```bash block runs as a shell command in the workspace (files, scripts, python file.py);
- a block with a file name after its language (```python hello.py) is saved as that file, whole, and \
not run: to change a file, write all of it again.
End your reply right after the block: goat runs it and sends you its output. Then write the next \
block, or, once the output holds the result, answer in one or two sentences with no code block. Never \
write or guess an output yourself. If a block fails, read the error and fix the code. To show code \
without running it, use a ```text block.

Example: asked "What is the mean of the price column of df?", reply only
```python
print(df["price"].mean())
```
goat sends back the output, e.g. 12.5, and you answer: The mean price is 12.5."""


@dataclass(frozen=True)
class LeanTool:
    description: str
    keep: tuple[str, ...]  # the properties offered, in order; every other property is left out


LEAN_TOOLS: dict[str, LeanTool] = {
    "Read": LeanTool("Read a file (text, PDF or image); lines come back numbered.", ("file_path",)),
    "Write": LeanTool("Create or overwrite a file.", ("file_path", "content")),
    "Edit": LeanTool(
        "Replace old_string (must occur exactly once) with new_string in a file you have read.",
        ("file_path", "old_string", "new_string"),
    ),
    "Glob": LeanTool("List files matching a glob pattern such as **/*.py.", ("pattern", "path")),
    "Grep": LeanTool(
        "Search file contents for a regular expression; output_mode content shows the lines.",
        ("pattern", "path", "glob", "output_mode"),
    ),
    "Bash": LeanTool("Run a shell command and return its output.", ("command",)),
    "NotebookEdit": LeanTool(
        "Insert, replace or delete a notebook cell; insert goes after cell_id (or first without it).",
        ("notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"),
    ),
    "RunCell": LeanTool("Run a notebook cell in the user's kernel and return its output.", ("cell_id",)),
    "KernelInspect": LeanTool(
        "Evaluate a Python expression in the user's kernel and return its value.", ("expression",)
    ),
    "TodoWrite": LeanTool("Replace the todo list; use it for work with several steps.", ("todos",)),
}


def profile_for(settings: Settings, local: bool, window: int) -> str:
    """`lean` or `full`: the setting, or for `auto` lean on this machine's endpoints and small windows."""
    if settings.tool_profile != "auto":
        return settings.tool_profile
    return "lean" if local or window <= SMALL_WINDOW else "full"


def _lean_parameters(parameters: dict[str, Any], keep: tuple[str, ...]) -> dict[str, Any]:
    properties = cast(dict[str, Any], parameters.get("properties", {}))
    required = [name for name in cast(list[str], parameters.get("required", [])) if name in keep]
    lean: dict[str, Any] = {
        "type": "object",
        "properties": {name: properties[name] for name in keep if name in properties},
    }
    if required:
        lean["required"] = required
    if "$defs" in parameters:
        lean["$defs"] = parameters["$defs"]
    return lean


def lean_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The core tools among `tools`, in the lean profile's order, with short definitions."""
    by_name = {tool["function"]["name"]: tool for tool in tools}
    lean: list[dict[str, Any]] = []
    for name, spec in LEAN_TOOLS.items():
        tool = by_name.get(name)
        if tool is None:
            continue
        parameters = _lean_parameters(tool["function"]["parameters"], spec.keep)
        function = {"name": name, "description": spec.description, "parameters": parameters}
        lean.append({"type": "function", "function": function})
    return lean


def note_block(text: str, lean: bool) -> str:
    """A note from goat to the model; the lean form says plainly that it is not for the answer."""
    if lean:
        return f"[Note from goat, not from the user. Do not repeat it or answer it.]\n{text}"
    return f"<system-reminder>\n{text}\n</system-reminder>"
