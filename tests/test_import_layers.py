"""The modules of einc import one another without a circle.

Every `import` counts, the ones inside functions too: a function-level import that dodges a
circle still leaves the circle in the design. The graph is read from the source with `ast`,
so nothing here depends on what a module happens to import at run time.
"""
from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path

import einc

PACKAGE_ROOT = Path(einc.__file__).parent


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the einc package."""
    files = {}
    for path in PACKAGE_ROOT.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _known(name: str, modules) -> str | None:
    """The einc module `name` refers to: itself, or the closest enclosing module (for
    `from einc.x import some_function`)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, node, modules, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [_known(a.name, modules) for a in node.names]
    if node.level:   # relative: `from . import x`, `from ..y import z`
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    return [_known(f"{base}.{a.name}", modules) for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """module -> the einc modules it imports (at module level or inside a function)."""
    return {module: set(targets) for module, targets in _parsed_import_graph().items()}


@functools.lru_cache(maxsize=1)
def _parsed_import_graph() -> dict[str, set[str]]:
    # every einc file parsed once per test process: the tests below each read the graph
    files = module_files()
    graph = {}
    for module, path in files.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets.update(_imported(module, node, files, path.name == "__init__.py"))
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Some circle of imports as [a, b, .., a], or None."""
    done, path, on_path = set(), [], set()

    def visit(module):
        path.append(module)
        on_path.add(module)
        for target in sorted(graph[module]):
            if target in on_path:
                return path[path.index(target):] + [target]
            if target not in done:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        on_path.discard(module)
        done.add(module)
        return None

    for module in sorted(graph):
        if module not in done:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    # einc.driver imports the compiler inside its functions, to keep `import einc` light
    assert "einc.semantics.elaborate" in graph["einc.driver"]
    assert "einc.semantics.core.values" in graph["einc.semantics.core.scalar_ops"]


def test_no_import_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_find_cycle_reports_the_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


SEMANTICS_FOLDERS = ("einc.semantics.core", "einc.semantics.forms", "einc.semantics")


def semantics_layers() -> dict[str, int]:
    """module -> its layer, from the lists in the docstrings of einc.semantics and its folders."""
    layers = {}
    for folder in SEMANTICS_FOLDERS:
        doc = importlib.import_module(folder).__doc__
        for number, names in re.findall(r"^ *(\d+)\. ([a-z_, ]+):", doc, re.M):
            for name in names.split(", "):
                layers[f"{folder}.{name}"] = int(number)
    return layers


def test_semantics_imports_only_downward():
    layers = semantics_layers()
    graph = import_graph()
    modules = {m for m in graph if m.startswith("einc.semantics.") and m not in SEMANTICS_FOLDERS}
    assert set(layers) == modules, "list every module of einc.semantics once in its docstring"
    upward = [f"{m} (layer {layers[m]}) imports {t} (layer {layers[t]})"
              for m in sorted(modules) for t in sorted(graph[m] & modules) if layers[t] >= layers[m]]
    assert not upward, "\n".join(upward)


# ------------------------------------------------------------ rule tables

MUTATORS = {"update", "setdefault", "append", "extend", "add", "insert", "__setitem__"}


def _einc_imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the einc module it comes from, for the module-level imports of `tree`."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("einc"):
            names.update({a.asname or a.name: node.module for a in node.names})
        elif isinstance(node, ast.Import):
            names.update({a.asname or a.name.partition(".")[0]: a.name for a in node.names
                          if a.name.startswith("einc")})
    return names


def _written(node) -> list:
    """The expressions whose contents `node` changes: subscript stores, attribute stores and
    mutating method calls."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
        return [node.func.value]
    return []


def _registers(function: ast.FunctionDef, tree: ast.Module) -> bool:
    """Whether `function` (a decorator) reads a module-level table of its own module."""
    tables = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
              and isinstance(n.value, (ast.Dict, ast.List, ast.Set, ast.DictComp))
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in tables for n in ast.walk(function))


def foreign_table_writes(source: str, module_source) -> list[str]:
    """Lines of `source` that write into a table (or other state) of another einc module: a
    subscript store, `.update(..)`, `.setdefault(..)` and the like on an imported name, or a
    decorator imported from a module whose definition of it fills a table of that module.
    `module_source(name)` gives the source of an einc module."""
    tree = ast.parse(source)
    imported = _einc_imports(tree)
    found = []
    for node in ast.walk(tree):
        for target in _written(node):
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in imported:
                found.append(f"line {node.lineno}: writes {ast.unparse(target)} of {imported[root.id]}")
        for decorator in getattr(node, "decorator_list", ()):
            name = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(name, ast.Name) and name.id in imported:
                home = ast.parse(module_source(imported[name.id]))
                defs = [f for f in home.body if isinstance(f, ast.FunctionDef) and f.name == name.id]
                if defs and _registers(defs[0], home):
                    found.append(f"line {decorator.lineno}: @{name.id} fills a table of {imported[name.id]}")
    return sorted(found, key=lambda line: int(line.split()[1].rstrip(":")))


