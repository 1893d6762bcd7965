"""The package's shape: imports point down the layers, no import circles (lazy and type-only imports
count), no import by a computed name, a core free of IPython, a small package root, no crowded folder,
and tool families that keep their helpers to themselves. Reads the source with `ast`; nothing is
imported."""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "goat_jupyter"
CORE = ("goat_jupyter.agent", "goat_jupyter.tools", "goat_jupyter.permissions")
FRONTEND_ONLY = ("IPython", "ipywidgets")
MAX_ROOT_MODULES = 10
MAX_FOLDER_MODULES = 20  # modules directly in one folder, __init__.py not counted
FAMILIES_HOME = "tools"  # each folder in it is a family of tools (README, Architecture)

# Top-down: a module imports its own layer or those below it, never one above (README, Architecture).
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "",
        "api",
        "kernel",
        "server",
        "mcp_server",
    ),  # entry points: the kernel extension, the server, the MCP server, the Python API
    ("ui",),  # widgets, the cell transcript, approvals and questions
    ("plugins", "subagents", "checkpoints"),  # what the tools reach through services
    ("agent",),  # the loop, the model client, the session and its context
    ("tools",),  # every tool, the executor, the tools' contract with the services above
    ("permissions", "live", "mcp_client", "web"),  # permission engine, policy, hooks; live notebooks; clients
    (
        "represent",
        "citations",
    ),  # what the model reads of objects and outputs; large outputs on disk; what answers cite
    (  # infrastructure
        "processes",
        "config",
        "replay",
        "settings",
        "state",
        "errors",
        "fileio",
        "file_lock",
        "text",
        "version",
    ),
)


def module_names(package: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package (a package is its __init__.py)."""
    names: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imported_names(path: Path, name: str) -> Iterator[str]:
    """Every module name an import statement anywhere in the file names: top level, in functions,
    under TYPE_CHECKING, and `importlib.import_module("...")` with a literal name."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, name, is_package)
            yield from (f"{base}.{alias.name}" for alias in node.names)  # a module, else a name in base
        elif isinstance(node, ast.Call) and _is_import_module(node):
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                yield argument.value


def _from_base(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module a `from ... import` reads from (relative ones resolved against `name`)."""
    if not node.level:
        return node.module or ""
    anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def _is_import_module(call: ast.Call) -> bool:
    func = call.func
    named = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return named in ("import_module", "__import__") and bool(call.args)


def ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(package: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Module -> the package modules it imports; module -> the outside top-level packages it imports.
    `import pkg.a.b` depends on pkg.a.b, plus on each package on the way whose __init__ imports
    something, except the importer's own packages (those are loading already)."""
    modules = module_names(package)
    inner: dict[str, set[str]] = {}
    outer: dict[str, set[str]] = {}
    for name, path in modules.items():
        own = set(ancestors(name))
        deps: set[str] = set()
        outer[name] = set()
        for imported in imported_names(path, name):
            if imported.split(".")[0] != package.name:
                outer[name].add(imported.split(".")[0])
                continue
            target = _nearest_module(imported, modules)
            if target is None:
                continue
            deps.add(target)
            deps.update(p for p in ancestors(target) if p not in own and _imports_anything(modules[p], p))
        deps.discard(name)
        inner[name] = deps
    return inner, outer


def _nearest_module(imported: str, modules: dict[str, Path]) -> str | None:
    while imported not in modules and "." in imported:
        imported = imported.rsplit(".", 1)[0]
    return imported if imported in modules else None


def _imports_anything(path: Path, name: str) -> bool:
    return any(True for _ in imported_names(path, name))


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, set())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def reachable(graph: dict[str, set[str]], starts: list[str]) -> dict[str, str | None]:
    """Every module reachable from `starts`, each with the module that first imported it."""
    seen: dict[str, str | None] = {start: None for start in starts}
    todo = list(starts)
    while todo:
        node = todo.pop()
        for child in sorted(graph.get(node, set())):
            if child not in seen:
                seen[child] = node
                todo.append(child)
    return seen


def chain(seen: dict[str, str | None], module: str) -> str:
    path = [module]
    while (parent := seen[path[-1]]) is not None:
        path.append(parent)
    return " <- ".join(path)


def frontend_imports(package: Path, core: tuple[str, ...]) -> list[str]:
    inner, outer = import_graph(package)
    starts = [name for name in inner if any(name == c or name.startswith(c + ".") for c in core)]
    seen = reachable(inner, starts)
    return [
        f"{chain(seen, module)} imports {', '.join(sorted(outer[module] & set(FRONTEND_ONLY)))}"
        for module in sorted(seen)
        if outer[module] & set(FRONTEND_ONLY)
    ]


def test_no_import_circles() -> None:
    inner, _ = import_graph(PACKAGE)
    assert circles(inner) == []


def test_core_never_reaches_ipython_or_widgets() -> None:
    assert frontend_imports(PACKAGE, CORE) == []


def test_core_packages_exist() -> None:
    """The check above only means something if the core packages are really there."""
    inner, _ = import_graph(PACKAGE)
    for package in CORE:
        assert sum(1 for name in inner if name.startswith(package + ".")) >= 3, package


def layer_of(module: str, package: str = "goat_jupyter") -> int:
    """The index in LAYERS of the area a module belongs to (its first name below the package)."""
    parts = module.split(".")
    area = parts[1] if len(parts) > 1 else ""
    found = [i for i, names in enumerate(LAYERS) if area in names]
    assert found, f"{module} belongs to no layer: add {area!r} to LAYERS"
    return found[0]


def upward_imports(graph: dict[str, set[str]], package: str = "goat_jupyter") -> list[str]:
    return [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if layer_of(target, package) < layer_of(module, package)
    ]


def test_imports_point_down_the_layers() -> None:
    inner, _ = import_graph(PACKAGE)
    assert upward_imports(inner) == []


def test_every_area_has_a_layer() -> None:
    areas = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    areas |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    placed = {name for names in LAYERS for name in names}
    assert areas - placed == set() and placed - areas == {""}


# Imports by a computed name, which no check above can follow (module -> why it is harmless).
DYNAMIC_IMPORTS_ALLOWED = {
    "goat_jupyter.mcp_client.transport": "warms the MCP SDK's own modules, named in a tuple"
}


def dynamic_imports(package: Path) -> list[str]:
    """`import_module(x)` / `__import__(x)` calls whose name is not a string literal."""
    found: list[str] = []
    for name, path in module_names(package).items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and _is_import_module(node):
                argument = node.args[0]
                if not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
                    found.append(f"{name}:{node.lineno}")
    return found


def test_no_import_hides_its_module_name() -> None:
    unexplained = [
        where for where in dynamic_imports(PACKAGE) if where.split(":")[0] not in DYNAMIC_IMPORTS_ALLOWED
    ]
    assert unexplained == []


def test_package_root_is_small() -> None:
    root_modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root_modules) <= MAX_ROOT_MODULES, root_modules


