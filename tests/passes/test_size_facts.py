"""The size facts a run must satisfy (passes/size_facts): extents >= 0, accesses in range, and
only the facts that can fail for some sizes."""
from pathlib import Path

from einc.driver import front_end
from einc.passes.size_facts import ExtentFact, IndexFact

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def facts_of(tmp_path, source: str) -> list:
    path = tmp_path / "program.ein"
    path.write_text(source)
    return front_end(str(path))[1].size_facts


def described(fact) -> tuple:
    if isinstance(fact, ExtentFact):
        return ("extent", fact.var, repr(fact.extent))
    return (fact.access, fact.array, fact.axis, repr(fact.first), repr(fact.last), repr(fact.size),
            tuple(map(repr, fact.when)))


def test_convolution_extents_and_nothing_that_always_holds():
    facts = front_end(str(EXAMPLES / "basics" / "conv2d.ein"))[1].size_facts
    assert [described(f) for f in facts][:4] == [
        ("extent", "oh", "H - KH + 1"), ("extent", "ow", "W - KW + 1"),
        ("extent", "ph", "(H - KH + 1) / 2"), ("extent", "pw", "(W - KW + 1) / 2")]
    assert (facts[0].span.line, facts[0].span.col) == (12, 13)
    # the pooling window's reads: inside for every size, but beyond what a linear proof sees
    pooling = [described(f)[:6] for f in facts[4:]]
    assert pooling == [("read", "an intermediate array", 2, "0", "2*((H - KH + 1) / 2) - 1", "H - KH + 1"),
                       ("read", "an intermediate array", 3, "0", "2*((W - KW + 1) / 2) - 1", "W - KW + 1")]


def test_fixed_reads_and_reads_at_the_end(tmp_path):
    facts = facts_of(tmp_path, "let y: [f32; N];\nlet s = y[0] + y[N - 1];\nlet z[i in 0..N] = y[i];\n")
    assert [described(f) for f in facts] == [("read", "y", 0, "0", "0", "N", ()),
                                             ("read", "y", 0, "N - 1", "N - 1", "N", ())]


def test_unguarded_reads_must_stay_inside_and_guarded_ones_need_an_element(tmp_path):
    facts = facts_of(tmp_path, "let y: [f32; N];\nlet b: [f32; M];\nlet z[i in 0..M] = b[i] * y[2];\n")
    assert [described(f) for f in facts] == [("read", "y", 0, "2", "2", "N", ())]
    facts = facts_of(tmp_path, "let y: [f32; N];\nlet z[i in 0..4] = if i < N { y[i] } else { 0.0 };\n")
    assert [described(f) for f in facts] == [("read", "y", 0, "0", "0", "N", ("4",))]


def test_a_read_inside_a_domain_counts_only_when_the_domain_is_not_empty(tmp_path):
    facts = facts_of(tmp_path, "let y: [f32; N];\nlet b: [f32; M];\nlet z[i in 0..M] = y[i + N - 1];\n")
    assert [described(f) for f in facts] == [("read", "y", 0, "N - 1", "M + N - 2", "N", ("M",))]


def test_recurrence_clauses_write_inside_their_member(tmp_path):
    facts = facts_of(tmp_path, "let z: [f64; T];\nlet s[0] = z[0];\nlet s[t in 1..T] = s[t - 1] + z[t - 1];\n")
    kinds = [described(f) for f in facts]
    assert sorted(kinds) == [("extent", "t", "T - 1"), ("read", "z", 0, "0", "0", "T", ()),
                             ("write", "s", 0, "0", "0", "T", ("1",))]
    # `z[t - 1]` runs at the clause's steps 1..T only, so it touches 0 ..= T - 2: no fact


def test_programs_of_fixed_sizes_have_no_facts(tmp_path):
    assert facts_of(tmp_path, "let y: [f32; 4];\nlet s = y[0] + y[3];\nlet w[i in 1..4] = y[i] - y[i - 1];\n") == []


def test_a_write_that_leaves_its_array_whenever_it_runs_is_a_build_error(diagnose):
    # regression (mutant fuzzer, seed 1 mutant 2072): the clause writes index -1 whenever it
    # runs, so only sizes at which it runs not at all (N = 2) could pass; it once reached the
    # lowering as an insert at offset -1, which MLIR rejects (an internal error)
    error, _ = diagnose("let x1: [i32; N];\nlet p6[1, j] = x1[j];\nlet p6[i in 2..N, j in -1..N] = i;\n")
    assert error.code == "E005" and "touches indices -1 to N - 1 of axis 1" in error.message
    assert error.span.line == 3                      # the clause that writes, not the first one
    error, _ = diagnose("let x: [f32; N];\nlet p[i in 0..N, j in -1..N] = x[i];\n")
    assert error.code == "E005" and error.span.line == 2



def test_a_read_in_a_range_that_grows_with_an_outer_index_is_checked_at_its_far_end(tmp_path):
    facts = facts_of(tmp_path, "let x: [f32; N];\nlet c[i in 0..8] = sum[k in 0..i + 1](x[k]);\n")
    assert ("read", "x", 0, "7", "7", "N", ("8", "8")) in [described(f) for f in facts]
    # a guard on the read, or a range that never leaves the array, leaves nothing to check at the far end
    guarded = facts_of(tmp_path, "let x: [f32; N];\nlet c[i in 0..8] = sum[k in 0..i + 1](x[k]) where k < N;\n")
    assert all(described(f)[3] == "0" for f in guarded)
    assert facts_of(tmp_path, "let x: [f32; N];\nlet c[i in 0..N] = sum[k in 0..i + 1](x[k]);\n") == []


def test_a_read_in_a_dependent_range_is_checked_at_the_ends_of_the_other_indices_too(tmp_path):
    """`s[i + k]` with k in 0..l + 1 reads s[2 N - 2] at l = i = N - 1, but the far end of the
    range left i free, so nothing was checked before a run and the read was clamped: palindromic
    windows of a run-time length (found writing the hold-out program palindrome_subseq)."""
    facts = facts_of(tmp_path, "let s: [i32; N];\nlet p[l in 0..N, i in 0..N] = sum[k in 0..l + 1](s[i + k]);\n")
    assert ("read", "s", 0, "2*N - 2", "2*N - 2", "N", ("N", "N", "N")) in [described(f) for f in facts]


def test_a_windowed_recurrence_read_at_its_last_step_in_a_dependent_range_checks_no_step(tmp_path):
    """S keeps a window of 2 steps, so its read S[N, k2] reads slot N % 2; the far end recorded
    for the dependent range `k2 in 0..k + 1` once asked a run for index N of the window's axis 0,
    failing every run (found writing the hold-out program isotonic_pava)."""
    path = tmp_path / "program.ein"
    path.write_text("let y: [f64; N];\nlet S[0, k in 0..N] = 0.0;\n"
                    "let S[t in 1..N + 1, k in 0..N] = S[t - 1, k] + y[t - 1];\n"
                    "let upto[k in 0..N] = sum[k2 in 0..k + 1](S[N, k2]);\n")
    facts = front_end(str(path), ["upto"])[1].size_facts
    assert [described(f) for f in facts if getattr(f, "array", None) == "S" and f.axis == 0] == []
