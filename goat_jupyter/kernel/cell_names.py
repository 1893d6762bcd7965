"""What a cell's code takes from the kernel and what it changes in place, from its AST: the facts
behind marimo's staleness rule (a cell is stale when it reads a variable another cell changed after
it ran), the same rule the labextension's markers follow (labextension/src/pynames.ts)."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable

_IGNORED = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
_TIMING_LINE = re.compile(r"^(\s*)%(?:time|timeit)(?:\s+-\w+(?:\s+\d+)?)*\s+", re.MULTILINE)
# Methods that change their object (lists, dicts, sets, numpy arrays); others only with inplace=True.
MUTATORS = frozenset(
    [
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "add",
        "discard",
        "sort",
        "reverse",
        "setdefault",
        "popitem",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "fill",
        "resize",
        "put",
        "itemset",
    ]
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def parse_cell(source: str) -> ast.Module | None:
    """The cell as Python: IPython magics and shell lines become calls; None when it does not parse."""
    from IPython.core.inputtransformer2 import TransformerManager

    text = source.lstrip()
    if text.startswith(_PYTHON_CELL_MAGICS):
        text = text.partition("\n")[2]  # `%%time` runs its body as Python
    text = _TIMING_LINE.sub(r"\1", text)  # and `%time expr` its expression
    try:
        with warnings.catch_warnings():  # odd text warns; the hook runs after the user's cell, silently
            warnings.simplefilter("ignore")
            return ast.parse(TransformerManager().transform_cell(text))
    except (SyntaxError, ValueError):
        return None


def reads_and_writes(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """Both, from one parse (the post-run hook runs after every cell)."""
    tree = parse_cell(source)
    return _read_names(tree), _written_names(tree)


def read_names(source: str) -> frozenset[str]:
    """Top-level names the code reads before it binds them itself: what it takes from the kernel."""
    return _read_names(parse_cell(source))


def written_names(source: str) -> frozenset[str]:
    """Names whose objects the code changes in place: `df["a"] = 1`, `obj.x += 1`, `del d[k]`,
    `lst.append(x)`, `df.drop(..., inplace=True)` (not inside a def: defining runs nothing)."""
    return _written_names(parse_cell(source))


def _read_names(tree: ast.Module | None) -> frozenset[str]:
    reads: set[str] = set()
    if tree is not None:
        _read_block(tree.body, set(), reads)
    return frozenset(name for name in reads if _public(name))


def _written_names(tree: ast.Module | None) -> frozenset[str]:
    found: set[str] = set()
    for node in _outside_defs(tree.body if tree is not None else []):
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            _add_root(node.value, found)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _changes(node):
            _add_root(node.func.value, found)
        elif isinstance(node, ast.Call) and _is_setattr(node):  # `setattr(obj, "x", 1)` is `obj.x = 1`
            _add_root(node.args[0], found)
    return frozenset(name for name in found if _public(name))


def _is_setattr(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in ("setattr", "delattr") and bool(call.args)


def _changes(call: ast.Call) -> bool:
    assert isinstance(call.func, ast.Attribute)
    inplace = any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )
    return inplace or call.func.attr in MUTATORS


def _outside_defs(nodes: Iterable[ast.AST]) -> Iterable[ast.AST]:
    for node in nodes:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _outside_defs(ast.iter_child_nodes(node))


def _read_block(body: list[ast.stmt], bound: set[str], reads: set[str]) -> None:
    """In order: each statement's reads not yet bound by the cell, then what it binds."""
    for stmt in body:
        reads.update(_reads_of(stmt) - bound)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            bound.update(_stores(stmt.target))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            bound.update(n for item in stmt.items if item.optional_vars for n in _stores(item.optional_vars))
        for block in _blocks(stmt):
            _read_block(block, bound, reads)
        bound.update(_binds(stmt))


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement blocks that run at the cell's top level (not a def's or class's body)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *(handler.body for handler in stmt.handlers), stmt.orelse, stmt.finalbody]
    return []


def _reads_of(stmt: ast.stmt) -> set[str]:
    """Names one statement reads itself (a compound statement: its header; a def: its free names)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return _loads(stmt.iter)
    if isinstance(stmt, (ast.While, ast.If)):
        return _loads(stmt.test)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return set[str]().union(*(_loads(item.context_expr) for item in stmt.items))
    if isinstance(stmt, ast.Try):
        return set[str]().union(*(_loads(h.type) for h in stmt.handlers if h.type is not None))
    if isinstance(stmt, ast.AugAssign):
        return _loads(stmt.value) | {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
    return _loads(stmt)


def _loads(node: ast.AST) -> set[str]:
    """Names read in `node`, less those local to a def, lambda or comprehension inside it."""
    loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - _locals(node)


def _locals(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for scope in ast.walk(node):
        if isinstance(scope, _SCOPES + _COMPREHENSIONS):
            inner = ast.walk(scope) if isinstance(scope, _SCOPES) else (g.target for g in scope.generators)
            for part in inner:
                found.update(_stores(part) | {a.arg for a in ast.walk(part) if isinstance(a, ast.arg)})
                if part is not scope and isinstance(
                    part, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    found.add(part.name)
    return found


def _stores(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }


def _binds(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds (its nested blocks are walked on their own)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in stmt.names}
    if _blocks(stmt):
        return set()
    return _stores(stmt) - _locals(stmt)


def _add_root(node: ast.expr, names: set[str]) -> None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.add(node.id)


def _public(name: str) -> bool:
    return not name.startswith("_") and name not in _IGNORED
