"""Shrink a failing generated program to a small one that fails the same way.

Greedy: try smaller variants of the program, biggest cuts first (drop a statement, a recurrence
member, a clause, an output, an input, a where clause; then replace a subexpression by one of
its children or a literal; then smaller sizes and plainer input values), keep the first that is
still valid (its NumPy meaning evaluates) and still fails with the same signature, and start
over from it. Every kept variant is strictly smaller by `size`, so it ends.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

import numpy as np

from fuzz.programs.compare import disagreement
from fuzz.programs.execute import build_and_run, lower_only
from fuzz.programs.generate import Case, draw_inputs
from fuzz.programs.meaning import evaluate
from fuzz.programs.module import assemble, prefix
from fuzz.programs.render import render_program
from fuzz.programs.wellformed import ranges_decided, wholes_are_arrays
from fuzz.report import blur
from fuzz.programs.structure import (
    Binary, Block, Bound, Call, Cast, Define, Derivative, Group, IfElse, Lit, Match, Read, Reduce, RowMap, RowMatch,
    Slot, Unary, Var, Where, children, widens_an_approximation)

EXPRESSIONS = (Lit, Var, Read, Unary, Binary, IfElse, Call, Cast, Block, Reduce, Match, RowMatch)
TIMEOUT = 300


def signature(case: Case, outcome) -> str | None:
    """How a run of `case` failed, with names and numbers blurred; None if it passed."""
    if outcome.kind in ("hang", "crash"):
        return outcome.kind
    if outcome.kind == "raised":
        raise RuntimeError(f"the fuzzing job itself failed: {outcome.value}")
    result = outcome.value
    if result["kind"] == "lowered":
        return None
    if result["kind"] == "ok":
        derivatives = {i.name for i in case.program.items if isinstance(i, Derivative)}
        values = [(name, name, result["outputs"].get(prefix(0) + name)) for name in case.program.outputs]
        values += [(f"save_npy of {name}", name, result["saved"].get(prefix(0) + name))
                   for name in case.program.saves]
        for label, name, got in values:
            if got is None:
                return f"mismatch {label} missing"
            problem = disagreement(got, case.meaning[name], name in derivatives,
                                   widens_an_approximation(case.program))
            if problem:                  # the output and shape, type or values: no slipping
                return f"mismatch {label} {problem.split()[0]}"
        return None
    if result["kind"] == "rejected":
        return f"rejected {result['code']} {blur(result['message'])}"
    return f"{result['kind']} {blur(result['error'])}"


def run_case(pool, cases: list, target: str, job=build_and_run) -> list:
    jobs = []
    for case in cases:
        module = assemble({0: case.program})
        inputs = {prefix(0) + n: v for n, v in case.inputs.items()}
        jobs.append((job, (module.source, target, module.outputs, inputs, module.dims), TIMEOUT, target == "vulkan-spirv"))
    return pool.run_all(jobs)


def shrink(case: Case, target: str, pool, budget: int = 300, log=lambda _: None) -> tuple:
    """(the smallest variant found, how it fails); (case, None) if `case` does not fail."""
    outcome, = run_case(pool, [case], target)
    wanted = signature(case, outcome)
    if wanted is None:
        return case, None
    # a diagnostic comes from einc alone: no need to run IREE on every variant
    job = lower_only if wanted.startswith("rejected") else build_and_run
    runs = 0
    while runs < budget:
        found = None
        batch = []
        for candidate in variants(case):
            batch.append(candidate)
            if len(batch) < pool.size:
                continue
            found = _first_failing(pool, batch, target, wanted, job)
            runs += len(batch)
            batch = []
            if found is not None or runs >= budget:
                break
        if found is None and batch and runs < budget:
            found = _first_failing(pool, batch, target, wanted, job)
            runs += len(batch)
        if found is None:
            break
        case = found
        log(f"  shrunk to {size(case)[1]} characters ({runs} runs)")
    return case, wanted


def _first_failing(pool, batch: list, target: str, wanted: str, job) -> Case | None:
    for candidate, outcome in zip(batch, run_case(pool, batch, target, job)):
        if signature(candidate, outcome) == wanted:
            return candidate
    return None


def size(case: Case) -> tuple:
    text = render_program(case.program)
    elements = sum(int(np.size(v)) for v in case.inputs.values())
    plain = sum(len(repr(float(x))) for v in case.inputs.values() for x in np.ravel(v))
    return text.count(";"), len(text), elements, plain


def variants(case: Case):
    """Valid cases strictly smaller than `case`, biggest cuts first."""
    limit = size(case)
    seen = set()
    for program in _programs(case.program):
        if program is None:
            continue
        key = render_program(program)
        if key in seen:
            continue
        seen.add(key)
        candidate = _valid(program, case.inputs)
        if candidate is not None and size(candidate) < limit:
            yield candidate
    for inputs in _plainer_inputs(case.inputs):
        candidate = _valid(case.program, inputs)
        if candidate is not None and size(candidate) < limit:
            yield candidate


def _valid(program, inputs: dict) -> Case | None:
    dims = program.dim_values()
    kept = {}
    for inp in program.inputs:
        shape = tuple(b.const + (dims[b.dim] if b.dim else 0) for b in inp.shape)
        if inp.name in inputs and inputs[inp.name].shape == shape:
            kept[inp.name] = inputs[inp.name]
        else:
            kept[inp.name] = draw_inputs(replace(program, inputs=(inp,)), np.random.default_rng(0))[inp.name]
    if not (ranges_decided(program) and wholes_are_arrays(program)):
        return None
    try:
        return Case(program, kept, evaluate(program, kept))
    except Exception:  # noqa: BLE001 - any variant the meaning cannot evaluate is not a candidate
        return None


def _programs(program):
    yield from _fewer_statements(program)
    yield from _fewer_outputs(program)
    yield from _fewer_inputs(program)
    yield from _simpler_nodes(program)
    yield from _smaller_sizes(program)


def _fewer_statements(program):
    items = program.items
    for k in range(len(items)):
        yield _with_items(program, items[:k] + items[k + 1:])
    for path, node in _nodes(items):
        if isinstance(node, Group):
            for name in node.order:
                if len(node.members) > 1:
                    yield _with_items(program, _put(items, path, _without_member(node, name)))
        if isinstance(node, Define) and len(node.clauses) > 1:
            for c in range(len(node.clauses)):
                yield _with_items(program, _without_clause(items, path, node, c))
        if isinstance(node, tuple) and node and all(isinstance(w, Where) for w in node):
            for k in range(len(node)):
                yield _with_items(program, _put(items, path, node[:k] + node[k + 1:]))


def _with_items(program, items: tuple):
    """The program with these statements and the outputs (and saved outputs) still defined (None
    if no output is)."""
    names = set()
    for item in items:
        names |= {m.name for m in item.members} if isinstance(item, Group) else {getattr(item, "name", "")}
    rows = {item.name for item in items if isinstance(item, RowMap)}
    if any(getattr(item, "per_point", "") and item.of not in rows for item in items):
        return None                 # a per-point derivative is written with its row map's function
    outputs = tuple(n for n in program.outputs if n in names)
    saves = tuple(n for n in program.saves if n in names)
    return replace(program, items=items, outputs=outputs, saves=saves) if outputs else None


def _without_member(group: Group, name: str) -> Group:
    return Group(tuple(m for m in group.members if m.name != name), tuple(n for n in group.order if n != name),
                 tuple(entry for entry in group.layout if entry[0] != name))


def _without_clause(items: tuple, path: tuple, define: Define, c: int) -> tuple:
    shorter = replace(define, clauses=define.clauses[:c] + define.clauses[c + 1:])
    items = _put(items, path, shorter)
    group_path = path[:-2]                      # (.., group index, "members", member index)
    if len(path) >= 3 and path[-2] == "members":
        group = _get(items, group_path)
        layout = tuple((n, k - (n == define.name and k > c)) for n, k in group.layout
                       if not (n == define.name and k == c))
        items = _put(items, group_path, replace(group, layout=layout))
    return items


def _fewer_outputs(program):
    if len(program.outputs) > 1:
        for name in program.outputs:
            yield replace(program, outputs=(name,), saves=tuple(n for n in program.saves if n == name))


def _fewer_inputs(program):
    for k in range(len(program.inputs)):
        yield replace(program, inputs=program.inputs[:k] + program.inputs[k + 1:])


def _simpler_nodes(program):
    for path, node in _nodes(program.items):
        if not isinstance(node, EXPRESSIONS):
            continue
        for simpler in _simpler(node):
            yield replace(program, items=_put(program.items, path, simpler))


def _simpler(node):
    for child in children(node):
        if getattr(child, "dtype", None) == node.dtype:
            yield child
    if not isinstance(node, Lit):
        yield Lit(False if node.dtype == "bool" else 0.0 if node.dtype.startswith("f") else 0, node.dtype)
        if node.dtype != "bool":
            yield Lit(1.0 if node.dtype.startswith("f") else 1, node.dtype)
    elif node.value not in (0, 1, False, True):
        yield replace(node, value=1.0 if node.dtype.startswith("f") else 1)
    if isinstance(node, Reduce) and len(node.ranges) > 1:
        for r in node.ranges:
            if not _mentions(node.body, r.var) and (node.guard is None or not _mentions(node.guard, r.var)):
                yield replace(node, ranges=tuple(x for x in node.ranges if x is not r))
    if isinstance(node, Read) and node.subs:
        for k, sub in enumerate(node.subs):
            if not isinstance(sub, Lit):
                yield replace(node, subs=node.subs[:k] + (Lit(0, "i32"),) + node.subs[k + 1:])


def _mentions(expr, var: str) -> bool:
    return any(getattr(n, "name", None) == var or getattr(n, "index", None) == var for _, n in _nodes(expr))


def _smaller_sizes(program):
    for path, node in _nodes(program):
        if not isinstance(node, Bound) or node.const <= 1:
            continue
        parent = _get(program, path[:-1])
        if not (isinstance(parent, Slot) and parent.var is None):      # a point keeps lo + 1 == hi
            yield _put(program, path, node.plus(-1))
    for k, (name, value) in enumerate(program.dims):
        if value > 1:
            yield replace(program, dims=program.dims[:k] + ((name, value - 1),) + program.dims[k + 1:])


def _plainer_inputs(inputs: dict):
    """Rounder values; never all zeros, which would hide a result einc leaves unwritten."""
    for name, value in inputs.items():
        if value.dtype.kind == "f":
            plainer = [np.round(value), np.round(value * 2) / 2]
        elif value.dtype.kind == "i":
            plainer = [np.clip(value, -3, 3)]
        else:
            continue
        for candidate in plainer:
            if np.any(candidate != 0):
                yield {**inputs, name: candidate.astype(value.dtype)}


# ---------------------------------------------------------------- paths into frozen structures


def _nodes(obj, path: tuple = ()):
    yield path, obj
    if is_dataclass(obj):
        for f in fields(obj):
            yield from _nodes(getattr(obj, f.name), path + (f.name,))
    elif isinstance(obj, tuple):
        for k, item in enumerate(obj):
            yield from _nodes(item, path + (k,))


def _get(obj, path: tuple):
    for step in path:
        obj = obj[step] if isinstance(obj, tuple) else getattr(obj, step)
    return obj


def _put(obj, path: tuple, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(obj, tuple):
        return obj[:head] + (_put(obj[head], rest, new),) + obj[head + 1:]
    return replace(obj, **{head: _put(getattr(obj, head), rest, new)})

