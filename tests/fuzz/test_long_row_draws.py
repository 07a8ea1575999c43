"""The program fuzzer draws some recurrence groups of more steps than a host loop's chunk (256,
einc/mlir/recurrences/chunks.py) whose numeric steps compute a tensor from the members' earlier
rows and reduce a member's row (`max(r[t - 1])`; fuzz/programs/generate.py `LONG_SHARE`): a
step reading a row `x[t - 1]` whole gave wrong values from step 256 on until the chunks kept
those rows. They are drawn from a
random stream of their own so that every seed's other programs stay as they were, and one such
program matches its NumPy meaning (fuzz/programs/meaning.py) on llvm-cpu; the campaigns check
more, on vulkan-spirv too."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Group, Prelude, item_exprs, walk
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 15106         # its program 2 read row 255 wrong at step 256 before the fix (r6)
CHUNK = 256


def _long_with_rows(program) -> bool:
    """A group of more steps than a chunk whose steps reduce a member's row (`max(r[t - 1])`)."""
    return any(isinstance(item, Group) and _longest_step(item) > CHUNK
               and any(isinstance(n, Prelude) and n.back for e in item_exprs(item) for n in walk(e))
               for item in program.items)


def _longest_step(group: Group) -> int:
    """The largest constant end of a member's step clause (a named dim's is small)."""
    ends = [c.slots[0].hi for m in group.members for c in m.clauses]
    return max((b.const for b in ends if b.dim is None and b.index is None), default=0)


def test_long_groups_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "LONG_SHARE", SEED, _long_with_rows, count=3)
    assert drawn and len(changed) <= 1, (drawn, changed)   # a first attempt the meaning rejects


def test_a_long_group_computing_rows_matches_numpy():
    assert_drawn_match_numpy(SEED, _long_with_rows, "llvm-cpu", take=1, least=1, count=3)
