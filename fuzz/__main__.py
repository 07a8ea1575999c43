"""`python -m fuzz [--only NAME].. [--n N] [--seed S] [--jobs J]`: run the fuzzing campaigns
(fuzz.campaigns), print their reports, exit 1 if any found a bad outcome that is not known."""
from __future__ import annotations

import argparse
import os
import pickle
import sys

from fuzz.campaigns import CAMPAIGNS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--only", action="append", choices=[c.name for c in CAMPAIGNS],
                        help="run only this campaign (repeatable; default: all)")
    parser.add_argument("--n", type=int, help="cases per campaign (default: each campaign's full size)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: 2 or the number of CPUs if fewer)")
    parser.add_argument("--findings", metavar="DIR", help="write each bad outcome to a file in DIR")
    args = parser.parse_args(argv)
    bad = 0
    for c in CAMPAIGNS:
        if args.only and c.name not in args.only:
            continue
        n = args.n if args.n is not None else c.full
        print(f"fuzzing {c.name}: {n} cases, seed {args.seed}", flush=True)
        report = c.run(n, args.seed, args.jobs)
        print(report.format(), flush=True)
        bad += len(report.bad)
        if args.findings:
            write_findings(report, c.name, args.findings)
    return 1 if bad else 0


def write_findings(report, name: str, folder: str) -> None:
    """DIR/NAME-K-TARGET.txt says what went wrong; .pickle beside it holds the case for
    `python -m fuzz.regress`."""
    os.makedirs(folder, exist_ok=True)
    for k, finding in enumerate(report.bad):
        stem = os.path.join(folder, f"{name}-{k:04d}-{finding.target}")
        with open(stem + ".txt", "w", encoding="utf-8") as file:
            file.write(f"// {finding.kind} on {finding.target} ({finding.name})\n// {finding.detail}\n")
            file.write(finding.source)
        if finding.case is not None:
            with open(stem + ".pickle", "wb") as file:
                pickle.dump(finding.case, file)


if __name__ == "__main__":
    sys.exit(main())
