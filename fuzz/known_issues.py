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


ISSUE_11 = "issue 11 item {}, branch fix"
MISBEHAVES = ("mismatch", "internal", "run-error", "crash", "hang")

KNOWN_ISSUES = (
    KnownIssue("a reduction whose body reads no array takes its extent from an unused operand",
               ISSUE_11.format(1), MISBEHAVES, shape=features.reduction_reading_no_array),
    KnownIssue("a recurrence reading another's finished values is fused into its loop",
               ISSUE_11.format(2), MISBEHAVES, shape=features.recurrence_reads_another),
    KnownIssue("a recurrence reading another's finished values is fused into its loop",
               ISSUE_11.format(2), ("rejected",),
               r"used before it is defined|step\(s\) ahead|explicit range|reaches further|"
               r"cannot infer the range", features.recurrence_reads_another),
    KnownIssue("a derivative with respect to a build-time binding", "issue 9 / issue 11 item 3",
               ("rejected",), r"E011: the derivative's \w+ is an untyped literal"),
    KnownIssue("a derivative with respect to a build-time binding", "issue 9 / issue 11 item 3",
               ("mismatch",), shape=features.derivative_of_build_time_value),
    KnownIssue("windowed reads IREE rejects (unit extents, negative coefficients)", ISSUE_11.format(6),
               ("internal",), r"inferred input/output operand"),
    KnownIssue("recurrences with a length-1 axis or run-time sizes IREE rejects", ISSUE_11.format(7),
               ("internal",), r"does not dominate this use|defined as a block argument|"
               r"exceeded stack allocation limit"),
    KnownIssue("on vulkan-spirv a recurrence's rows set by two or more literal points come out wrong "
               "(`let r[0] = 2.0; let r[1] = 1.0; let r[t in 2..5] = r[t - 1];` gives zeros)",
               "found by the fuzzer, reported to the lead: the Vulkan host loop (recurrence_host.py)",
               ("mismatch",), shape=features.recurrence_with_points_before_its_step,
               targets=("vulkan-spirv",)),
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
