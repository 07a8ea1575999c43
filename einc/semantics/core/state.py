"""Book-keeping shared by the elaboration rules: pending index ranges, guards, effects."""
from __future__ import annotations

from dataclasses import dataclass, field

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import IndexRef, IndexVar, Read
from einc.ir.types import Lin
from einc.semantics.core.affine_ranges import AffineRead, extent_from, smallest


class UnboundIndex(d.CompileError):
    """E004: no read bounds an index. A recurrence's clause that raises it is elaborated again
    after the group's other clauses have given the member its extents (forms.recurrences)."""


@dataclass
class Candidate:
    extent: Lin
    span: object
    what: str                 # e.g. "A[i, k] (axis 0 of A)"


@dataclass
class InferenceFrame:
    """Index variables whose extent comes from the reads in the body that binds them: the
    plain reads (`A[i, k]`) when there are any, else the affine ones (affine_ranges). Reads of
    a recurrence's own members (`u[t - 1, i]`, along the axes its clauses so far give) count
    only for an index that no other read bounds, plain before affine again."""
    pending: list
    candidates: dict = field(default_factory=dict)   # IndexVar -> list[Candidate]
    affine_reads: dict = field(default_factory=dict)  # IndexVar -> list[AffineRead]
    own_candidates: dict = field(default_factory=dict)    # the same two, of a recurrence's own reads
    own_affine_reads: dict = field(default_factory=dict)
    # affine reads that bound an index only through a reduction's range depending on it
    # (`sum[k in 0..i + 1](x[k])`): the last resort of the program's own reads
    through_reads: dict = field(default_factory=dict)
    data_ranged: frozenset = frozenset()    # pending indices whose written range has an end from data

    def resolve(self, dependent_ranges: list = ()) -> None:
        dependent = {var: (lo, hi) for var, lo, hi in dependent_ranges}
        for var in self.pending:
            found = self.candidates.get(var, []) or self._from_affine_reads(var, self.affine_reads, dependent) \
                or self._from_affine_reads(var, self.through_reads, dependent) \
                or self.own_candidates.get(var, []) or self._from_affine_reads(var, self.own_affine_reads, dependent)
            if not found and var in self.data_ranged:
                raise UnboundIndex(d.Diagnostic(
                    d.SHAPE, f"`{var.name}`'s range has an end computed from data, and no read in the body "
                    "gives the whole range it lies in", var.span, f"write that range and guard it: "
                    f"`sum[{var.name} in 0..N](.. where {var.name} >= lo && {var.name} < hi)`", []))
            if not found:
                raise UnboundIndex(d.Diagnostic(d.SHAPE, f"cannot infer the range of index `{var.name}`",
                                                var.span, f"give it explicitly, e.g. `{var.name} in 0..N`", []))
            first = found[0]
            for other in found[1:]:
                if other.extent != first.extent:
                    raise d.error(
                        d.SHAPE,
                        f"index `{var.name}` gets extent {first.extent!r} from {first.what} "
                        f"but {other.extent!r} from {other.what}",
                        other.span, notes=[d.Label(first.span, f"extent {first.extent!r} here")],
                        label=f"extent {other.extent!r} here")
            var.extent = first.extent

    def _from_affine_reads(self, var: IndexVar, table: dict, dependent: dict) -> list:
        """One candidate: the intersection of the ranges the affine reads in `table` allow (or none)."""
        reads, extents = [], []
        for read in table.get(var, []):
            extent = extent_from(var, read, dependent)
            if extent is not None:
                reads.append(read)
                extents.append(extent)
        if not extents:
            return []
        best = smallest(extents, reads[0].span, [r.what for r in reads])
        chosen = reads[extents.index(best)]
        return [Candidate(best, chosen.span, chosen.what)]


