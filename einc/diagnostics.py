"""Diagnostics: every user-facing error carries a code, a message, a source span and a hint.

Rendering follows rustc: the header line, the location arrow, the source line and a caret
under the span. Compiler stages raise `CompileError` with one or more diagnostics; the CLI
prints them and exits 1. Anything else escaping a stage is a compiler bug.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Codes of LANGUAGE.md section 8.
SYNTAX = "E001"
TYPE = "E002"
UNDEFINED = "E003"
SHAPE = "E004"
BOUNDS = "E005"
VALUE = "E006"
RECURRENCE = "E007"
IO = "E009"
IMPORT = "E010"
UNSUPPORTED = "E011"


@dataclass(frozen=True)
class Span:
    """A region of one source file; lines and columns count from 1, `end_col` is exclusive."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def within(self, other: "Span") -> bool:
        return (self.file == other.file and (other.line, other.col) <= (self.line, self.col)
                and (self.end_line, self.end_col) <= (other.end_line, other.end_col))


@dataclass
class Label:
    span: Span
    note: str = ""
    call_site: bool = False        # "in this call to `f`": where an error inside `f` came from


@dataclass
class Diagnostic:
    code: str
    message: str
    span: Span | None = None
    hint: str = ""
    notes: list[Label] = field(default_factory=list)
    label: str = ""                # said under the primary span's caret

    def render(self, sources: "SourceMap") -> str:
        out = [f"error[{self.code}]: {self.message}"]
        if self.span is not None:
            out += _snippet(self.span, self.label, sources)
        for label in self.notes:
            out += _snippet(label.span, label.note, sources)
        if self.hint:
            out.append(f"  = hint: {self.hint}")
        return "\n".join(out)

    def as_json(self, sources: "SourceMap") -> dict:
        """The machine-readable form `--message-format json` prints (schema in docs/CLI.md):
        every span labelled, the primary one first; call sites apart as notes."""
        primary = [_located(self.span, self.label, primary=True)] if self.span is not None else []
        labels = primary + [_located(n.span, n.note, primary=False) for n in self.notes if not n.call_site]
        return {
            "code": self.code,
            "severity": "error",
            "message": self.message,
            **_position(self.span),
            "labels": labels,
            "notes": [_located(n.span, n.note) for n in self.notes if n.call_site],
            "hints": [self.hint] if self.hint else [],
            "rendered": self.render(sources),
        }


def _position(span: Span | None) -> dict:
    if span is None:
        return {"file": None, "line": None, "column": None, "end": None}
    return {"file": span.file, "line": span.line, "column": span.col,
            "end": {"line": span.end_line, "column": span.end_col}}


def _located(span: Span, message: str, **flags: bool) -> dict:
    return {"message": message, **_position(span), **flags}


