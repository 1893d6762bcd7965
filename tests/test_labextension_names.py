"""Names the labextension matches on must be the names the kernel uses: Fix with goat / Explain stay
away from goat's own one-line endings only while `NOTHING_TO_FIX` (cell_actions.ts) spells their
exception classes as the kernel does; the gutter's stale markers agree with the kernel's stale rule
only while `MUTATORS` (pynames.ts) lists the methods cell_names.py counts as writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from goat_jupyter.kernel.cell_names import MUTATORS
from goat_jupyter.kernel.magic import GoatInterruptedError
from goat_jupyter.kernel.replay_run import ReplayStoppedError

LABEXTENSION = Path(__file__).resolve().parents[1] / "labextension"


def nothing_to_fix() -> list[str]:
    source = (LABEXTENSION / "src" / "cell_actions.ts").read_text(encoding="utf-8")
    match = re.search(r"export const NOTHING_TO_FIX = (\[[^\]]*\]);", source)
    assert match, "cell_actions.ts no longer declares NOTHING_TO_FIX as a list literal"
    return json.loads(match.group(1).replace("'", '"'))


def test_goat_endings_and_a_users_stop_offer_nothing_to_fix() -> None:
    names = nothing_to_fix()
    assert GoatInterruptedError.__name__ in names
    assert ReplayStoppedError.__name__ in names
    assert KeyboardInterrupt.__name__ in names
    assert "TypeError" not in names and "Exception" not in names, "real failures keep their buttons"


def test_every_command_the_menus_name_is_one_the_extension_registers() -> None:
    source = (LABEXTENSION / "src" / "cell_actions.ts").read_text(encoding="utf-8")
    registered = set(re.findall(r"'(goat:[a-z-]+)'", source))
    schema = json.loads((LABEXTENSION / "schema" / "cell-actions.json").read_text(encoding="utf-8"))
    named = set(re.findall(r'"command": "(goat:[a-z-]+)"', json.dumps(schema, indent=1)))
    assert named and named <= registered, named - registered
    shortcuts = {entry["command"]: entry["keys"] for entry in schema["jupyter.lab.shortcuts"]}
    assert shortcuts == {
        "goat:fix-error": ["G", "F"],
        "goat:explain-error": ["G", "E"],
        "goat:ask-about-cell": ["G", "A"],
        "goat:toggle-lock": ["G", "L"],
    }


def pynames_mutators() -> list[str]:
    source = (LABEXTENSION / "src" / "pynames.ts").read_text(encoding="utf-8")
    match = re.search(r"export const MUTATORS = (\[[^\]]*\]);", source)
    assert match, "pynames.ts no longer declares MUTATORS as a list literal"
    return json.loads(match.group(1).replace("'", '"'))


def test_the_gutter_counts_the_same_method_calls_as_writes_as_the_kernel() -> None:
    names = pynames_mutators()
    assert len(names) == len(set(names)), "a method named twice in pynames.ts"
    assert set(names) == MUTATORS, (set(names) - MUTATORS, MUTATORS - set(names))


def test_citation_links_are_the_ones_the_labextension_follows() -> None:
    """cited.py writes `#goat-cite-<count>-<output>-<state>`; citations.ts parses exactly that."""
    from goat_jupyter.citations import OutputIndex
    from goat_jupyter.ui.safe.cited import cited_answer

    source = (LABEXTENSION / "src" / "citations.ts").read_text(encoding="utf-8")
    match = re.search(r"const ANCHOR = /(.+)/;", source)
    assert match, "citations.ts no longer declares ANCHOR as a regular expression literal"
    anchor = re.compile(match.group(1).replace("\\/", "/"))
    outputs = [{"output_type": "stream", "name": "stdout", "text": "0.5"}]
    markdown, _ = cited_answer("0.5 [cell 3, out 1]; 0.7 [cell 3]; [cell 3]", OutputIndex([(3, outputs)]))
    hrefs = re.findall(r"\]\((#goat-cite-[^)]*)\)", markdown)
    assert hrefs == ["#goat-cite-3-1-ok", "#goat-cite-3-0-bad", "#goat-cite-3-0-ref"]
    assert all(anchor.fullmatch(href) for href in hrefs)
