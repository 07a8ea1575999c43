"""A program structure written as Einlang source.

Parentheses are the fewest the grammar needs (einc/syntax/grammar.lark: loosest first `||`,
`&&`, `== !=`, `< > <= >=`, `+ -`, `* / %`, `as`, `**`, prefix `- !`), so generated programs
exercise the parser's precedence too. Top-level names get `prefix`, so many programs can share
one module. An unsuffixed literal that is not f32/i32 is written with its suffix unless the
other operand of its arithmetic or comparison gives it the type (as in Rust); f16 and bf16 have
no suffix, so such a literal is cast: `(0.5 as f16)`.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

from fuzz.programs.structure import (
    Binary, Block, Bound, Call, Cast, Clause, Define, Derivative, DimRef, Function, Group, IfElse, Index,
    FLOATS, HALF_TYPES, Input, Lit, Local, Match, Pattern, Prelude, Prev, PrevRow, Program, Read, Recur, Reduce, RestRead,
    RowMap, RowMatch, StepTensor, Unary, Var, Whole, PARAM, ROW, children, is_literal, trailing_reduce, walk, weak_literals)

LEVELS = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4,
          "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}
CAST, POWER, PREFIX, ATOM = 7, 8, 9, 10
DEFAULT_TYPES = ("f32", "i32", "bool")


def render_program(program: Program, prefix: str = "") -> str:
    return "\n".join(render_statements(program, prefix)) + "\n"


def render_statements(program: Program, prefix: str = "") -> list[str]:
    """The program's statements, one per line (a group's clauses in their source order)."""
    names = Names(prefix, program)
    rows = {item.name: item for item in program.items if isinstance(item, RowMap)}
    lines = [_input(inp, names) for inp in program.inputs]
    for item in program.items:
        lines += _per_point(item, rows[item.of], names) if getattr(item, "per_point", "") else _item(item, names)
    return lines + [f'save_npy("{names(name)}.npy", {names(name)});' for name in program.saves]


class Names:
    """Top-level names (bindings, functions, named dims) get the prefix; local ones do not."""

    def __init__(self, prefix: str, program: Program):
        self.prefix = prefix
        self.top = set(program.bindings()) | set(program.functions()) | {d for d, _ in program.dims}

    def __call__(self, name: str) -> str:
        return self.prefix + name if name in self.top else name


def _input(inp: Input, names: Names) -> str:
    return f"let {names(inp.name)}: {_type(inp.dtype, inp.shape, names)};"


def _type(dtype: str, shape: tuple, names: Names) -> str:
    if not shape:
        return dtype
    return f"[{dtype}; {', '.join(bound(b, names) for b in shape)}]"


def _type_dim(b: Bound, names: Names) -> str:
    """A dim as a type writes it: a number or a name; `?` for a length such as `N - 1`, which a
    type cannot state (docs/LANGUAGE.md, Inputs)."""
    plain = not b.clamp and b.index is None and (b.dim is None or b.const == 0)
    return bound(b, names) if plain else "?"


def _item(item, names: Names) -> list[str]:
    if isinstance(item, Define):
        return [_clause(item, k, names, {item.name}) for k in range(len(item.clauses))]
    if isinstance(item, Group):
        members = {m.name: m for m in item.members}
        return [text for name, k in item.layout for text in _member_clause(members[name], k, names, set(members))]
    if isinstance(item, Whole):
        return [f"let {names(item.name)} = {expr(item.expr, names)};"]
    if isinstance(item, RowMap):
        return _row_map(item, names)
    if isinstance(item, Function):
        return [_function(item, names)]
    if isinstance(item, Derivative):
        of, wrt = item.outer.format(names(item.of)), item.inner.format(names(item.wrt))
        value = f"{item.scale}@{of} / @{wrt}"
        if not item.padded:
            return [f"let {names(item.name)} = {value};"]
        rank, n = item.padded[0], bound(item.padded[1], names)
        at = ", ".join(f"pj{k}" for k in range(rank))
        slots = ", ".join([f"pj{k}" for k in range(rank - 1)] + [f"pj{rank - 1} in 0..({n}) + 1"])
        return [f"let {names(item.name)}_j = {value};",
                f"let {names(item.name)}[{slots}] = if pj{rank - 1} < ({n}) {{ {names(item.name)}_j[{at}] }} else {{ 0.0 }};"]
    raise TypeError(f"not a statement: {item!r}")


def _member_clause(define: Define, k: int, names: Names, own: set) -> list[str]:
    """Clause k of a recurrence member. A member drawn `one_if` whose clauses are a start over
    `t in 0..s` and the steps from s, alike in their other axes and without `where`s, is written
    once at its first clause: `let r[t in 0..T, ..] = if t >= s { steps } else { start };` (for
    s = 1, `if t == 0 { start } else { steps }`): the same points (LANGUAGE.md section 4). A bool
    member drawn `short` is written `(t < s && start) || (t >= s && steps)`, whose `&&` guards
    the steps' reads of `t - 1`."""
    start, steps = (define.clauses + (None, None))[:2]
    if not (len(define.clauses) == 2 and _start_then_steps(start, steps)):
        return [_clause(define, k, names, own)]
    s, t = steps.slots[0].lo.const, Index("t")
    if not (define.one_if or define.short):
        return [_clause(define, k, names, own)]
    if k == 1:
        return []
    body = (IfElse(Binary("==", t, Lit(0, "i32"), "bool"), start.body, steps.body, define.dtype) if s == 1 else
            IfElse(Binary(">=", t, Lit(s, "i32"), "bool"), steps.body, start.body, define.dtype))
    if define.short:
        body = Binary("||", Binary("&&", Binary("<", t, Lit(s, "i32"), "bool"), start.body, "bool"),
                      Binary("&&", Binary(">=", t, Lit(s, "i32"), "bool"), steps.body, "bool"), "bool")
    whole = Clause((replace(steps.slots[0], lo=Bound(0)),) + steps.slots[1:], body)
    return [_clause(replace(define, clauses=(whole,)), 0, names, own)]


