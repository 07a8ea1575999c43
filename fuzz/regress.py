"""`python -m fuzz.regress FINDING.pickle TARGET NAME "what went wrong"`: shrink a generated
program that fails on TARGET (a finding `python -m fuzz --findings DIR` wrote) and write it as
tests/fuzz/regressions/NAME.ein, a regression test for every target it runs on. Run it before
fixing the bug: it keeps only variants that still fail."""
from __future__ import annotations

import argparse
import os
import pickle
import sys

from fuzz.programs.campaign import TARGETS, runs_on
from fuzz.programs.regression import regression_text
from fuzz.programs.shrink import shrink
from fuzz.workers import Pool

FOLDER = os.path.join("tests", "fuzz", "regressions")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.regress", description=__doc__)
    parser.add_argument("finding", help="a .pickle written by `python -m fuzz --findings DIR`")
    parser.add_argument("target", choices=TARGETS)
    parser.add_argument("name")
    parser.add_argument("description")
    parser.add_argument("--budget", type=int, default=400, help="most builds to try while shrinking")
    args = parser.parse_args(argv)
    with open(args.finding, "rb") as file:
        case = pickle.load(file)
    with Pool(2) as pool:
        small, failure = shrink(case, args.target, pool, args.budget, log=lambda line: print(line, flush=True))
    if failure is None:
        print(f"{args.finding} does not fail on {args.target} (fixed already?)", file=sys.stderr)
        return 1
    print(f"fails with: {failure}")
    targets = tuple(t for t in TARGETS if runs_on(small, t))
    text = regression_text(small, args.description, targets)
    os.makedirs(FOLDER, exist_ok=True)
    path = os.path.join(FOLDER, f"{args.name}.ein")
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    print(text)
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