def crowded_folders(package: Path, limit: int = MAX_FOLDER_MODULES) -> list[str]:
    """Folders (packages or not) that hold more than `limit` modules directly, with their counts."""
    counts = Counter(path.parent for path in package.rglob("*.py") if path.name != "__init__.py")
    return sorted(f"{folder.relative_to(package.parent)}: {n}" for folder, n in counts.items() if n > limit)


def test_no_folder_is_crowded() -> None:
    assert crowded_folders(PACKAGE) == []


# Tool families: tools/<family>/ holds its tool modules (each with its `<stem>.md` description beside
# it) and the helpers only they use. From outside a family (another family, the framework, any other
# layer) a family is reached through its package (its __init__) and its tool modules; its other modules
# (the private helpers) and every `_name` in it belong to the family alone.


def families(package: Path, home: str = FAMILIES_HOME) -> list[str]:
    return sorted(f"{package.name}.{home}.{i.parent.name}" for i in (package / home).glob("*/__init__.py"))


def family_of(module: str, known: list[str]) -> str | None:
    return next((family for family in known if module == family or module.startswith(family + ".")), None)


def tool_modules(package: Path, home: str = FAMILIES_HOME) -> set[str]:
    """The family modules with a description beside them (`read.py` and `read.md`)."""
    known = families(package, home)
    return {
        name
        for name, path in module_names(package).items()
        if family_of(name, known) not in (None, name) and path.with_suffix(".md").exists()
    }


def private_helpers(package: Path, home: str = FAMILIES_HOME) -> set[str]:
    known = families(package, home)
    shown = tool_modules(package, home)
    return {name for name in module_names(package) if family_of(name, known) not in (None, name)} - shown


