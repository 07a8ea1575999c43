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
    KnownIssue("a derivative with respect to a build-time binding", "issue 9 / issue 11 item 3",
               ("rejected",), r"E011: the derivative's \w+ is an untyped literal"),
    KnownIssue("a derivative with respect to a build-time binding", "issue 9 / issue 11 item 3",
               ("mismatch",), shape=features.derivative_of_build_time_value),
    KnownIssue("a recurrence with a length-1 axis still fails on vulkan-spirv (`let H[t in 1..5, b in 0..1, "
               "j in 0..3] = H[t - 1, b, j] * 0.5;`: operand does not dominate this use)",
               "issue 11 item 7: fixed on llvm-cpu only, reported to the lead", ("internal",),
               r"does not dominate this use|defined as a block argument", targets=("vulkan-spirv",)),
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