def _start_then_steps(start, steps) -> bool:
    first, then = start.slots[0], steps.slots[0]
    return (first.var == then.var == "t" and first.lo == Bound(0) and first.hi == then.lo and then.lo.dim is None
            and then.lo.index is None and not then.lo.clamp and start.slots[1:] == steps.slots[1:]
            and not start.wheres and not steps.wheres)


def _clause(define: Define, k: int, names: Names, own: set) -> str:
    clause = define.clauses[k]
    head = names(define.name)
    if clause.slots:
        head += "[" + ", ".join(_slot(s, names) for s in clause.slots) + "]"
    if define.annotate:
        head += f": {define.dtype}"
    body = expr(clause.body, names, literals_typed_by_other_clauses(define, k, own))
    if clause.wheres and trailing_reduce(clause.body) and not _bare_where_stays(clause):
        body = f"({body})"       # a `where` right after a reduction's `)` would be the reduction's
    text = f"let {head} = {body}"
    if clause.wheres:
        text += " where " + ", ".join(_where(w, names) for w in clause.wheres)
    return text + ";"


def literals_typed_by_other_clauses(define: Define, k: int, own: set) -> bool:
    """Whether clause k is a choice of untyped literals and another clause of its definition is
    typed by what it computes from, which gives them its type: then they are written without a
    suffix. Reads of the definition itself (or of its recurrence group: `own`) type nothing."""
    body = define.clauses[k].body
    return define.dtype in FLOATS and isinstance(body, IfElse) and weak_literals(body) and \
        any(_typed_by_data(c.body, define.dtype, own) for j, c in enumerate(define.clauses) if j != k)


def _typed_by_data(node, dtype: str, own: set) -> bool:
    """Whether a read of another tensor, a cast or a suffixed literal of `dtype` gives `node` its
    value's type (conditions, being bool, and a match's scrutinee do not)."""
    if getattr(node, "dtype", None) == dtype and (
            (isinstance(node, Read) and node.name not in own) or isinstance(node, Cast) or
            (isinstance(node, Lit) and node.suffix)):
        return True
    if getattr(node, "dtype", None) == "bool":
        return False
    if isinstance(node, IfElse) and _decided_at_build(node.cond):
        return all(_typed_by_data(b, dtype, own) for b in (node.then, node.other))
    if isinstance(node, Match) and _decided_at_build(node.scrutinee):
        return all(_typed_by_data(arm.body, dtype, own) for arm in node.arms)
    parts = tuple(arm.body for arm in node.arms) if isinstance(node, Match) else children(node)
    return any(_typed_by_data(p, dtype, own) for p in parts)