def reached_names(path: Path, name: str) -> Iterator[str]:
    """What a module reaches by name: everything it imports, and each attribute chain on a name an
    import bound (`import pkg.a as a` then `a._cache`; `import pkg` then `pkg.a.b.f`)."""
    yield from imported_names(path, name)
    tree = ast.parse(path.read_text(), str(path))
    bound = dict(_bindings(tree, name, path.name == "__init__.py"))
    for node in ast.walk(tree):
        chain = _attribute_chain(node)
        if chain and chain[0] in bound:
            yield ".".join([bound[chain[0]], *chain[1:]])


def _bindings(tree: ast.AST, name: str, is_package: bool) -> Iterator[tuple[str, str]]:
    """Local name -> the dotted name an import bound to it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                yield (alias.asname, alias.name) if alias.asname else (root, root)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, name, is_package)
            yield from ((alias.asname or alias.name, f"{base}.{alias.name}") for alias in node.names)


def _attribute_chain(node: ast.AST) -> list[str]:
    """`a.b.c` -> ["a", "b", "c"]; anything else -> []."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.insert(0, node.attr)
        node = node.value
    return [node.id, *names] if isinstance(node, ast.Name) and names else []


def private_reaches(package: Path, home: str = FAMILIES_HOME) -> list[str]:
    """Each module outside a family that reaches one of its private helpers or `_names`."""
    modules = module_names(package)
    known = families(package, home)
    private = private_helpers(package, home)
    found: set[str] = set()
    for name, path in modules.items():
        for reached in reached_names(path, name):
            target = _nearest_module(reached, modules)
            if target is None or family_of(target, known) in (None, family_of(name, known)):
                continue
            first = reached[len(target) + 1 :].split(".")[0]
            if target in private:
                found.add(f"{name} reaches {target}")
            elif first.startswith("_") and not first.endswith("__"):
                found.add(f"{name} reaches {target}.{first}")
    return sorted(found)


def unregistered_tools(package: Path, home: str = FAMILIES_HOME) -> list[str]:
    """Tool modules the built-in list does not import: an .md beside a helper does not make it public."""
    modules = module_names(package)
    builtin = f"{package.name}.{home}.builtin"
    registered = {_nearest_module(n, modules) for n in imported_names(modules[builtin], builtin)}
    return sorted(tool_modules(package, home) - registered)


def test_families_keep_their_helpers_to_themselves() -> None:
    assert private_reaches(PACKAGE) == []


def test_every_module_with_a_description_is_a_built_in_tool() -> None:
    assert unregistered_tools(PACKAGE) == []


def tools_outside_families(package: Path, home: str = FAMILIES_HOME) -> list[str]:
    """Modules with a description directly in the framework's folder: every tool lives in a family."""
    return sorted(p.name for p in (package / home).glob("*.py") if p.with_suffix(".md").exists())


def test_the_framework_folder_holds_no_tool() -> None:
    assert tools_outside_families(PACKAGE) == []


def test_the_families_are_there() -> None:
    """The two checks above only mean something if the families and their helpers are really there."""
    names = [family.rsplit(".", 1)[1] for family in families(PACKAGE)]
    assert names == ["agents", "conversation", "files", "mcp", "notebook", "search", "shell", "web"]
    assert len(tool_modules(PACKAGE)) >= 25 and len(private_helpers(PACKAGE)) >= 15


# The checks themselves, against small packages built to get around them.


def write_package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "pkg"
    for relative, source in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    for folder in {p.parent for p in package.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return package


@pytest.mark.parametrize(
    ("a_source", "b_source"),
    [
        ("import pkg.b\n", "import pkg.a\n"),
        ("from pkg import b\n", "from pkg.a import thing\n"),
        ("def f():\n    from pkg import b\n", "from pkg.a import thing\n"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
            "class B: ...\ndef g():\n    import pkg.a as a\n",
        ),
        ("from . import b\n", "from .a import thing\n"),
        ("import importlib\nimportlib.import_module('pkg.b')\n", "__import__('pkg.a')\n"),
    ],
    ids=["plain", "from", "lazy", "type-only", "relative", "by-name"],
)
def test_every_kind_of_import_closes_a_circle(tmp_path: Path, a_source: str, b_source: str) -> None:
    package = write_package(tmp_path, {"a.py": a_source, "b.py": b_source})
    inner, _ = import_graph(package)
    assert circles(inner) == [["pkg.a", "pkg.b"]]


def test_a_circle_through_a_package_init_that_imports(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {"sub/__init__.py": "from pkg.sub.x import X\n", "sub/x.py": "from pkg.top import T\nX = 1\n"},
    )
    (package / "top.py").write_text("from pkg.sub.y import Y\nT = 1\n")
    (package / "sub" / "y.py").write_text("Y = 1\n")
    inner, _ = import_graph(package)
    assert ["pkg.sub", "pkg.sub.x", "pkg.top"] in circles(inner)


def test_a_quiet_package_init_on_the_way_is_no_circle(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"sub/x.py": "import pkg.sub.y\n", "sub/y.py": "Y = 1\n"})
    inner, _ = import_graph(package)
    assert circles(inner) == []


