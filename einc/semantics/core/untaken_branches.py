"""Index ranges from the branches that a build-time condition skips.

A constant `if` (or a `match` on a constant) elaborates only the branch it takes: the others may
be ill-typed or recurse without end for this constant, which is the point of writing them so.
Yet LANGUAGE.md section 3 gives an index the extent of the axes it reads wherever the read is
written: in `let r[t in 0..3, j] = if false { x[j] } else { 0.5 };` j spans x's axis, as it
would under a run-time condition. So a skipped branch that names an index still waiting for its
extent is elaborated on trial, for the reads it notes (state.InferenceFrame) and nothing else:
its value and its errors are dropped, and so is what it recorded in the program.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import IndexRef, Value
from einc.syntax import ast

RECORDS = ("effects", "recurrences", "compactions", "data_files", "python_results")


def note_reads_of_skipped(el, branch, env):
    """Let the reads in `branch`, which a constant condition skips, give index extents. Returns
    the branch's value where it was elaborated for them (None where it was not, or failed)."""
    if branch is None or not _names_a_pending_index(el, branch, env):
        return None
    return _on_trial(el, branch, env)


def value_of_skipped(el, branch, env, tried=None):
    """The value `branch` would have where it is a scalar: `tried`, its value from
    note_reads_of_skipped, or else its value on trial; None where it fails or, not tried yet,
    calls a function (a skipped branch may recurse without end). Only its type is used."""
    if tried is None:
        if branch is None or any(isinstance(n, (ast.Call, ast.MethodCall)) for n in ast.iter_nodes(branch)):
            return None
        tried = _on_trial(el, branch, env)
    return tried if isinstance(tried, Value) and tried.rank == 0 else None


def _on_trial(el, branch, env):
    """`branch`'s value, or None where it fails; nothing it records stays in the program."""
    state = el.state
    lengths = {name: len(getattr(el.ir, name)) for name in RECORDS}
    saved = (state.guard_depth, state.call_depth, len(state.frames), len(state.dependent_ranges))
    state.guard_depth += 1            # as under a run-time condition: its reads may be clamped
    try:
        return el.ev(branch, env)
    except d.CompileError:
        return None                   # an error in a branch never taken is not the program's
    finally:
        for name, length in lengths.items():
            del getattr(el.ir, name)[length:]
        state.guard_depth, state.call_depth = saved[0], saved[1]
        del state.frames[saved[2]:]
        del state.dependent_ranges[saved[3]:]


def _names_a_pending_index(el, branch, env) -> bool:
    pending = {id(var) for frame in el.state.frames for var in frame.pending if var.extent is None}
    if not pending:
        return False
    for node in ast.iter_nodes(branch):
        if isinstance(node, ast.Name) and node.def_id is not None:
            try:
                value = env.lookup(node.def_id)
            except KeyError:
                continue
            if isinstance(value, IndexRef) and id(value.var) in pending:
                return True
    return False
