"""`python -m goat_jupyter.mcp_server skill`: print the SKILL.md that teaches an outside agent to work
in a live notebook (save it as .claude/skills/jupyter-live-notebook/SKILL.md, or Codex's equivalent)."""

from __future__ import annotations

import sys
from pathlib import Path

USAGE = "usage: python -m goat_jupyter.mcp_server skill"


def main(argv: list[str]) -> int:
    if argv != ["skill"]:
        print(USAGE, file=sys.stderr)
        return 2
    sys.stdout.write((Path(__file__).parent / "SKILL.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
