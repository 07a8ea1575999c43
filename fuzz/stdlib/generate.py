"""One case of the stdlib campaign: a call drawn from fuzz.stdlib.calls.CALLS by weight, in
one of the element types its function takes, with its inputs and meaning."""
from __future__ import annotations

import random
from dataclasses import dataclass

from fuzz.stdlib.calls import CALLS
from fuzz.stdlib.draw import Draw
from fuzz.stdlib.spec import StdProgram


@dataclass
class StdCase:
    program: StdProgram
    inputs: dict                   # input name -> array
    meaning: dict                  # output name -> Want


def generate_case(seed: int, k: int, only: tuple = ()) -> StdCase:
    rng = random.Random(f"stdlib {seed} {k}")
    names = [n for n in sorted(CALLS) if not only or n in only]
    name = rng.choices(names, weights=[CALLS[n][2] for n in names])[0]
    drawer, dtypes, _ = CALLS[name]
    program, inputs, meaning = drawer(Draw(rng, rng.choice(dtypes)))
    return StdCase(program, inputs, meaning)
