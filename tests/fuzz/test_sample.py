"""A fixed-seed sample of each fuzzer (fuzz.campaigns), run on every submission; `make fuzz`
runs the full campaigns. The fast tier (tests/tiers.py) takes the first 30% of each sample. A
bad outcome fails the test with the program that caused it; the ones fuzz/known_issues.py lists
(owned by other work) are counted, not failed."""
from __future__ import annotations

import pytest

from fuzz.campaigns import campaign
from fuzz.dense.campaign import run_dense
from fuzz.programs.campaign import run_differential
from fuzz.stdlib.campaign import run_stdlib
from tests.tiers import VULKAN, VULKAN_FULL, by_tier

SEED = 2024


def sample(name: str) -> int:
    """How many cases of campaign `name` this tier tries."""
    whole = campaign(name).sample
    return by_tier(whole * 3 // 10, whole)


@pytest.fixture(scope="module")
def programs():
    return sample("programs")


def test_generated_programs_match_their_numpy_meaning_on_llvm_cpu(programs):
    report = run_differential(programs, SEED, targets=("llvm-cpu",), log=lambda _: None)
    assert report.counts["programs checked on llvm-cpu"] + len(report.findings) >= programs
    assert not report.bad, report.format()


@pytest.mark.vulkan
def test_generated_programs_match_their_numpy_meaning_on_vulkan(programs):
    report = run_differential(programs, SEED, targets=("vulkan-spirv",), log=lambda _: None)
    # those of Vulkan's types: 29 of the 100 of this seed, 6 of its first 30 (f64, f16, bf16,
    # i64, u64, i16 and u16 ones are not Vulkan's)
    assert report.counts["programs checked on vulkan-spirv"] >= programs // 5
    assert not report.bad, report.format()


def test_mutants_of_real_programs_get_diagnostics_never_tracebacks():
    mutants = campaign("mutants")
    count = sample("mutants")
    report = mutants.run(count, SEED, jobs=2)
    assert report.counts["in process: diagnostic"] > count // 2
    assert report.counts["in process: valid"] + report.counts["in process: built"] > 0
    assert report.counts["cli: diagnostic"] > 0
    assert not report.bad, report.format()


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("llvm-cpu-generic", marks=pytest.mark.full), VULKAN])
def test_dense_programs_match_their_numpy_meaning(target):
    """The dense campaign's sample (fuzz.dense): matmuls, convolutions, poolings and their near
    misses; Vulkan runs the f32 ones."""
    count = sample("dense")
    report = run_dense(count, SEED, targets=(target,), log=lambda _: None)
    assert report.counts[f"programs checked on {target}"] + len(report.findings) >= count // 2
    assert not report.bad, report.format()


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_stdlib_calls_match_their_numpy_meaning(target):
    """The stdlib campaign's sample (fuzz.stdlib): drawn std::ml, std::math and std::array calls
    against their ONNX / math-library meaning; Vulkan runs a share of the f32 and i32 ones."""
    count = sample("stdlib")
    report = run_stdlib(count, SEED, targets=(target,), log=lambda _: None)
    checked = report.counts[f"programs checked on {target}"] + len(report.findings)
    assert checked >= (count // 2 if target == "llvm-cpu" else 1)
    assert not report.bad, report.format()
