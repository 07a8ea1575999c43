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


KNOWN_ISSUES: tuple = (
    # IREE 3.13's Vulkan HAL refuses a dispatch binding an empty buffer; einc reports the run
    # as a RunError (einc/mlir/empty_guards.py says why it does not work around it).
    KnownIssue("empty tensor on vulkan", "IREE 3.13's Vulkan HAL", ("run-error",),
               detail="vulkan device cannot dispatch", targets=("vulkan-spirv",)),
    # IREE 3.13 passes a kernel's run-time sizes and offsets as push constants, two words each,
    # and cannot spill them; lavapipe allows 128 bytes. einc says to fix sizes with --dim.
    KnownIssue("push constants over the vulkan limit", "IREE 3.13's Vulkan push constants", ("run-error",),
               detail="bytes of run-time sizes \\(push constants\\)", targets=("vulkan-spirv",)),
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