def _decided_at_build(choice) -> bool:
    """Whether einc may decide an `if`'s condition or a `match`'s scrutinee at build time (it
    reads no tensor): then it elaborates only the branch taken, which alone types the value
    (einc/semantics/core/untaken_branches.py), so every branch must type it."""
    return not any(isinstance(n, (Read, Var)) for n in walk(choice))


def _bare_where_stays(clause: Clause) -> bool:
    """Whether the clause's `where`s, written bare after its body's trailing reduction, are still
    the clause's (docs/DECISIONS.md, "A `where` after a value ending in a reduction"): in a
    definition when they name nothing the reduction does (`sum[j](x[j]) where i < 2`), or when
    a binding of theirs is read outside the reduction. Names are compared as every name the
    nodes carry, a superset of what the text reads, so a doubt keeps the parentheses."""
    reduce = trailing_reduce(clause.body)
    if reduce is None or reduce.guard is not None:      # a reduction with its own `where` takes no other
        return True
    wheres = _name_counts(clause.wheres)
    inside = _name_counts(reduce)
    if clause.slots and not set(wheres) & set(inside):
        return True
    body = _name_counts(clause.body)
    return any(body.get(w.name, 0) > inside.get(w.name, 0) for w in clause.wheres if w.name)


_NOT_NAMES = ("op", "dtype", "style", "kind")


def _name_counts(node, counts: dict | None = None) -> dict:
    """How often each string a node below `node` carries (names, index variables, dims) occurs."""
    counts = {} if counts is None else counts
    if isinstance(node, str):
        counts[node] = counts.get(node, 0) + 1
    elif isinstance(node, (tuple, list)):
        for x in node:
            _name_counts(x, counts)
    elif is_dataclass(node):
        for f in fields(node):
            if f.name not in _NOT_NAMES:
                _name_counts(getattr(node, f.name), counts)
    return counts


def _slot(slot, names: Names) -> str:
    if slot.var is None:
        return str(slot.lo.const)
    if not slot.explicit:
        return slot.var
    return f"{slot.var} in {bound(slot.lo, names)}..{bound(slot.hi, names)}"


def _where(where, names: Names) -> str:
    body = expr(where.expr, names)
    return body if where.name is None else f"{where.name} = {body}"


def _row_map(item: RowMap, names: Names) -> list[str]:
    fn = names(item.name) + "_row"
    rows, length = bound(item.shape[0], names), _type_dim(item.shape[1], names)
    if item.unpacked:
        parts = ", ".join(f"c{k}" for k in range(item.shape[1].const))
        row, generator = f"[{parts}]", f"({parts}) in {names(item.source)}"
    elif item.through:
        row, generator = f"{names(item.source)}[{names(item.through)}[i]]", f"i in 0..len({names(item.through)})"
    else:
        row, generator = f"{names(item.source)}[i]", f"i in 0..{rows}"
    row = _converted(item, row)
    params = f"{ROW}: [{item.dtype}; {length}]"
    if item.param:
        params += f", {PARAM}: " + (f"[{item.dtype}; {item.param_length}]" if item.param_length else item.dtype)
        row += f", {names(item.param)}"
    if item.scanned:
        return _scanned_rows(item, fn, rows, params, row, generator, names)
    split = "let u[k] = w[k] where k % 2 == 0; let u[k] = w[k] where k % 2 == 1; " if item.split else ""
    body = f"{item.op}({expr(item.expr, names)})" if item.whole \
        else f"let w = {expr(item.expr, names)}; {split}{item.op}[k]({'u' if item.split else 'w'}[k])"
    call = f"{fn}({row})"
    if item.through:
        call = f"if {names(item.through)}[i] >= 0 {{ {call} }} else {{ 0.0 }}"
    return [f"fn {fn}({params}) -> {item.dtype} {{ {body} }}",
            f"let {names(item.name)} = " + (f"[v | {generator}, v = {call}];"
                                            if item.local else f"[{call} | {generator}];")]