def test_ipython_reached_through_a_lazy_import_in_another_package(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "core/loop.py": "from pkg.helpers import show\n",
            "helpers.py": "def show():\n    from IPython.display import display\n",
            "ui.py": "import ipywidgets\n",
        },
    )
    found = frontend_imports(package, ("pkg.core",))
    assert found == ["pkg.helpers <- pkg.core.loop imports IPython"]


def test_widgets_by_name_count_too(tmp_path: Path) -> None:
    package = write_package(
        tmp_path, {"core/w.py": "import importlib\nimportlib.import_module('ipywidgets')\n"}
    )
    assert frontend_imports(package, ("pkg.core",)) == ["pkg.core.w imports ipywidgets"]


def test_an_import_from_a_higher_layer_is_found_even_when_lazy(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "tools/run.py": "def later():\n    from pkg.agent.loop import Agent\n",
            "agent/loop.py": "from pkg.tools.run import later\nclass Agent: ...\n",
            "permissions/engine.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.tools import run\n",
        },
    )
    inner, _ = import_graph(package)
    assert upward_imports(inner, "pkg") == [
        "pkg.permissions.engine imports pkg.tools.run",
        "pkg.tools.run imports pkg.agent.loop",
    ]


def test_an_import_by_a_computed_name_is_reported(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "tools/run.py": "import importlib\nimportlib.import_module('pkg.' + 'agent')\n",
            "agent/loop.py": "name = 'pkg.tools'\n__import__(name)\n__import__('pkg.tools.run')\n",
        },
    )
    assert sorted(dynamic_imports(package)) == ["pkg.agent.loop:2", "pkg.tools.run:2"]


def test_a_folder_past_the_limit_is_reported_whatever_hides_it(tmp_path: Path) -> None:
    modules = {f"sub/m{i}.py": "X = 1\n" for i in range(21)}
    package = write_package(tmp_path, {**modules, "ok/a.py": "", "deep/er/b.py": ""})
    (package / "sub" / "notes.md").write_text("not a module\n")
    (package / "sub" / "__init__.py").unlink()  # a namespace folder is still a folder
    assert crowded_folders(package) == ["pkg/sub: 21"]


def test_twenty_modules_and_an_init_fit(tmp_path: Path) -> None:
    package = write_package(tmp_path, {f"sub/m{i}.py": "" for i in range(20)})
    assert (package / "sub" / "__init__.py").exists()
    assert crowded_folders(package) == []


def write_families(tmp_path: Path, importer: str, source: str) -> Path:
    """pkg.tools with two families: files (tool `read`, helper `helper`, nested helper `formats.pdf`)
    and search (tool `grep`), a framework module `builtin` registering the tools, and a kernel layer."""
    files = {
        "tools/builtin.py": "from pkg.tools.files.read import ReadTool\nfrom pkg.tools.search.grep import GrepTool\n",
        "tools/files/read.py": "from pkg.tools.files.helper import f\nclass ReadTool: ...\n_cache = {}\n",
        "tools/files/helper.py": "def f(): ...\n",
        "tools/files/formats/pdf.py": "def g(): ...\n",
        "tools/search/grep.py": "class GrepTool: ...\n",
        "kernel/services.py": "",
    }
    package = write_package(tmp_path, {**files, importer: source})
    for tool in ("files/read", "search/grep"):
        (package / "tools" / f"{tool}.md").write_text("A tool.\n")
    return package


