"""Book-keeping shared by the elaboration rules: pending index ranges, guards, effects."""
from __future__ import annotations

from dataclasses import dataclass, field

from einc import diagnostics as d
from einc.ir.nodes import IndexVar, Read
from einc.ir.types import Lin


@dataclass
class Candidate:
    extent: Lin
    span: object
    what: str                 # e.g. "A[i, k] (axis 0 of A)"


@dataclass
class InferenceFrame:
    """Index variables whose extent comes from the reads in the body that binds them."""
    pending: list
    candidates: dict = field(default_factory=dict)   # IndexVar -> list[Candidate]

    def resolve(self) -> None:
        for var in self.pending:
            found = self.candidates.get(var, [])
            if not found:
                raise d.error(d.SHAPE, f"cannot infer the range of index `{var.name}`", var.span,
                              hint=f"give it explicitly, e.g. `{var.name} in 0..N`")
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


class State:
    def __init__(self) -> None:
        self.frames: list[InferenceFrame] = []
        self.guard_depth = 0
        self.guarded_reads: set[int] = set()
        self.dependent_ranges: list = []    # (IndexVar, lo Lin, hi Lin) iterated over a hull
        self.call_depth = 0

    def note_read(self, read: Read, names: list[str]) -> None:
        if self.guard_depth:
            self.guarded_reads.add(id(read))
        for axis, sub in enumerate(read.subs):
            var = getattr(sub, "var", None)
            # an axis of unknown extent is one batched over `var` itself (definitions.
            # batch_over_outer_indices): it will have var's extent, so it says nothing about it
            if isinstance(var, IndexVar) and var.extent is None and read.tensor.shape[axis] is not None:
                self._add_candidate(var, Candidate(read.tensor.shape[axis], read.span,
                                                   f"{names[axis]} (axis {axis})"))

    def _add_candidate(self, var: IndexVar, cand: Candidate) -> None:
        for frame in reversed(self.frames):
            if var in frame.pending:
                frame.candidates.setdefault(var, []).append(cand)
                return
