"""Bad outcomes that are known and owned elsewhere, so they do not block fuzzing.

Each entry names its owner (an issue, or the IREE limitation einc reports as a clear error)
and says which outcomes it explains: their kinds, a pattern their detail must match, and
optionally a shape the program must have (a predicate on fuzz.programs.structure.Program).
The fuzz report counts them under "known, owned elsewhere"; remove an entry when its fix
lands, and the fuzzers check the fix.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownIssue:
    key: str
    owner: str
    kinds: tuple
    detail: str = ""               # a regular expression searched in the outcome's detail
    shape: object = None           # a predicate on the program structure and the detail
    targets: tuple = ()            # the targets it happens on (all if empty)


def derivative_through_a_step_let(program, detail: str = "") -> bool:
    """A derivative in a program whose recurrence steps hold an indexed `let` (a step tensor)."""
    from fuzz.programs.structure import Derivative, Group, StepTensor, clause_exprs, walk
    lets = any(isinstance(node, StepTensor) for item in program.items if isinstance(item, Group)
               for m in item.members for c in m.clauses for e in clause_exprs(c) for node in walk(e))
    return lets and any(isinstance(item, Derivative) for item in program.items)


KNOWN_ISSUES: tuple = (
    # IREE 3.13's Vulkan HAL refuses a dispatch binding an empty buffer; einc reports the run
    # as a RunError (einc/mlir/empty_guards.py says why it does not work around it).
    KnownIssue("empty tensor on vulkan", "IREE 3.13's Vulkan HAL", ("run-error",),
               detail="vulkan device cannot dispatch", targets=("vulkan-spirv",)),
    # IREE 3.13 passes a kernel's run-time sizes and offsets as push constants, two words each,
    # and cannot spill them; lavapipe allows 128 bytes. einc says to fix sizes with --dim.
    KnownIssue("push constants over the vulkan limit", "IREE 3.13's Vulkan push constants", ("run-error",),
               detail="bytes of run-time sizes \\(push constants\\)", targets=("vulkan-spirv",)),
    # einc/autodiff/scalar_adjoint.py: the reverse pass does not go through a state read inside
    # a step's indexed `let` yet (E011), e.g. `@s / @x` of a sum of r where r's step holds
    # `{ let h[i in 0..2] = tanh(r[t - 1, i]); h[1] }`.
    KnownIssue("derivative through a step's indexed let", "einc: not compiled yet (E011)", ("rejected",),
               detail="derivatives through recurrences are not compiled yet", shape=derivative_through_a_step_let),
)


def explain(program, kind: str, detail: str, target: str = "") -> str | None:
    """The key of the first known issue that explains this outcome, or None."""
    for issue in KNOWN_ISSUES:
        if kind not in issue.kinds or not re.search(issue.detail, detail) or \
                (issue.targets and target not in issue.targets):
            continue
        if issue.shape is None or (program is not None and issue.shape(program, detail)):
            return f"{issue.key} ({issue.owner})"
    return None