def _module_source(name: str) -> str:
    return module_files()[name].read_text()


def test_rule_tables_are_filled_where_they_are_defined():
    writes = [f"{module}: {line}" for module, path in sorted(module_files().items())
              for line in foreign_table_writes(path.read_text(), _module_source)]
    assert not writes, "\n".join(writes)


def test_a_table_written_from_another_module_is_found():
    home = ("TABLE: dict = {}\n"
            "def rule(key):\n"
            "    def enter(fn):\n"
            "        TABLE[key] = fn\n"
            "        return fn\n"
            "    return enter\n"
            "def helper(fn):\n"
            "    return fn\n")
    writer = ("from einc.fake import TABLE, helper, rule\n"
              "from einc import fake\n"
              "TABLE['a'] = 1\n"
              "fake.TABLE['b'] = 2\n"
              "TABLE.update({'c': 3})\n"
              "fake.TABLE.setdefault('d', 4)\n"
              "@rule('e')\n"
              "def e(): pass\n"
              "@helper\n"
              "def f(): pass\n")
    found = foreign_table_writes(writer, lambda name: home)
    assert [line.split(":")[0] for line in found] == ["line 3", "line 4", "line 5", "line 6", "line 7"]
    own = "TABLE = {}\nTABLE['a'] = 1\nTABLE.update(b=2)\nfrom einc.fake import helper\n@helper\ndef f(): pass\n"
    assert foreign_table_writes(own, lambda name: home) == []
def _reachable(graph: dict[str, set[str]], start: set[str]) -> set[str]:
    """Every module that importing the modules of `start` imports, directly or not."""
    seen, todo = set(), list(start)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    return seen


def _package(graph: dict[str, set[str]], name: str) -> set[str]:
    return {m for m in graph if m == name or m.startswith(name + ".")}


def test_build_and_runtime_do_not_import_each_other():
    # what both need (the module file's seal and keys, the target records) lies below both
    graph = import_graph()
    build, runtime = _package(graph, "einc.backend"), _package(graph, "einc.runtime")
    assert not _reachable(graph, build) & runtime, "einc.backend reaches einc.runtime"
    assert not _reachable(graph, runtime) & build, "einc.runtime reaches einc.backend"


def test_the_target_records_import_no_other_einc_module():
    assert import_graph()["einc.target"] == set()


# The stages of the pipeline, bottom first. A module belongs to the longest entry that names it or
# a package above it; it may import modules of its own stage or of stages before it, never after.
# Top-level modules of einc are the base every stage uses (diagnostics, formatting, the cache
# folder, the deep stack stages run on) or the entry points that drive the pipeline (driver, the
# Python API, Dask).
STAGES = (
    ("einc.diagnostics", "einc.formatting", "einc.host_cpu", "einc.user_cache", "einc.version",
     "einc.target", "einc.module_file", "einc.deep_stack"),
    ("einc.syntax",),
    ("einc.ir",),
    ("einc.autodiff",),
    ("einc.semantics.core",),
    ("einc.semantics.forms",),
    ("einc.semantics",),
    ("einc.passes",),
    ("einc.mlir.core",),
    ("einc.mlir.dense",),
    ("einc.mlir.recurrences",),
    ("einc.mlir",),
    ("einc.runtime",),
    ("einc.backend",),
    ("einc.specialize",),
    ("einc.driver",),
    ("einc.cli", "einc.dask", "einc.jitted", "einc.__main__", "einc"),
)


def stage_of(module: str) -> tuple[int, str]:
    """(stage number, the entry that claims the module), by the longest entry naming it."""
    best = None
    for number, entries in enumerate(STAGES):
        for entry in entries:
            if module == entry or module.startswith(entry + "."):
                if best is None or len(entry) > len(best[1]):
                    best = (number, entry)
    assert best is not None, f"{module} belongs to no stage of STAGES"
    return best


def test_every_module_has_a_stage():
    for module in import_graph():
        stage_of(module)


def test_stages_import_only_earlier_stages():
    graph = import_graph()
    later = [f"{m} ({stage_of(m)[1]}) imports {t} ({stage_of(t)[1]})"
             for m in sorted(graph) for t in sorted(graph[m]) if stage_of(t)[0] > stage_of(m)[0]]
    assert not later, "\n".join(later)


def test_stage_of_takes_the_longest_entry():
    assert stage_of("einc.mlir.dense.named_ops")[1] == "einc.mlir.dense"
    assert stage_of("einc.mlir.lowering")[1] == "einc.mlir"
    assert stage_of("einc.semantics.elaborate")[0] > stage_of("einc.semantics.forms.definitions")[0]


def test_no_folder_holds_more_than_twenty_modules():
    crowded = {folder: n for folder in {p.parent for p in PACKAGE_ROOT.rglob("*.py")}
               if (n := len([f for f in folder.glob("*.py") if f.name != "__init__.py"])) > 20}
    assert not crowded, crowded