def _converted(item: RowMap, row: str) -> str:
    """The row as the row function is given it: converted first (RowMap.converted)."""
    if not item.converted:
        return row
    return f"({row} as [f32]) as [{item.dtype}]" if item.dtype in HALF_TYPES else f"{row} as [{item.dtype}]"


def _scanned_rows(item: RowMap, fn: str, rows: str, params: str, row: str, generator: str,
                  names: Names) -> list[str]:
    """The row function's values for every row, folded along each row by a recurrence whose row
    index takes its extent from the matrix it reads (RowMap.scanned)."""
    n, length = bound(item.shape[1], names), _type_dim(item.shape[1], names)
    before, through = ("d[i, k, 1]", f"let d[i, k in 1..{n}, c in 0..2] = a[i, k - 1]; ") if item.ranked \
        else ("a[i, k - 1]", "")
    step = {"sum": f"{before} + m[i, k]"}.get(item.op, f"{item.op}({before}, m[i, k])")
    matrix = f"[{fn}({row}) | {generator}]" if not item.local else f"[v | {generator}, v = {fn}({row})]"
    return [f"fn {fn}({params}) {{ {expr(item.expr, names)} }}",
            f"fn {fn}_fold(m: [{item.dtype}; {_type_dim(item.shape[0], names)}, {length}]) -> [{item.dtype}; "
            f"{_type_dim(item.shape[0], names)}] {{ let a[i, 0] = m[i, 0]; {through}let a[i, k in 1..{n}] = {step}; "
            f"[a[i, {n} - 1] | i in 0..{rows}] }}",
            f"let {names(item.name)} = {fn}_fold({matrix});"]


def _per_point(item: Derivative, rows: RowMap, names: Names) -> list[str]:
    """A gradient of a row function by its param asked per row, or summed over the rows
    (Derivative.per_point); for a scanned row map, of a loss that folds the row function's row by
    a recurrence inside a function (`let a[k in 1..n] = a[k - 1] + w[k];`), the same value."""
    g, fn, p = names(item.name), names(rows.name) + "_row", names(rows.param)
    row = _converted(rows, f"{names(rows.source)}[i]")
    lines, loss = [], fn
    if rows.scanned:
        n, loss = bound(rows.shape[1], names), g + "_loss"
        step = {"sum": "a[k - 1] + w[k]"}.get(rows.op, f"{rows.op}(a[k - 1], w[k])")
        lines.append(f"fn {loss}(x, q) {{ let w = {fn}(x, q); let a[0] = w[0]; let a[k in 1..{n}] = {step}; "
                     f"a[{n} - 1] }}")
    entry = "[j]" if rows.param_length else ""
    if item.called:
        lines.append(f"fn {g}_grad(x, q) {{ let l = {loss}(x, q); @l / @q }}")
        value = f"{g}_grad({row}, {p}){entry}"
    else:
        gradient = f"(@l / @{p})[j]" if entry else f"@l / @{p}"
        value = f"{{ let l = {loss}({row}, {p}); {gradient} }}"
    points = f"i in 0..{bound(rows.shape[0], names)}"
    if item.per_point == "sum":
        return lines + [f"let {g}{'[j]' if entry else ''} = sum[{points}]({value});"]
    return lines + [f"let {g}[{points}{', j' if entry else ''}] = {value};"]


def _function(fn: Function, names: Names) -> str:
    if fn.typed:
        params = ", ".join(f"{p}: {t}" for p, t in fn.params)
        head = f"fn {names(fn.name)}({params}) -> {fn.dtype}"
    else:
        head = f"fn {names(fn.name)}({', '.join(p for p, _ in fn.params)})"
    body = fn.body
    if isinstance(body, Block) and body.style != "pipe":      # a piped block is written in parentheses
        return f"{head} {expr(body, names)}"
    return f"{head} {{ {expr(body, names)} }}"


def bound(b: Bound, names: Names) -> str:
    text = _affine_bound(b, names)
    for op, other in b.clamp:                     # max(0, i - 1), then min(n, max(0, i - 1))
        text = f"{op}({bound(other, names)}, {text})"
    return text


def _affine_bound(b: Bound, names: Names) -> str:
    terms = [names(t) for t in (b.index, b.dim) if t is not None]
    if b.data is not None:                        # idx[i + 1]
        terms.append(f"{names(b.data[0])}[{bound(b.data[1], names)}]")
    if not terms:
        return str(b.const)
    text = " + ".join(terms)
    if b.const > 0:
        text += f" + {b.const}"
    elif b.const < 0:
        text += f" - {-b.const}"
    return text