class State:
    def __init__(self) -> None:
        self.frames: list[InferenceFrame] = []
        self.guard_depth = 0                # under a guard of the program's (`where`, `if`)
        self.branch_conditions: list = []   # (test, value) of the `if`s whose branch is being elaborated
        self.guarded_reads: set[int] = set()
        self.hull_depth = 0                 # under the guards that narrow a hull to its range
        self.hull_only_reads: set[int] = set()
        self.dependent_ranges: list = []    # (IndexVar, lo Lin, hi Lin) iterated over a hull
        self.hull_ranges: dict = {}         # IndexVar -> (lo Lin, hi Lin) of a resolved hull
        self.window_starts: dict = {}       # a constant-width window's offset -> (the index it stands for, start Lin)
        # a dependent range's IndexVar -> {step var: Lin of its copy in step_ranges} where it was
        # written: its hull spans the steps of that clause, wherever it is resolved
        self.hull_steps: dict = {}
        self.call_depth = 0
        self.calls: list = []               # (call span, callee) of the calls being elaborated
        # a recurrence's step var -> a copy over the range of the clause being elaborated, which
        # tensors computed in that clause's steps are batched over (definitions.clause)
        self.step_ranges: dict = {}
        self.recurrence_steps: list = []    # the steps of the groups whose clauses are elaborated
        # (read member, x's member, span): derivatives `@y / @x[t]` whose y reads another member
        # at x's step; its group decides whether that member depends on x (recurrences.define_group)
        self.same_step_derivatives: list = []
        # a recurrence member's whole state at a step, read inside its group (`r[t - 1]`): reads
        # of it bound indices only as the member's own reads do (InferenceFrame)
        self.own_states: dict[int, tuple] = {}      # id of the state -> (the state, `r[..]`), kept alive

    def note_guards(self, read) -> None:
        """Whether `read` (a Read or a recurrence's StateRead) sits under a guard (bounds)."""
        if self.guard_depth:
            self.guarded_reads.add(id(read))
        elif self.hull_depth:
            self.hull_only_reads.add(id(read))

    def note_read(self, read: Read, names: list[str]) -> None:
        self.note_guards(read)
        self._note_axes(read, read.tensor.shape, range(len(read.subs)), *self._table(read.tensor, names))

    def note_jacobian_read(self, read, shape: tuple, names: list[str], axes) -> None:
        """A read `J[i, k]` of a derivative (`let J = @y / @x;`): the subscripted `axes` bound
        their indices by the derivative's shape, shape(y) ++ shape(x), as a tensor's read does."""
        self._note_axes(read, shape, axes, names, "")

    def note_row_read(self, row, names: list[str]) -> None:
        """A PartialRead `base[s0, .., sk]`: its subscripts index base's first axes wherever the
        row goes, also where nothing reads an element of it (`match m[j] { [..] => 0 }`)."""
        self._note_axes(row, row.base.shape, range(len(row.subs)), *self._table(row.base, names))

    def _table(self, base, names: list[str]) -> tuple:
        """The names of a read of `base`'s axes, the tables it adds to and the axis of the
        member its first one is."""
        if id(base) in self.own_states:
            return [self.own_states[id(base)][1]] * len(names), "own_", 1
        return names, "", 0

    def note_state_read(self, read, shape: tuple, name: str) -> None:
        """A read of a recurrence's member inside its group (a StateRead): its axes after the
        step's whose extent `shape` knows (from the clauses elaborated so far) are a last resort."""
        self.note_guards(read)
        self._note_axes(read, shape, range(1, len(shape)), [name] * len(shape), "own_")

    def _note_axes(self, read, shape: tuple, axes, names: list[str], table: str, first_axis: int = 0) -> None:
        for axis in axes:
            sub, size = read.subs[axis], shape[axis]
            # an axis of unknown extent is one batched over `var` itself (definitions.
            # batch_over_outer_indices): it will have var's extent, so it says nothing about it
            if size is None:
                continue
            what = f"{names[axis]} (axis {axis + first_axis})"
            if isinstance(sub, IndexRef) and not self._ranged_by_outer(sub.var):
                if sub.var.extent is None:
                    self._add(sub.var, table + "candidates", Candidate(size, read.span, what))
            else:
                self._note_affine(sub, size, read.span, what, table)

    def _note_affine(self, sub, size: Lin, span, what: str, table: str) -> None:
        lin = affine.affine_of(sub)
        if lin is None:
            return
        direct = [k for k in lin.keys() if isinstance(k, IndexVar) and k.extent is None]
        for var in direct:
            self._add(var, table + "affine_reads", AffineRead(lin, size, span, what))
        if table:       # a recurrence's own reads bound nothing through a range
            return
        for var in self._bounded_through(direct):
            self._add(var, "through_reads", AffineRead(lin, size, span, what))

    def _ranged_by_outer(self, var) -> bool:
        return any(var is k for k, _, _ in self.dependent_ranges)

    def _bounded_through(self, direct: list) -> list:
        """The unranged indices that the ranges of the `direct` indices of a read depend on,
        other than those: `sum[k in 0..i + 1](x[k])` bounds i through k."""
        found, todo = [], list(direct)
        while todo:
            var = todo.pop()
            for k, lo, hi in self.dependent_ranges:
                if k is var:
                    for o in (*lo.keys(), *hi.keys()):
                        if isinstance(o, IndexVar) and o.extent is None and not any(o is f for f in found + direct):
                            found.append(o)
                            todo.append(o)
        return found

    def _add(self, var: IndexVar, table: str, cand) -> None:
        for frame in reversed(self.frames):
            if var in frame.pending:
                getattr(frame, table).setdefault(var, []).append(cand)
                return