class SourceMap:
    """File name -> source text, so diagnostics can show the offending line."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}     # split once: every read's diagnostics ask

    def add(self, name: str, text: str) -> None:
        self._texts[name] = text
        self._lines.pop(name, None)

    def items(self) -> list[tuple[str, str]]:
        """(file name, text) of every file read."""
        return list(self._texts.items())

    def line(self, name: str, lineno: int) -> str | None:
        text = self._texts.get(name)
        if text is None:
            return None
        lines = self._lines.get(name)
        if lines is None:
            lines = self._lines[name] = text.splitlines()
        return lines[lineno - 1] if 0 < lineno <= len(lines) else None

    def text(self, span: Span | None) -> str:
        """The source text `span` covers ("" where unknown); lines joined by a space."""
        if span is None:
            return ""
        lines = [self.line(span.file, n) or "" for n in range(span.line, span.end_line + 1)]
        if len(lines) == 1:
            return lines[0][span.col - 1:span.end_col - 1]
        parts = [lines[0][span.col - 1:]] + lines[1:-1] + [lines[-1][:span.end_col - 1]]
        return " ".join(part.strip() for part in parts)


def _snippet(span: Span, note: str, sources: SourceMap) -> list[str]:
    gutter = " " * len(str(span.line))
    out = [f"{gutter}--> {span}"]
    text = sources.line(span.file, span.line)
    if text is None:
        return out + ([f"{gutter} = {note}"] if note else [])
    end = span.end_col if span.end_line == span.line else len(text) + 1
    width = max(1, end - span.col)
    # the line's own tabs before the span, so the caret stays under it at any tab width
    pad = "".join(c if c == "\t" else " " for c in text[:span.col - 1])
    caret = pad + "^" * width + (f" {note}" if note else "")
    out += [f"{gutter} |", f"{span.line} | {text}", f"{gutter} | {caret}"]
    return out


# OSError kinds a user meets with a file named on the command line or in a program, in words
# (Python's own text, "[Errno 2] No such file or directory: 'x'", repeats the path and the errno)
_FILE_PROBLEMS = {FileNotFoundError: "no such file", IsADirectoryError: "it is a directory",
                  PermissionError: "permission denied", NotADirectoryError: "a folder on its path is a file"}


def file_problem(err: OSError) -> str:
    """What is wrong with the file `err` is about, as a few plain words."""
    for kind, words in _FILE_PROBLEMS.items():
        if isinstance(err, kind):
            return words
    return (err.strerror or type(err).__name__).lower()


def first_line(err: Exception) -> str:
    """The first line of an exception's text (a library's reason a file is not valid)."""
    text = (err.args[0] if err.args and isinstance(err.args[0], str) else str(err)).strip()
    return text.splitlines()[0] if text else type(err).__name__


class BuildWarning(UserWarning):
    """A module was built, but not as asked: e.g. again with other IREE flags after IREE's
    compiler crashed, its kernels possibly slower."""


class OptionError(ValueError):
    """A build option the program cannot take (`--dim` naming no dim of it): a mistake in how
    the compiler was asked, reported without a source location."""


class CompileError(Exception):
    """Raised by any stage for errors in the user's program."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = diagnostics
        self.sources: SourceMap | None = None     # attached by the stage that knows the files
        super().__init__("; ".join(f"{d.code}: {d.message}" for d in diagnostics))

    def __reduce__(self):
        """Pickled as its diagnostics (a build in a worker process raises it to its parent)."""
        return type(self), (self.diagnostics,)

    def __str__(self) -> str:
        """`file:line:col: error[Ennn]: message`, a line per diagnostic (no location prefix
        for one that has none)."""
        return "\n".join(f"{f'{d.span}: ' if d.span is not None else ''}error[{d.code}]: {d.message}"
                         for d in self.diagnostics)

    def render(self, sources: SourceMap | None = None) -> str:
        sources = sources or self.sources or SourceMap()
        return "\n\n".join(d.render(sources) for d in self.diagnostics)

    def called_from(self, span: Span | None, callee: str) -> "CompileError":
        """Add the call site to each diagnostic raised inside a function's body, so an error deep
        in the standard library still points at the user's line (the outermost calls are the
        ones kept when the chain is long, e.g. a recursion that never ends)."""
        for diag in self.diagnostics:
            calls = [n for n in diag.notes if n.call_site]
            if span is None or span == diag.span or any(n.span == span for n in calls):
                continue
            if len(calls) >= MAX_CALL_NOTES:
                diag.notes.remove(calls[0])
            diag.notes.append(Label(span, f"{_CALL_NOTE} `{callee}`", call_site=True))
        return self


_CALL_NOTE = "in this call to"
MAX_CALL_NOTES = 4


def note_calls(err: CompileError, call_chains: dict) -> CompileError:
    """Call notes for errors a stage after elaboration finds inside a function's body (a
    lowering limit met in the standard library): the chain of calls that ran the innermost body
    holding the error, or the outermost call of each chain when several calls ran it."""
    for diag in err.diagnostics:
        if diag.span is None or any(n.call_site for n in diag.notes):
            continue
        bodies = [body for body in call_chains if diag.span.within(body)]
        if not bodies:
            continue
        chains = call_chains[min(bodies, key=lambda s: (s.end_line - s.line, s.end_col - s.col))]
        calls = list(chains[0]) if len(chains) == 1 else [chain[-1] for chain in chains]
        diag.notes += [Label(span, f"{_CALL_NOTE} `{callee}`", call_site=True) for span, callee in calls]
    return err


def error(code: str, message: str, span: Span | None = None, hint: str = "",
          notes: list[Label] | None = None, label: str = "") -> CompileError:
    return CompileError(Diagnostic(code, message, span, hint, notes or [], label))
