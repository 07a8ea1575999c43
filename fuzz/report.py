"""What a fuzzing campaign found: counts, and every bad outcome with what reproduces it.

A finding that matches an entry of fuzz.known_issues is reported as "known, owned elsewhere"
and does not fail the run; every other finding does.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Finding:
    name: str                      # where it came from, e.g. "seed 1 program 17"
    target: str
    kind: str                      # mismatch, rejected, internal, run-error, hang, crash, ...
    detail: str
    known: str | None = None       # the key of the known issue that explains it
    source: str = ""               # the program (or mutant) text
    case: object = None            # what reproduces it (a fuzz.programs.generate.Case), pickled


@dataclass
class Report:
    campaign: str
    counts: Counter = field(default_factory=Counter)
    findings: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def bad(self) -> list:
        return [f for f in self.findings if f.known is None]

    def kinds(self) -> Counter:
        """Bad outcomes by kind and blurred detail: one line per distinct failure."""
        return Counter(f"{f.kind} on {f.target}: {blur(f.detail)}" for f in self.bad)

    def format(self, examples: int = 5) -> str:
        lines = [f"== {self.campaign}: {len(self.bad)} bad outcome(s) in {self.seconds:.0f} s"]
        lines += [f"   {name}: {count}" for name, count in sorted(self.counts.items())]
        known = Counter(f.known for f in self.findings if f.known)
        for key, count in known.most_common():
            lines.append(f"   known, owned elsewhere: {key}: {count}")
        for line, count in self.kinds().most_common():
            lines.append(f"   {count} x {line}")
        for finding in self.bad[:examples]:
            lines.append(f"-- {finding.kind} on {finding.target} ({finding.name}): {finding.detail}")
            lines += ["   " + line for line in finding.source.strip().splitlines()[:40]]
        if len(self.bad) > examples:
            lines.append(f"   ... and {len(self.bad) - examples} more")
        return "\n".join(lines)


def blur(text: str) -> str:
    """`text` with names in backticks, numbers and SSA values blurred, so that one failure in
    different programs reads the same."""
    text = text.splitlines()[0] if text else ""
    text = re.sub(r"`[^`]*`", "`_`", text)
    text = re.sub(r"%\w+|\d+(\.\d+)?(e-?\d+)?", "#", text)
    return text[:150]
