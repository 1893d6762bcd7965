"""Credential stores in permission decisions (config/secret_stores.py lists them): reading, moving,
deleting or changing one asks every time, in every mode, `bypassPermissions` included. Only an
allow rule that names that exact path (`Read(~/.netrc)`) or a once-approval lets it run; a broader
rule (`Read`, `Read(~/**)`) does not. LS is left out: it lists names, never contents.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from goat_jupyter.config.secret_stores import Stores
from goat_jupyter.permissions.rules import Anchors, CallFacts, Target, anchor, parse_rule

_MAGIC = frozenset("*?[]{}()!@+|\\")
NOT_GUARDED = frozenset({"LS"})


def secret_reason(facts: CallFacts, home: Path) -> str | None:
    """Why the call needs the user every time: a path it touches is, lies in or holds a store."""
    if facts.tool in NOT_GUARDED:
        return None
    stores = Stores(home)
    for target in _targets(facts):
        found = stores.find(target.path, target.real)
        if found is None and target.below is not None:
            found = stores.inside(target.path)
        if found is not None:
            store, label = found
            return (
                f"{facts.tool} would touch {target.path}, which is or holds the credential store "
                f"{store} ({label}). Credential stores are read or changed only with the user's "
                "approval, every time; only an allow rule naming this exact path covers it."
            )
    return None


def secret_targets(facts: CallFacts, home: Path) -> list[Target]:
    stores = Stores(home)
    return [
        t for t in _targets(facts) if stores.find(t.path) or (t.below is not None and stores.inside(t.path))
    ]


def exact_allow(rules: Sequence[str], facts: CallFacts, anchors: Anchors) -> str | None:
    """The allow rule naming exactly the stores' paths this call touches (one rule each), or None."""
    secret = secret_targets(facts, anchors.home)
    used: list[str] = []
    for target in secret:
        rule = next((text for text in rules if _names_exactly(text, target, facts, anchors)), None)
        if rule is None:
            return None
        used.append(rule)
    return ", ".join(dict.fromkeys(used)) or None


def _names_exactly(text: str, target: Target, facts: CallFacts, anchors: Anchors) -> bool:
    with contextlib.suppress(ValueError):
        rule = parse_rule(text)
        spec = rule.specifier
        if rule.tool not in facts.allow_names or spec is None or _MAGIC & set(spec):
            return False
        base, pattern = anchor(spec, anchors, real=True)
        return Path(os.path.realpath(base / pattern)) == target.real
    return False


def _targets(facts: CallFacts) -> list[Target]:
    return [*facts.paths, *(t for access in facts.also for t in access.paths)]