# ---------------------------------------------------------------- expressions


def expr(node, names: Names, anchored: bool = False) -> str:
    return _render(node, names, anchored)[0]


def _render(node, names: Names, anchored: bool = False) -> tuple[str, int]:
    """(text, precedence level of the text's outermost operator)."""
    if isinstance(node, Lit):
        return _literal(node, anchored)
    if isinstance(node, (Index, Var)):
        return node.name, ATOM
    if isinstance(node, DimRef):
        return names(node.name), ATOM
    if isinstance(node, Read):
        if not node.subs:
            return names(node.name), ATOM
        parts = (node.subs[:node.split], node.subs[node.split:]) if node.split else (node.subs,)
        return names(node.name) + "".join(f"[{', '.join(expr(s, names) for s in p)}]" for p in parts), ATOM
    if isinstance(node, Unary):
        return _unary(node, names, anchored)
    if isinstance(node, Binary):
        return _binary(node, names)
    if isinstance(node, IfElse):
        return (f"if {expr(node.cond, names)} {{ {expr(node.then, names, anchored)} }} "
                f"else {{ {expr(node.other, names, anchored)} }}", ATOM)
    if isinstance(node, Call) and node.piped:
        return f"({expr(node.args[0], names)} |> {names(node.fn)})", ATOM
    if isinstance(node, Call):
        return f"{names(node.fn)}({', '.join(expr(a, names) for a in node.args)})", ATOM
    if isinstance(node, Block) and node.style == "pipe":
        (name, value), = node.lets
        if name[-1] in "13579":       # every other one states its result type, Rust's closure form
            return f"({expr(value, names)} |> |{name}| -> {node.dtype} {{ {expr(node.result, names)} }})", ATOM
        return f"({expr(value, names)} |> |{name}| {expr(node.result, names)})", ATOM
    if isinstance(node, Block) and node.style == "nested":
        lets = "".join(f"let {n} = {expr(e, names)}; " for n, e in node.lets)
        inner = f"f_{node.lets[0][0]}"
        return f"{{ {lets}fn {inner}() {{ {expr(node.result, names)} }} {inner}() }}", ATOM
    if isinstance(node, Cast):
        return f"{_operand(node.arg, names, CAST)} as {node.dtype}", CAST
    if isinstance(node, Block):
        lets = "".join(f"let {n} = {expr(e, names)}; " for n, e in node.lets)
        return f"{{ {lets}{expr(node.result, names)} }}", ATOM
    if isinstance(node, Reduce):
        return _reduce(node, names), ATOM
    if isinstance(node, Match):
        arms = ", ".join(f"{_pattern(a.pattern)}{'' if a.guard is None else ' if ' + expr(a.guard, names)}"
                         f" => {expr(a.body, names)}" for a in node.arms)
        return f"match {expr(node.scrutinee, names)} {{ {arms} }}", ATOM
    if isinstance(node, RowMatch):
        items = [n or "_" for n in node.before] + [f"..{node.rest or ''}"] + [n or "_" for n in node.after]
        return f"match {expr(node.row, names)} {{ [{', '.join(items)}] => {expr(node.body, names)} }}", ATOM
    if isinstance(node, RestRead):
        return f"{node.rest}[{node.offset}]", ATOM
    if isinstance(node, Recur):
        row = f", {node.lane} in 0..{node.lanes}" if node.lanes else ""
        last = f"{node.steps - 1}, {node.pick}" if node.lanes else f"{node.steps - 1}"
        return (f"{{ let {node.name}[0{row}] = {expr(node.init, names)}; let {node.name}[{node.var} in 1..{node.steps}"
                f"{row}] = {expr(node.step, names)}; {node.name}[{last}] }}"), ATOM
    if isinstance(node, Prev):
        lane = "" if node.lane is None else f", {expr(node.lane, names)}"
        return f"{node.name}[{node.var} - 1{lane}]", ATOM
    if isinstance(node, PrevRow):
        return f"{node.op}({node.name}[{node.var} - 1])", ATOM
    if isinstance(node, StepTensor):
        return (f"{{ let {node.name}[{node.var} in 0..{node.size}] = {expr(node.body, names)}; "
                f"{expr(node.result, names)} }}"), ATOM
    if isinstance(node, Local):
        return f"{node.name}[{expr(node.sub, names)}]", ATOM
    if isinstance(node, Prelude):
        row = f"[t - {node.back}]" if node.back else "[t]" if node.by_step else ""
        scaled = f" * (t as {node.dtype})" if node.by_step else ""
        return f"{node.op}({names(node.name)}{row}{scaled})", ATOM
    raise TypeError(f"not an expression: {node!r}")


