"""The suite's two tiers. `make test` (CI, .ci/run) runs the fast tier: every feature's tests, each
program on the targets that matter for it, the fuzzers' draw tests with a few programs. `make
test-full` (EINC_TESTS=full) runs everything: each test marked `full` (the long form of a check
the fast tier makes smaller: the second target of a target sweep, the longest programs, every
width of a block sweep), every case of a test function marked `sampled(every=k)` (the fast tier
runs its first case and every k-th after it: a sweep over many real programs) and the draw
tests at their full counts. Run the full tier before a
change lands that touches lowering, recurrences or a target; docs/DECISIONS.md says how the
fast tier was chosen."""
from __future__ import annotations

import os
from collections import defaultdict

import pytest

FULL = os.environ.get("EINC_TESTS", "fast") == "full"

# A target sweep's Vulkan case in both tiers, and in the full tier only.
VULKAN = pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)
VULKAN_FULL = pytest.param("vulkan-spirv", marks=[pytest.mark.vulkan, pytest.mark.full])
# A CPU sweep's portable case (no host tuning) in the full tier only.
GENERIC_FULL = pytest.param("llvm-cpu-generic", marks=pytest.mark.full)


def by_tier(fast, full):
    """`fast` in the fast tier, `full` in the full one (counts of drawn programs, sizes)."""
    return full if FULL else fast


def left_out_of_the_fast_tier(items: list) -> set:
    """The collected `items` the fast tier does not run."""
    left_out = {item for item in items if item.get_closest_marker("full")}
    cases = defaultdict(list)
    for item in items:
        sampled = item.get_closest_marker("sampled")
        if sampled and item not in left_out:
            cases[(item.module.__name__, item.originalname)].append((item, sampled.kwargs["every"]))
    for function_cases in cases.values():
        left_out |= {item for k, (item, every) in enumerate(function_cases) if k % every}
    return left_out
