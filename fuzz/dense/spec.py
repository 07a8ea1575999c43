"""A dense program as the generator describes it: definitions over index loops whose reads have
affine subscripts, optionally under a bounds guard, reduced and wrapped in elementwise steps.
`DenseProgram.statements` writes it as Einlang; fuzz.dense.reference evaluates it with NumPy.

Top-level names (inputs, definitions, named dims, the `relu` function) are written `$name`, so a
module of many programs gives each its own prefix by replacing `$` (einlang has no `$`).
"""
from __future__ import annotations

from dataclasses import dataclass

RELU = "fn $relu(z) { if z > 0.0 { z } else { 0.0 } }"


@dataclass(frozen=True)
class Size:
    """An extent: its value in this case, and how the program writes it (a number, a named dim
    `$N1`, or an expression of one)."""
    value: int
    text: str

    @staticmethod
    def of(n: int) -> "Size":
        return Size(n, str(n))

    @property
    def static(self) -> bool:
        return self.text.isdigit()

    @property
    def declarable(self) -> bool:
        """Whether an input's type can state it: a number or a bare dim name."""
        return self.static or self.text[1:].isalnum()

    def plus(self, k: int) -> "Size":
        if self.static or k == 0:
            return Size.of(self.value + k) if self.static else self
        return Size(self.value + k, f"{self.text} {'+' if k > 0 else '-'} {abs(k)}")

    def windows(self, span: int, stride: int) -> "Size":
        """How many windows of `span` elements, `stride` apart, fit in this extent (floor)."""
        value = (self.value - span) // stride + 1
        if self.static or stride == 1:
            return Size.of(value) if self.static else self.plus(1 - span)
        return Size(value, f"({self.plus(-span).text}) / {stride} + 1")   # Einlang `/` truncates


@dataclass(frozen=True)
class Affine:
    """sum(coefficient * loop) + const, terms in the order written, coefficients positive; or
    with `base` (a read running backwards, `N - 1 - k`) base + const + terms, coefficients of
    either sign, written base first."""
    terms: tuple
    const: int = 0
    base: Size | None = None

    @staticmethod
    def of(loop: str) -> "Affine":
        return Affine(((loop, 1),))

    @staticmethod
    def backwards(loop: str, extent: Size) -> "Affine":
        """`extent - 1 - loop`: the loop's points last first."""
        return Affine(((loop, -1),), -1, extent)

    def text(self) -> str:
        if self.base is not None:
            text = self.base.text + (f" + {self.const}" if self.const > 0 else f" - {-self.const}" if self.const else "")
            for name, c in self.terms:
                text += f" {'-' if c < 0 else '+'} " + (name if abs(c) == 1 else f"{abs(c)} * {name}")
            return text
        if not self.terms:
            return str(self.const)
        text = " + ".join(name if c == 1 else f"{c} * {name}" for name, c in self.terms)
        if self.const:
            text += f" + {self.const}" if self.const > 0 else f" - {-self.const}"
        return text


@dataclass(frozen=True)
class Sub:
    """A subscript: an affine index, written through a `where` name when `name` is set; with
    `clamp` (the axis' size) clamped into the axis, `min(max(index, 0), size - 1)`: the edge
    replicated."""
    index: Affine
    name: str | None = None
    clamp: Size | None = None

    def text(self) -> str:
        text = self.name or self.index.text()
        return f"min(max({text}, 0), {self.clamp.plus(-1).text})" if self.clamp is not None else text


@dataclass(frozen=True)
class Read:
    tensor: str
    subs: tuple                    # Subs

    def text(self) -> str:
        return f"${self.tensor}[{', '.join(s.text() for s in self.subs)}]" if self.subs else f"${self.tensor}"


@dataclass(frozen=True)
class Conjunct:
    """One conjunct of a guard: `sub >= bound` (lower) or `sub < bound`, written in `style`
    0, 1 or 2 of the equivalent forms."""
    sub: Sub
    lower: bool
    bound: Size
    style: int = 0

    def text(self) -> str:
        s, b, less = self.sub.text(), self.bound.text, self.bound.plus(-1).text
        if self.lower:
            return (f"{s} >= {b}", f"{b} <= {s}", f"{s} > {less}")[self.style]
        return (f"{s} < {b}", f"{s} <= {less}", f"{b} > {s}")[self.style]


@dataclass(frozen=True)
class Loop:
    name: str
    extent: Size
    written: bool = True           # `h in 0..H`; otherwise inferred from a plain read

    def text(self) -> str:
        return f"{self.name} in 0..{self.extent.text}" if self.written else self.name


