"""A read of a point no clause of a (non-recurrent) definition defines is E005 at build time
(LANGUAGE.md section 10; einc.semantics.core.coverage): it read 0 there. The message names the
missing points as a slice, a whole row or column where one is missing, and the hint gives the
clause that defines them. Guarded reads that skip the gap, reads through data and definitions
that nothing reads at a gap still build."""
import pytest

GAP = "let u[0] = 1.0;\nlet u[i in 2..5] = i as f64;\n"
GRID = "let x: [f64; N];\nlet g[0, j in 0..N] = 1.0;\nlet g[i in 2..4, j in 0..N] = x[j];\n"

MISSING = [
    # a scalar read of the point the clauses skip, and reads over ranges that reach it
    (GAP + "let y = u[1];\n", "u[1]", "u[1]", "u[1]"),
    (GAP + "let y = sum[i](u[i]);\n", "u[1]", "u[1]", "u[i]"),
    (GAP + "let y[i in 2..5] = u[i] + u[i - 2];\n", "u[1]", "u[1]", "u[i - 2]"),
    # a missing row of a grid whose columns run to an input's size: named whole
    (GRID + "let y[i in 0..3, j in 0..N] = g[i + 1, j];\n", "g[1, 0..N]", "g[1, j in 0..N]", "g[i + 1, j]"),
    # a missing column, read under a reduction's `where` that leaves it in
    ("let x: [f64; N];\nlet g[i in 0..3, 0] = 1.0;\nlet g[i in 0..3, j in 2..N] = x[j];\n"
     "let y = sum[i, j](g[i, j] where j < 2);\n", "g[0..3, 1]", "g[i in 0..3, 1]", "g[i, j]"),
    # a single clause that starts past 0
    ("let u[i in 2..5] = 1.0;\nlet y[i in 0..4] = u[i + 1];\n", "u[1]", "u[1]", "u[i + 1]"),
    # a guarded read whose guard still lets the gap through
    (GAP + "let y[i in 0..5] = if i < 3 { u[i] } else { 0.0 };\n", "u[1]", "u[1]", "u[i]"),
]


@pytest.mark.parametrize("source, points, head, read", MISSING)
def test_a_read_of_points_no_clause_defines_is_E005_naming_them(diagnose, source, points, head, read):
    diag, text = diagnose(source)
    name = points.split("[")[0]
    those = "that point" if ".." not in points else "those points"
    assert diag.code == "E005" and "error[E005]" in text
    assert diag.message == f"`{points}` is read here, but no clause of `{name}` defines {those}"
    assert f"give {those} a clause, e.g. `let {head} = ..;`" in diag.hint
    line = source.splitlines()[diag.span.line - 1]
    assert line[diag.span.col - 1:].startswith(read)


BUILDS = [
    # the guard skips the gap (a start guard, and a `where` that cuts it off)
    GAP + "let y[i in 0..5] = if i > 1 { u[i] } else { 0.0 };\n",
    GAP + "let y = sum[i](u[i] where i >= 2);\n",
    # a read through data is not judged; a `!=` guard is not judged either
    GAP + "let k: [i32; 3];\nlet y[i in 0..3] = u[k[i]];\n",
    GAP + "let y[i in 0..5] = if i != 1 { u[i] } else { 0.0 };\n",
    # every point read is defined; the gap is only written out
    GAP + "let y[i in 2..5] = u[i] + u[0];\n",
    # an overriding point fills the gap
    GAP + "let u[1] = 3.0;\nlet y = sum[i](u[i]);\n",
    # bounds of no known order (M against N) are not judged
    "let a: [f64; M];\nlet b: [f64; N];\nlet v[0] = 1.0;\nlet v[i in M..M + N] = 2.0;\nlet y[j in 0..N] = v[j];\n",
]


@pytest.mark.parametrize("source", BUILDS)
def test_reads_of_defined_points_guarded_reads_and_reads_through_data_build(analyze, source):
    assert analyze(source).outputs
