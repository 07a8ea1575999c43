"""One case of the stdlib campaign: a call drawn from fuzz.stdlib.calls.CALLS and LATER_CALLS and
fuzz.stdlib.newer_calls.NEWER_CALLS by weight, in one of the element types its function takes,
with its inputs and meaning. Whether a case draws from LATER_CALLS, and then whether from
NEWER_CALLS, comes from a random stream of its own each, so a case that does not is the one
the earlier tables alone gave (seeds keep their cases)."""
from __future__ import annotations

import random
from dataclasses import dataclass

from fuzz.stdlib.calls import CALLS, LATER_CALLS
from fuzz.stdlib.newer_calls import NEWER_CALLS
from fuzz.stdlib.draw import Draw
from fuzz.stdlib.spec import StdProgram


@dataclass
class StdCase:
    program: StdProgram
    inputs: dict                   # input name -> array
    meaning: dict                  # output name -> Want


def generate_case(seed: int, k: int, only: tuple = ()) -> StdCase:
    rng = random.Random(f"stdlib {seed} {k}")
    table, later, newer = _among(CALLS, only), _among(LATER_CALLS, only), _among(NEWER_CALLS, only)
    share = _weight(later) / ((_weight(table) + _weight(later)) or 1)
    if later and random.Random(f"stdlib later {seed} {k}").random() < share:
        rng, table = random.Random(f"stdlib later {seed} {k} call"), later
    share = _weight(newer) / ((_weight(table) + _weight(newer)) or 1)
    if newer and random.Random(f"stdlib newer {seed} {k}").random() < share:
        rng, table = random.Random(f"stdlib newer {seed} {k} call"), newer
    names = sorted(table)
    name = rng.choices(names, weights=[table[n][2] for n in names])[0]
    drawer, dtypes, _ = table[name]
    program, inputs, meaning = drawer(Draw(rng, rng.choice(dtypes)))
    return StdCase(program, inputs, meaning)


def _among(calls: dict, only: tuple) -> dict:
    return {n: c for n, c in calls.items() if not only or n in only}


def _weight(calls: dict) -> int:
    return sum(c[2] for c in calls.values())
