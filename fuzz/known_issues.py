"""Bad outcomes that are known and being fixed elsewhere, so they do not block fuzzing.

Each entry names the issue that owns it and says which outcomes it explains: their kinds, a
pattern their detail must match, and optionally a shape the program must have
(fuzz.programs.features). The fuzz report counts them under "known, owned elsewhere"; remove an
entry when its fix lands, and the fuzzers check the fix.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fuzz.programs import features


@dataclass(frozen=True)
class KnownIssue:
    key: str
    owner: str
    kinds: tuple
    detail: str = ""               # a regular expression searched in the outcome's detail
    shape: object = None           # a predicate on the program structure and the detail
    targets: tuple = ()            # the targets it happens on (all if empty)


KNOWN_ISSUES = (
    KnownIssue("the derivative of a recurrence member on vulkan-spirv can be wrong or fail at run time "
               "(`let r[t in 1..N, j in 0..N] = tanh(r[t - 1, j / 3] + r[t - 1, j / 2] * t as f32);"
               " let g = @r / @x;` gave a Jacobian that llvm-cpu and NumPy do not; with more around it, "
               "OUT_OF_RANGE in hal.buffer_view.create)",
               "issue 11: found by the differential fuzzer, open", ("mismatch", "run-error"),
               shape=features.derivative_of_a_recurrence, targets=("vulkan-spirv",)),
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