def _pattern(p: Pattern) -> str:
    if p.kind == "wild":
        return p.bind or "_"
    if p.kind == "range":
        lo, hi, inclusive = p.values
        text = f"{'' if lo is None else lo}{'..=' if inclusive else '..'}{'' if hi is None else hi}"
    else:
        text = " | ".join(("true" if v else "false") if isinstance(v, bool) else str(v) for v in p.values)
    if p.bind is None:
        return text
    return f"{p.bind} @ ({text})" if p.kind == "or" else f"{p.bind} @ {text}"


def _literal(lit: Lit, anchored: bool) -> tuple[str, int]:
    if lit.dtype == "bool":
        return ("true" if lit.value else "false"), ATOM
    magnitude = abs(lit.value)
    as_int = lit.dtype not in FLOATS or (lit.integral and anchored and not lit.suffix)
    text = str(int(magnitude)) if as_int else repr(float(magnitude))
    if (lit.suffix or not (anchored or lit.dtype in DEFAULT_TYPES)) and lit.dtype in HALF_TYPES:
        text = f"({text} as {lit.dtype})"       # f16 and bf16 literals have no suffix
    elif lit.suffix or not (anchored or lit.dtype in DEFAULT_TYPES):
        text += lit.dtype
    if lit.value < 0:
        return "-" + text, PREFIX
    return text, ATOM


def _unary(node: Unary, names: Names, anchored: bool) -> tuple[str, int]:
    if node.op == "-" and isinstance(node.arg, Lit):
        text, _ = _literal(node.arg, anchored)
        return f"-{text}", PREFIX
    inner = _operand(node.arg, names, PREFIX)
    # `- -x` rather than `--x`: either lexes, but a space keeps the text readable
    return f"{node.op}{' ' if inner.startswith(node.op) else ''}{inner}", PREFIX


def _binary(node: Binary, names: Names) -> tuple[str, int]:
    left_anchor = is_literal(node.left) and not is_literal(node.right)
    right_anchor = is_literal(node.right) and not is_literal(node.left)
    if node.op == "**":
        # an exponent of another type (`1.5 ** (i % 4)`) gives the base no type: it keeps its suffix
        left_anchor = left_anchor and getattr(node.right, "dtype", None) == node.left.dtype
        left = _operand(node.left, names, PREFIX, left_anchor)
        right = _operand(node.right, names, POWER, right_anchor)
        return f"{left} ** {right}", POWER
    level = LEVELS[node.op]
    left = _operand(node.left, names, level, left_anchor)
    right = _operand(node.right, names, level + 1, right_anchor)
    return f"{left} {node.op} {right}", level


def _operand(node, names: Names, needed: int, anchored: bool = False) -> str:
    text, level = _render(node, names, anchored)
    return text if level >= needed else f"({text})"


def _reduce(node: Reduce, names: Names) -> str:
    if node.counted:
        (r,) = node.ranges
        return f"[{r.var} | {r.var} in {bound(r.lo, names)}..{bound(r.hi, names)}, {expr(node.guard, names)}].length"
    if node.filtered:
        (r,) = node.ranges
        return (f"{node.op}([{expr(node.body, names)} | {r.var} in {bound(r.lo, names)}..{bound(r.hi, names)}, "
                f"{expr(node.guard, names)}])")
    ranges = ", ".join(
        f"{r.var} in {bound(r.lo, names)}..{bound(r.hi, names)}" if r.explicit else r.var
        for r in node.ranges)
    body = expr(node.body, names)
    if node.guard is not None:
        body += f" where {expr(node.guard, names)}"
    return f"{node.op}[{ranges}]({body})"
