"""Which axis a recurrence group steps along (LANGUAGE.md section 4).

A group steps along its members' first axis. When every read of a member inside the group is
at the clause's own point along the leading axes and steps back only along a later axis, as
`let a[b, t in 1..T] = a[b, t - 1] + x[b, t];` (a batch axis first), that later axis is the
step and the leading axes are batch axes: the clauses are elaborated as if the step axis were
written first, and each member is read through a transposed view, so every other reader sees
the axes in the order the user wrote them.
"""
from __future__ import annotations

import dataclasses

from einc.ir.nodes import Generic, IndexRef, Read, fresh_index_vars
from einc.semantics.core.values import PartialRead
from einc.syntax import ast


def later_step_axis(clauses_by_member: dict):
    """The axis (> 0) the group steps along when it is not the first, else None: the first axis
    along which some read of a member is not at the reading clause's own point, when every
    such read names each axis of the member, is at the clause's point along the axes before
    it and at `t - c` (c >= 0) or a literal point along it."""
    ranks = {}
    for did, cs in clauses_by_member.items():
        ranks.setdefault(did, set()).update(len(c.slots) for c in cs)
    if any(len(r) != 1 for r in ranks.values()):
        return None
    ranks = {did: r.pop() for did, r in ranks.items()}  # members may differ in rank (`u[s, t]`, `x[s, t, i]`)
    reads = []
    for clauses in clauses_by_member.values():
        for c in clauses:
            if any(isinstance(s, ast.RestIndex) for s in c.slots):
                return None
            indexed = set()
            for n in ast.iter_nodes([c.value, c.wheres]):
                if isinstance(n, ast.Index) and isinstance(n.base, ast.Name) and n.base.def_id in clauses_by_member:
                    if len(n.subscripts) != ranks[n.base.def_id]:
                        return None
                    indexed.add(id(n.base))
                    reads.append((c, n.subscripts))
            if any(isinstance(n, ast.Name) and n.def_id in clauses_by_member and id(n) not in indexed
                   for n in ast.iter_nodes([c.value, c.wheres])):
                return None     # a member read whole or in part
    axis = next((a for a in range(min(ranks.values())) if not all(_at_own_point(c.slots[a], subs[a]) for c, subs in reads)), None)
    if not axis:
        return None
    if all(all(_at_own_point(c.slots[a], subs[a]) for a in range(axis)) and _back_along(c.slots[axis], subs[axis])
           for c, subs in reads):
        return axis
    return None


def _at_own_point(slot, sub) -> bool:
    if isinstance(slot, ast.IndexVar):
        return isinstance(sub, ast.Name) and sub.def_id == slot.def_id
    return isinstance(slot, ast.IndexLiteral) and isinstance(sub, ast.IntLit) and sub.value == slot.value


def _back_along(slot, sub) -> bool:
    """`sub` is a literal point, or `t - c` (c >= 0 a literal) with t the clause's index `slot`."""
    if isinstance(sub, ast.IntLit) or _at_own_point(slot, sub):
        return True
    return (isinstance(slot, ast.IndexVar) and isinstance(sub, ast.Binary) and sub.op == "-"
            and isinstance(sub.left, ast.Name) and sub.left.def_id == slot.def_id
            and isinstance(sub.right, ast.IntLit) and sub.right.value >= 0)


def step_first(clauses_by_member: dict, axis: int) -> dict:
    """Copies of the clauses with `axis` moved first, in their brackets and in their reads of
    the members (the AST is shared by every elaboration, so it is not changed in place)."""
    members = set(clauses_by_member)

    def moved(items: list) -> list:
        return [items[axis]] + items[:axis] + items[axis + 1:]

    def copy(node):
        if isinstance(node, list):
            return [copy(n) for n in node]
        if not isinstance(node, ast.Node):
            return node
        fields = {f.name: copy(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name != "span"}
        if isinstance(node, ast.Index) and isinstance(node.base, ast.Name) and node.base.def_id in members:
            fields["subscripts"] = moved(fields["subscripts"])
        return dataclasses.replace(node, **fields)

    return {did: [dataclasses.replace(c, slots=moved(copy(c.slots)), value=copy(c.value), wheres=copy(c.wheres))
                  for c in clauses] for did, clauses in clauses_by_member.items()}


def in_written_order(value, axis: int):
    """`value`, computed with `axis` first, read back with its axes in the written order (a
    member of a group run per point of enclosing indices is a partial read of a tensor with
    those indices first: the axes after them are reordered)."""
    if isinstance(value, PartialRead):
        return PartialRead(_moved_back(value.base, len(value.subs), axis), value.subs, value.span)
    return _moved_back(value, 0, axis)


def _moved_back(value, at: int, axis: int) -> Generic:
    """A view of `value` with its axis `at` moved to `at + axis`."""
    shape = value.shape
    written = shape[:at] + shape[at + 1:at + axis + 1] + shape[at:at + 1] + shape[at + axis + 1:]
    vars_ = fresh_index_vars(written, "w")
    refs = [IndexRef(v) for v in vars_]
    subs = refs[:at] + [refs[at + axis]] + refs[at:at + axis] + refs[at + axis + 1:]
    return Generic(vars_, Read(value, tuple(subs), span=value.span, in_bounds=True), span=value.span)