@dataclass(frozen=True)
class Reduction:
    """kind[loops](term) with term = the reads multiplied (and `factor`, when set), under
    `guard`: `if guard { term } else { fill }`, or with `guard_first_only` the guard selects
    the first read alone: `(if guard { r0 } else { fill }) * r1`."""
    kind: str                      # sum, max, min
    loops: tuple                   # Loops
    reads: tuple                   # Reads
    guard: tuple = ()              # Tests
    fill: float = 0.0
    guard_first_only: bool = False
    factor: float | None = None    # a literal factor, `* 1.0`: a near miss of every named op
    # one point of the window left out, an offset per loop: `where kh != 1 || kw != 1` (the
    # neighbours of a point without it); such a window is written out with the points it keeps
    skip: tuple = ()

    def text(self) -> str:
        reads = [r.text() for r in self.reads] + ([_float(self.factor)] if self.factor is not None else [])
        if self.guard:
            test = " && ".join(t.text() for t in self.guard)
            if self.guard_first_only:
                reads[0] = f"(if {test} {{ {reads[0]} }} else {{ {_float(self.fill)} }})"
                body = " * ".join(reads)
            else:
                body = f"if {test} {{ {' * '.join(reads)} }} else {{ {_float(self.fill)} }}"
        else:
            body = " * ".join(reads)
        wheres = self.wheres()
        if wheres:
            body += " where " + ", ".join(f"{name} = {index.text()}" for name, index in wheres)
        if self.skip:
            body += " where " + " || ".join(f"{loop.name} != {k}" for loop, k in zip(self.loops, self.skip))
        return f"{self.kind}[{', '.join(loop.text() for loop in self.loops)}]({body})"

    def wheres(self) -> list:
        named = {}
        for sub in [s for r in self.reads for s in r.subs] + [t.sub for t in self.guard]:
            if sub.name:
                named.setdefault(sub.name, sub.index)
        return list(named.items())


@dataclass(frozen=True)
class Step:
    """An elementwise step applied to a definition's value: `bias` adds `read` (on the left when
    `left`), `relu`, `scale` multiplies by `constant`, `divide` divides by it, `one_minus`,
    `add_reduced` adds `reduction` (over loops of its own, of another tensor, as attention's
    `P V / sum[t](P)` combines a contraction with a row reduction); `subtract` and `divide_by`
    take `read`, or `reduction` written inline (`- max[u](s[n, i, u])`), from the value, `exp`
    (std::math's): softmax's steps; `mask` keeps the value where `read` (a bool input) holds, 0.0
    elsewhere (dropout's mask)."""
    op: str
    read: Read | None = None
    constant: float = 0.0
    left: bool = False
    reduction: "Reduction | None" = None


@dataclass(frozen=True)
class Definition:
    """`let $name[loops] = steps(value);` (`whole`: `let $name = steps($source);`)."""
    name: str
    loops: tuple                   # Loops of the result
    value: Reduction | Read
    steps: tuple = ()
    whole: bool = False

    def text(self) -> str:
        expr, compound = self.value.text(), False
        for step in self.steps:
            expr, compound = _step_text(step, expr, compound)
        head = f"${self.name}"
        if self.loops and not self.whole:
            head += f"[{', '.join(loop.text() for loop in self.loops)}]"
        return f"let {head} = {expr};"


def _step_text(step: Step, expr: str, compound: bool) -> tuple[str, bool]:
    """The step applied to `expr`; `compound`: whether `expr` is a sum that an operator binding
    tighter (or a `-` on its left) must parenthesize."""
    tight = f"({expr})" if compound else expr
    if step.op == "bias":
        return (f"{step.read.text()} + {expr}" if step.left else f"{expr} + {step.read.text()}"), True
    if step.op == "relu":
        return f"$relu({expr})", False
    if step.op == "scale":
        return f"{tight} * {_float(step.constant)}", False
    if step.op == "divide":
        return f"{tight} / {_float(step.constant)}", False
    if step.op == "one_minus":
        return f"1.0 - {tight}", True
    if step.op == "add_reduced":
        return f"{expr} + {step.reduction.text()}", True
    if step.op == "subtract":
        return f"{expr} - {_operand_text(step)}", True
    if step.op == "divide_by":
        return f"{tight} / {_operand_text(step)}", False
    if step.op == "exp":
        return f"std::math::exp({expr})", False
    if step.op == "mask":
        return f"(if {step.read.text()} {{ {expr} }} else {{ 0.0 }})", False
    raise ValueError(step.op)


def _operand_text(step: Step) -> str:
    return step.read.text() if step.read is not None else step.reduction.text()


def _float(value: float) -> str:
    text = repr(float(value))
    return text if "e" in text or "." in text else text + ".0"


@dataclass(frozen=True)
class Input:
    name: str
    shape: tuple                   # Sizes
    dtype: str | None = None       # "bool" for a mask; otherwise the program's


@dataclass(frozen=True)
class DenseProgram:
    dtype: str                     # f32 or f64: every input and definition
    inputs: tuple                  # Inputs
    definitions: tuple             # Definitions, in order
    outputs: tuple                 # names of definitions

    def statements(self, prefix: str = "") -> list[str]:
        lines = [f"let ${i.name}: [{i.dtype or self.dtype}; {', '.join(s.text for s in i.shape)}];"
                 for i in self.inputs]
        if any(s.op == "relu" for d in self.definitions for s in d.steps):
            lines.append(RELU)
        lines += [d.text() for d in self.definitions]
        return [line.replace("$", prefix) for line in lines]


def render_dense(program: DenseProgram, prefix: str = "") -> list[str]:
    return program.statements(prefix)
