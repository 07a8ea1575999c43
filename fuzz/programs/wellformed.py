"""Structural rules a generated program keeps beyond what its NumPy meaning checks."""
from __future__ import annotations

from fuzz.programs.structure import (
    Block, Bound, Call, Define, Derivative, Function, Group, Index, Input, Match, Program, Read, Reduce, RowMap,
    Var, Whole,
    children, clause_exprs, walk)


def shapes(program: Program) -> dict:
    """Name -> symbolic shape (Bounds) of every array binding; a definition's extent along an axis
    is its clauses' largest end."""
    dims = program.dim_values()
    found = {}
    for item in program.inputs + program.items:
        if isinstance(item, Input):
            found[item.name] = item.shape
        elif isinstance(item, Whole):
            found[item.name] = item.shape
        elif isinstance(item, RowMap):
            found[item.name] = found[item.through] if item.through else item.shape[:1]
        elif isinstance(item, (Define, Group)):
            for define in item.members if isinstance(item, Group) else (item,):
                found[define.name] = _defined_shape(define, dims)
    return found


def _defined_shape(define: Define, dims: dict) -> tuple:
    rank = len(define.clauses[0].slots)
    value = lambda b: b.const + (dims[b.dim] if b.dim else 0)      # noqa: E731
    return tuple(max((c.slots[a].hi for c in define.clauses), key=value) for a in range(rank))


def plain_read_extents(var: str, exprs, shape_of: dict) -> list:
    """The extents of the axes that `var` subscripts on its own (`x[.., var, ..]`), a range's
    end read from data at it (`k in idx[var]..n`) among them (None for an input not in
    `shape_of` yet, the index input a generator adds at its first use: it decides nothing)."""
    nodes = [n for e in exprs for n in walk(e)]
    reads = [shape_of[n.name][a] for n in nodes if isinstance(n, Read) and n.name in shape_of
             for a, s in enumerate(n.subs) if s == Index(var)]
    ends = [shape_of.get(b.data[0], (None,))[0] for n in nodes if isinstance(n, Reduce)
            for r in n.ranges for b in (r.lo, r.hi) if b.data is not None and b.data[1] == Bound(0, index=var)]
    return reads + ends


def decides(var: str, hi: Bound, exprs, shape_of: dict) -> bool:
    """Whether a plain read decides that `var` runs over 0..hi (so its range may be left out)."""
    extents = plain_read_extents(var, exprs, shape_of)
    return bool(extents) and all(e == hi for e in extents)


def decided_through_prefix(var: str, hi: Bound, exprs, shape_of: dict) -> bool:
    """Whether a reduction over `k in 0..var + 1` in `exprs` has a plain read that decides k
    runs over 0..hi: then `var` runs over 0..hi too (einc infers it through k's range)."""
    return any(r.lo == Bound(0) and r.hi == Bound(1, index=var) and decides(r.var, hi, (n.body,), shape_of)
               for e in exprs for n in walk(e) if isinstance(n, Reduce) for r in n.ranges)


def ranges_decided(program: Program) -> bool:
    """Every index whose range is left out has a plain read that decides it."""
    shape_of = shapes(program)
    for item in program.items:
        if isinstance(item, (Function, Derivative, Whole, RowMap)):
            continue
        members = item.members if isinstance(item, Group) else (item,)
        outside = {n: s for n, s in shape_of.items() if n not in {m.name for m in members}}
        for define in members:
            for clause in define.clauses:
                exprs = clause_exprs(clause)
                for slot in clause.slots:
                    if slot.var and not slot.explicit and not (
                            slot.lo == Bound(0) and decides(slot.var, slot.hi, exprs, outside)):
                        return False
                for node in (n for e in exprs for n in walk(e) if isinstance(n, Reduce)):
                    inner = (node.body,) + ((node.guard,) if node.guard is not None else ())
                    for r in node.ranges:
                        if not r.explicit and not (r.lo == Bound(0) and (
                                decides(r.var, r.hi, inner, outside)
                                or decided_through_prefix(r.var, r.hi, inner, outside))):
                            return False
    return True


def depends_on(expr, names: set, functions: dict) -> bool:
    """Whether the value of `expr` depends on a binding or local in `names`. A call of one of the
    program's functions depends on an argument only if the body uses that parameter: einc
    specializes the body for the arguments (LANGUAGE.md section 6, monomorphization), so
    `f(x)` with `fn f(a) { 3 }` is the scalar 3 even for an array x; a function applies
    elementwise through the elementwise operations of its body, not around it. The prelude's
    `sum(x)` of an array is a scalar, so it depends on nothing here."""
    if isinstance(expr, (Read, Var)) and expr.name in names:
        return True
    if isinstance(expr, Call) and expr.fn in functions:
        fn = functions[expr.fn]
        return any(depends_on(arg, names, functions) and depends_on(fn.body, {param}, functions)
                   for (param, _), arg in zip(fn.params, expr.args))
    if isinstance(expr, Block):
        names = set(names)
        for name, value in expr.lets:
            if depends_on(value, names, functions):
                names.add(name)
        return depends_on(expr.result, names, functions)
    if isinstance(expr, Match) and depends_on(expr.scrutinee, names, functions):
        return True
    if isinstance(expr, Match):
        return any(depends_on(x, names, functions) for arm in expr.arms for x in (arm.guard, arm.body)
                   if x is not None)
    return any(depends_on(child, names, functions) for child in children(expr))


def wholes_are_arrays(program: Program) -> bool:
    """Every elementwise statement's value depends on an array, so it has the statement's shape."""
    functions = program.functions()
    arrays = {name for name, shape in shapes(program).items() if shape}
    return all(depends_on(item.expr, arrays, functions) for item in program.items if isinstance(item, Whole))
