"""Module loading: find, read and parse every module a program reaches, each file once.

Module paths are tuples of names: the entry file is `()`, `mod helpers;` in it is `("helpers",)`,
`std::math::basic` is `("std", "math", "basic")`. Where a module's file lives:

- `std::a::b` is `<stdlib>/a/b.ein` or `<stdlib>/a/b/mod.ein` (the stdlib folder is `einc/stdlib`,
  overridable by argument or the EINC_STDLIB environment variable);
- a child `c` of the entry or of a `mod.ein` file in folder D is `D/c.ein` or `D/c/mod.ein`; a child
  of any other file `D/x.ein` lives in `D/x/` (as in Rust), so two files never claim one module;
- `mod name { .. }` is an inline module: its items form a Module of their own;
- a folder without `mod.ein` is a module with no items, so `std` itself and namespace folders work.

Modules are found by path, not only through `mod` declarations: `use std::math::basic::sqrt;` or
`crate::util::f` loads the file it names. Loading is a walk over a dict of finished modules, so
modules that import each other are fine (functions are hoisted); the only real cycle is a file
that, through `mod` declarations, contains itself (possible with symlinks), which is E010.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Callable, Iterator, Optional

from einc.diagnostics import IMPORT, IO, SYNTAX, CompileError, SourceMap, Span, error, file_problem
from einc.syntax import ast
from einc.syntax.parser import parse

ModPath = tuple[str, ...]

DEFAULT_STDLIB = FsPath(__file__).resolve().parents[2] / "stdlib"
_PATH_HEADS = ("std", "crate", "self", "super")
# `python::..` names Python modules, called during the build (einc.semantics.forms.python_calls), not
# Einlang files; `python::math` is std::math.
PYTHON = "python"
PYTHON_MATH = ("std", "math")


def stdlib_dir(override: Optional[os.PathLike | str] = None) -> FsPath:
    if override is not None:
        return FsPath(override)
    env = os.environ.get("EINC_STDLIB")
    return FsPath(env) if env else DEFAULT_STDLIB


def library_module(path: os.PathLike | str) -> Optional[ModPath]:
    """`("std", "ml", "layers")` for the file of that standard library module, else None."""
    try:
        parts = FsPath(path).resolve().relative_to(stdlib_dir().resolve()).with_suffix("").parts
    except ValueError:
        return None
    return ("std",) + (parts[:-1] if parts and parts[-1] == "mod" else parts)


def stdlib_modules_defining(name: str) -> list[str]:
    """`std::..` paths of the library modules that declare `pub fn name`, for hints. A text
    search, not a parse: it only has to be right about where a name lives."""
    root = stdlib_dir()
    declaration = re.compile(rf"^\s*pub\s+fn\s+{re.escape(name)}\s*[(<]", re.MULTILINE)
    found = []
    for path in sorted(root.rglob("*.ein")):
        if declaration.search(path.read_text()):
            parts = path.relative_to(root).with_suffix("").parts
            found.append("::".join(("std",) + (parts[:-1] if parts[-1] == "mod" else parts)))
    return found


@dataclass
class Program:
    """Every module a compilation reaches, and the sources for rendering diagnostics."""

    entry: ast.Module
    modules: dict[ModPath, ast.Module]          # entry is ()
    sources: SourceMap
    files: dict[ModPath, Optional[FsPath]] = field(default_factory=dict)  # None: inline or folder

    def module_path(self, current: ModPath, segments: list[str]) -> Optional[ModPath]:
        """The loaded module that `segments`, written inside module `current`, names, if any."""
        return normalize(current, segments, lambda p: p in self.modules)


def normalize(current: ModPath, segments: list[str],
              exists: Callable[[ModPath], bool]) -> Optional[ModPath]:
    """Turn a written module path into an absolute one.

    `std::..` is absolute, `crate::..` starts at the entry, `self::`/`super::` at the current module
    and its parent. A bare first name is a child of the current module if there is one, else a
    module at the crate root (so `pub use basic::*;` in std/math/mod.ein means std::math::basic).
    """
    head = segments[0]
    if head == "std":
        candidates = [tuple(segments)]
    elif head in ("crate", "self", "super"):
        anchored = _anchor(current, segments)
        if anchored is None:
            return None
        candidates = [anchored]
    else:
        candidates = [current + tuple(segments), tuple(segments)]
    for candidate in candidates:
        if exists(candidate):
            return candidate
    return None


def _anchor(current: ModPath, segments: list[str]) -> Optional[ModPath]:
    """Apply a leading `crate::` or `self::` and any number of `super::` to `current`."""
    base, i = current, 0
    if segments[0] == "crate":
        base, i = (), 1
    elif segments[0] == "self":
        i = 1
    while i < len(segments) and segments[i] == "super":
        if not base:
            return None   # `super` above the crate root
        base, i = base[:-1], i + 1
    return base + tuple(segments[i:])


def load_program(entry_path: os.PathLike | str, stdlib: Optional[os.PathLike | str] = None) -> Program:
    """Read and parse the entry file and every module it reaches."""
    path = FsPath(entry_path)
    return _Loader(path.parent, stdlib_dir(stdlib)).run(read_source(path), str(path), path)


def load_source(text: str, filename: str = "<input>", root: Optional[os.PathLike | str] = None,
                stdlib: Optional[os.PathLike | str] = None) -> Program:
    """Like load_program for source held in memory; `root` is the folder project modules live in
    (default: the current directory)."""
    root_dir = FsPath(root) if root is not None else FsPath(".")
    return _Loader(root_dir, stdlib_dir(stdlib)).run(text, filename, None)


def read_source(path: FsPath) -> str:
    """A source file's text. Einlang source is UTF-8: a byte that is not is E001 at its place."""
    try:       # a byte order mark, as some Windows editors write, is no part of the program
        data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except OSError as exc:
        raise error(IO, f"cannot read {path}: {file_problem(exc)}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, data, exc) from None


def _not_utf8(path: FsPath, data: bytes, exc: UnicodeDecodeError) -> CompileError:
    before = data[:exc.start]
    line = before.count(b"\n") + 1
    line_start = before.rfind(b"\n") + 1
    col = len(before[line_start:].decode("utf-8", "replace")) + 1
    err = error(SYNTAX, f"the file is not UTF-8 text (byte 0x{data[exc.start]:02x})",
                Span(str(path), line, col, line, col + 1), hint="save the file as UTF-8")
    err.sources = SourceMap()
    err.sources.add(str(path), data.decode("utf-8", "replace"))
    return err


class _Loader:
    def __init__(self, root: FsPath, stdlib: FsPath):
        self.root = root
        self.stdlib = stdlib
        self.sources = SourceMap()
        self.modules: dict[ModPath, ast.Module] = {}
        self.files: dict[ModPath, Optional[FsPath]] = {}
        self.child_dirs: dict[ModPath, FsPath] = {}   # where each module's children live
        self.parsed: dict[FsPath, ast.Module] = {}    # parse each file once
        self.pending: list[ModPath] = []               # loaded but not yet scanned for imports

    def run(self, text: str, filename: str, path: Optional[FsPath]) -> Program:
        try:
            return self._load_all(text, filename, path)
        except CompileError as err:
            err.sources = self.sources      # so parse errors in any file show their line
            raise

    def _load_all(self, text: str, filename: str, path: Optional[FsPath]) -> Program:
        self.sources.add(filename, text)
        entry = parse(text, filename)
        if path is not None:
            self.parsed[path.resolve()] = entry
        self._add((), entry, path, self.root)
        while self.pending:
            self._scan(self.pending.pop())
        return Program(entry, self.modules, self.sources, self.files)

    # ------------------------------------------------ registering modules

    def _add(self, mod_path: ModPath, module: ast.Module, file: Optional[FsPath],
             child_dir: FsPath) -> None:
        self.modules[mod_path] = module
        self.files[mod_path] = file
        self.child_dirs[mod_path] = child_dir
        self.pending.append(mod_path)
        # Inline modules are registered with their parent so that paths into them resolve.
        for item in module.items:
            if isinstance(item, ast.ModDecl) and item.body is not None:
                inline = ast.Module(module.path, item.body, span=item.span)
                self._add(mod_path + (item.name,), inline, None, child_dir / item.name)

    def exists(self, mod_path: ModPath) -> bool:
        """Is there a module at this absolute path? Loads it (not its imports) on first sight."""
        if mod_path in self.modules:
            return True
        if mod_path == ("std",):
            if not self.stdlib.is_dir():
                return False
            self._add(("std",), ast.Module(str(self.stdlib), [], span=_nowhere(self.stdlib)),
                      None, self.stdlib)
            return True
        if not mod_path or not self.exists(mod_path[:-1]):
            return False
        return self._find_child(mod_path)

    def _find_child(self, mod_path: ModPath) -> bool:
        if mod_path[-1] == "mod":
            return False     # `m/mod.ein` is `m` itself; `m::mod` can only be an item (std::math::mod)
        folder = self.child_dirs[mod_path[:-1]] / mod_path[-1]
        for file, child_dir in ((folder.with_suffix(".ein"), folder), (folder / "mod.ein", folder)):
            if file.is_file():
                self._add(mod_path, self._parse_file(file), file, child_dir)
                return True
        if folder.is_dir():
            self._add(mod_path, ast.Module(str(folder), [], span=_nowhere(folder)), None, folder)
            return True
        return False

    def _parse_file(self, file: FsPath) -> ast.Module:
        key = file.resolve()
        if key in self.parsed:
            raise error(IMPORT, f"module file {file} includes itself through `mod` declarations")
        text = read_source(file)
        self.sources.add(str(file), text)
        module = parse(text, str(file))
        self.parsed[key] = module
        return module

    # ------------------------------------------------ following imports

    def _scan(self, mod_path: ModPath) -> None:
        module = self.modules[mod_path]
        for item in module.items:
            if isinstance(item, ast.ModDecl) and item.body is None:
                _placed_at(item.span, self._require_child, mod_path, item)
        for node in _walk(module.items):
            if isinstance(node, ast.Use):
                _placed_at(node.span, self._require_use, mod_path, node)
            elif isinstance(node, ast.Path) and node.segments[:2] == [PYTHON, "math"]:
                self.exists(PYTHON_MATH)
            elif isinstance(node, ast.Path) and node.segments[0] in _PATH_HEADS:
                # Best effort (loads the module if there is one): a path that names no module
                # is reported by name resolution, which knows what the path was meant to be.
                _placed_at(node.span, normalize, mod_path, node.segments[:-1], self.exists)

    def _require_child(self, mod_path: ModPath, decl: ast.ModDecl) -> None:
        if not self.exists(mod_path + (decl.name,)):
            folder = self.child_dirs[mod_path]
            raise error(IMPORT, f"cannot find module `{decl.name}`", decl.span,
                        f"create {folder / (decl.name + '.ein')} or {folder / decl.name / 'mod.ein'}")

    def _require_use(self, mod_path: ModPath, use: ast.Use) -> None:
        if use.path[0] == PYTHON:
            if use.path[1:2] == ["math"]:
                self.exists(PYTHON_MATH)
            return
        whole = normalize(mod_path, use.path, self.exists)
        if whole is not None:
            return
        # `use a::b::c;` may import the item c of module a::b.
        if use.items is None and len(use.path) > 1 and normalize(mod_path, use.path[:-1], self.exists):
            return
        shown = use.path if use.items is not None or len(use.path) == 1 else use.path[:-1]
        raise error(IMPORT, f"unresolved module `{'::'.join(shown)}`", use.span,
                    self._missing_hint(mod_path, shown))

    def _missing_hint(self, mod_path: ModPath, segments: list[str]) -> str:
        if segments[0] == "std":
            where = self.stdlib.joinpath(*segments[1:])
            return f"no {where}.ein or {where / 'mod.ein'} in the standard library"
        folder = self.child_dirs[mod_path].joinpath(*segments)
        return f"no module file {folder}.ein or {folder / 'mod.ein'}"


def _placed_at(span: Span, load, *args):
    """`load(*args)`, whose errors about a module file it reads (one that cannot be read, or that
    includes itself) are placed at `span`, the `mod`, `use` or path that made it read the file."""
    try:
        return load(*args)
    except CompileError as err:
        for diag in err.diagnostics:
            if diag.span is None:
                diag.span = span
        raise


def _nowhere(folder: FsPath) -> Span:
    return Span(str(folder), 1, 1, 1, 1)


def _walk(nodes: list) -> Iterator[ast.Node]:
    """Every AST node under `nodes`, except inside inline modules (they are scanned on their own,
    relative to themselves)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.ModDecl):
            continue
        for value in vars(node).values():
            if isinstance(value, ast.Node):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.Node))