@pytest.mark.parametrize(
    ("importer", "source", "reached"),
    [
        ("tools/search/grep.py", "from pkg.tools.files.helper import f\n", "pkg.tools.files.helper"),
        ("tools/search/grep.py", "from pkg.tools.files import helper\n", "pkg.tools.files.helper"),
        ("tools/search/grep.py", "from ..files.helper import f\n", "pkg.tools.files.helper"),
        (
            "tools/search/grep.py",
            "def later():\n    import pkg.tools.files.helper\n",
            "pkg.tools.files.helper",
        ),
        (
            "tools/search/grep.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.tools.files.helper import f\n",
            "pkg.tools.files.helper",
        ),
        (
            "tools/search/grep.py",
            "import importlib\nimportlib.import_module('pkg.tools.files.helper')\n",
            "pkg.tools.files.helper",
        ),
        ("tools/search/grep.py", "import pkg.tools.files as fs\nfs.helper.f()\n", "pkg.tools.files.helper"),
        ("tools/search/grep.py", "import pkg\npkg.tools.files.helper.f()\n", "pkg.tools.files.helper"),
        (
            "tools/search/grep.py",
            "from pkg.tools.files.formats.pdf import g\n",
            "pkg.tools.files.formats.pdf",
        ),
        ("tools/search/grep.py", "from pkg.tools.files.formats import pdf\n", "pkg.tools.files.formats.pdf"),
        ("tools/search/grep.py", "from pkg.tools.files.read import _cache\n", "pkg.tools.files.read._cache"),
        (
            "tools/search/grep.py",
            "from pkg.tools.files import read\nread._cache.clear()\n",
            "pkg.tools.files.read._cache",
        ),
        ("tools/search/grep.py", "from pkg.tools.files import _hidden\n", "pkg.tools.files._hidden"),
        ("tools/registry.py", "from pkg.tools.files.helper import f\n", "pkg.tools.files.helper"),
        ("kernel/services.py", "from pkg.tools.files import helper\n", "pkg.tools.files.helper"),
    ],
    ids=[
        "from-module",
        "from-package",
        "relative",
        "lazy",
        "type-only",
        "by-name",
        "attribute-of-package",
        "attribute-from-root",
        "nested-helper",
        "nested-from-package",
        "underscore-name",
        "underscore-attribute",
        "underscore-in-package",
        "framework",
        "other-layer",
    ],
)
def test_a_private_helper_reached_from_outside_its_family_is_found(
    tmp_path: Path, importer: str, source: str, reached: str
) -> None:
    package = write_families(tmp_path, importer, source)
    module = "pkg." + importer.removesuffix(".py").replace("/", ".")
    assert private_reaches(package) == [f"{module} reaches {reached}"]


@pytest.mark.parametrize(
    ("importer", "source"),
    [
        (
            "tools/files/ls.py",
            "from pkg.tools.files.helper import f\nfrom pkg.tools.files.read import _cache\n",
        ),
        ("tools/files/formats/pdf.py", "from ..helper import f\n"),
        (
            "tools/search/grep.py",
            "from pkg.tools.files.read import ReadTool\nfrom pkg.tools.files import read\n",
        ),
        ("tools/search/grep.py", "from pkg.tools.files import read\nprint(read.__name__, read.ReadTool)\n"),
        ("tools/search/grep.py", "from pkg.tools.files import f\n"),  # what the family package offers
    ],
    ids=["own-family", "own-nested", "tool-module", "dunder", "package-face"],
)
def test_what_a_family_shows_may_be_used(tmp_path: Path, importer: str, source: str) -> None:
    package = write_families(tmp_path, importer, source)
    (package / "tools" / "files" / "__init__.py").write_text("from pkg.tools.files.helper import f\n")
    assert private_reaches(package) == []


def test_a_description_beside_a_helper_does_not_make_it_public(tmp_path: Path) -> None:
    package = write_families(tmp_path, "tools/search/grep.py", "from pkg.tools.files.helper import f\n")
    (package / "tools" / "files" / "helper.md").write_text("Not a tool.\n")
    assert private_reaches(package) == []  # the .md makes it look like a tool module...
    assert unregistered_tools(package) == ["pkg.tools.files.helper"]  # ...that no tool list registers


def test_a_tool_dropped_beside_the_framework_is_found(tmp_path: Path) -> None:
    package = write_families(tmp_path, "tools/ls.py", "class LSTool: ...\n")
    (package / "tools" / "ls.md").write_text("A tool.\n")
    assert tools_outside_families(package) == ["ls.py"]
    assert tools_outside_families(write_families(tmp_path / "clean", "tools/registry.py", "")) == []
