"""Comprehensions (LANGUAGE.md sections 3 and 9): evaluated at build time over build-time data,
one kernel over run-time data, and a length computed on the device for run-time filters."""
import io

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from tests.tiers import VULKAN_FULL

BUILD_TIME = """
let big = [v | v in [4, 11, 7, 20, 3], v > 6];
let none = [v | v in [4, 11], v > 100];
let grid = [r * 10 + c | r in 0..2, c in 0..3];
let member = [v | v in 0..10, v in 3..6];
let pairs = [(r, c) | r in 0..2, c in 5..7];
let first = pairs[1].0;
let second = pairs[2][1];
let sums = [t.0 + t.1 | t in pairs];
let reversed = [i | i in 9..4];
let rows = [[a, b, a + b] | a in 0..2, b in 0..2];
let nested = [[i * j | j in 0..3] | i in 0..2];
let triangle = [(i, j) | i in 0..4, j in 0..i];
let triples = [[3, 4, 5], [5, 12, 13]];
let checked = [assert(t[0] * t[0] + t[1] * t[1] == t[2] * t[2], "pythagorean") | t in triples];
let sparse = [i | i in 0..100000, i % 25000 == 0];
let w = [0.5, 1.5, 2.5];
let heavy = [v | v in w, v > 1.0];
let scaled[i] = heavy[i] * 2.0;
let heavy_total = sum[i](heavy[i]);
"""


@pytest.fixture(scope="module")
def build_time():
    return einc.load(einc.compile(BUILD_TIME).vmfb)()


@pytest.mark.parametrize("name, expected", [
    ("big", [11, 7, 20]),
    ("grid", [0, 1, 2, 10, 11, 12]),                    # row-major, one axis
    ("member", [3, 4, 5]),                              # `v in 3..6` with v bound: a filter
    ("pairs", [[0, 5], [0, 6], [1, 5], [1, 6]]),        # tuples of one type: (N, 2)
    ("first", 0), ("second", 5), ("sums", [5, 6, 6, 7]),
    ("rows", [[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 2]]),
    ("nested", [[0, 0, 0], [0, 1, 2]]),
    ("triangle", [[1, 0], [2, 0], [2, 1], [3, 0], [3, 1], [3, 2]]),
    ("sparse", [0, 25000, 50000, 75000]),
    ("heavy", [1.5, 2.5]), ("scaled", [3.0, 5.0]), ("heavy_total", 4.0),
])
def test_comprehensions_over_build_time_data(build_time, name, expected):
    np.testing.assert_array_equal(build_time[name], expected)


def test_empty_comprehensions_and_reversed_ranges_are_empty(build_time):
    assert build_time["none"].shape == (0,) and build_time["reversed"].shape == (0,)
    assert build_time["reversed"].dtype == np.int32      # typed like its element
    assert "checked" not in build_time                    # unit elements are not an output


def test_a_local_binding_tested_with_in_is_a_membership_filter(run):
    # `c in wanted` after `c = cols[k]` was read as a new generator over `wanted`: 8 positions
    # (each k twice) instead of the 2 whose column is wanted.
    X = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
    out = run("""
        let X: [f32; R, 4];
        let cols = ["age", "income", "debt", "score"];
        let wanted = ["score", "income"];
        let pick = [k | k in 0..4, c = cols[k], c in wanted];
        let odd = [v | k in 0..6, v = k * k, v in [1, 9, 25, 49]];
        let sub[r, j in 0..2] = X[r, pick[j]];
    """, X=X)
    np.testing.assert_array_equal(out["pick"], [1, 3])
    np.testing.assert_array_equal(out["odd"], [1, 9, 25])
    np.testing.assert_array_equal(out["sub"], X[:, [1, 3]])


def test_a_failing_assert_element_stops_the_build():
    with pytest.raises(CompileError) as info:
        einc.compile('let ts = [[3, 4, 5], [1, 2, 4]];\n'
                     'let ok = [assert(t[0] + t[1] > t[2], "triangle") | t in ts];\n')
    assert info.value.diagnostics[0].code == "E006" and "triangle" in info.value.diagnostics[0].message


RUN_TIME = """
let x: [f32; N];
let d: [i32; 5];
let pos = [v | v in x, v > 0.0];
let n = len(pos);
let total = sum[i](pos[i]);
let doubled[i] = pos[i] * 2.0;
let negative_at = [i | i in 0..N, x[i] < 0.0];
let evens = [(i, d[i]) | i in 0..5, d[i] % 2 == 0];
let big_evens = [e | e in evens, e.1 > 2];
let none = [v | v in x, v > 100.0];
let none_total = sum[i](none[i]);
let twice = [x[i] * 2.0 | i in 0..N];
let every_other = [x[i] | i in 0..N, i % 2 == 0];
let bounded = [assert(v < 50.0, "bounded") | v in x, v > 0.0];
let loss = sum[i](pos[i] * pos[i]);
let grad = @loss / @x;
print("kept", n, pos);
"""


@pytest.fixture(scope="module")
def run_time_program():
    return einc.load(einc.compile(RUN_TIME).vmfb)


def test_a_run_time_filter_has_a_length_computed_on_the_device(run_time_program):
    x = np.array([1.0, -2.0, 3.0, -4.0, 5.0, 0.0, 7.0], np.float32)
    d = np.array([1, 2, 3, 4, 6], np.int32)
    buf = io.StringIO()
    out = run_time_program.run({"x": x, "d": d}, stdout=buf)
    pos = x[x > 0]
    np.testing.assert_array_equal(out["pos"], pos)
    assert out["n"] == len(pos) and buf.getvalue() == f"kept {len(pos)} {pos}\n"
    assert out["total"] == np.float32(pos.sum())
    np.testing.assert_array_equal(out["doubled"], pos * 2)
    np.testing.assert_array_equal(out["negative_at"], np.flatnonzero(x < 0))
    np.testing.assert_array_equal(out["evens"], [[1, 2], [3, 4], [4, 6]])
    np.testing.assert_array_equal(out["big_evens"], [[3, 4], [4, 6]])
    assert out["none"].shape == (0,) and out["none_total"] == 0.0
    np.testing.assert_array_equal(out["twice"], x * 2)
    np.testing.assert_array_equal(out["every_other"], x[::2])
    np.testing.assert_array_equal(out["grad"], np.where(x > 0, 2 * x, 0))


def test_the_same_module_serves_other_lengths_and_checks_kept_elements(run_time_program):
    d = np.array([1, 2, 3, 4, 6], np.int32)
    out = run_time_program(x=np.array([-1.0, -3.0], np.float32), d=d)
    assert out["pos"].shape == (0,) and out["n"] == 0 and out["total"] == 0.0
    out = run_time_program(x=np.zeros(0, np.float32), d=d)      # nothing to filter at all
    assert out["pos"].shape == (0,) and out["negative_at"].shape == (0,) and out["n"] == 0
    with pytest.raises(einc.runtime.RunError, match="bounded"):
        run_time_program(x=np.array([60.0, -80.0], np.float32), d=d)
    run_time_program(x=np.array([-60.0, 2.0], np.float32), d=d)   # a dropped element is not checked


@pytest.mark.parametrize("source, words", [
    ("let m: [f32; 3, 4];\nlet c[i] = [v | v in m[i], v > 0.0][0];\n", "differ from point to point"),
    # a filter over a recurrence's state row, in a function its step calls
    ("let m: [f32; 4];\nfn f(r) { let k = [v | v in m, v > r[0]]; [k[0], r[1]] }\nlet z[0] = [1.0, 2.0];\n"
     "let z[t in 1..3] = f(z[t - 1]);\n", "differ from step to step"),
    ("let x: [f32; 4];\nlet p = [(i, x[i]) | i in 0..4, x[i] > 0.0];\n", "fields of one type"),
    # a dependent generator is enumerated at build time, never 2^31 rows of it (a fuzz mutant hung)
    ("let x: [f32; 4];\nlet t = [(i, j) | i in 0..2147483647, j in 0..i];\n", "at most 65536 combinations"),
])
def test_limits_of_comprehensions_over_run_time_data_are_E011(source, words):
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    diag = info.value.diagnostics[0]
    assert diag.code == "E011" and diag.span.line == 2 and words in diag.message


def test_a_fixed_read_of_a_run_time_length_is_checked_when_the_program_runs():
    program = einc.load(einc.compile("let x: [f32; 4];\nlet pos = [v | v in x, v > 1.0];\n"
                                     "let first = pos[0];\n").vmfb)
    assert program(x=np.array([0.5, 3.0, 2.0, -1.0], np.float32))["first"] == 3.0
    with pytest.raises(einc.runtime.RunError, match=r"prog.*:3:13: error\[E006\]: assertion failed: `pos\[0\]` reads past the end"):
        program(x=np.zeros(4, np.float32))



def test_a_comprehension_over_two_run_time_sizes_has_their_product_as_its_length():
    # two generators over named dims flatten row-major to B * N elements, a size computed before a
    # run as a range `0..B * N` is (E004 before: "not a linear size")
    source = """let m: [f32; B, N];
let pairs = [m[b, n] * 2.0 | b in 0..B, n in 0..N];
let kept = [b * N + n | b in 0..B, n in 0..N, m[b, n] > 0.5];
"""
    program = einc.load(einc.compile(source).vmfb)
    for shape in ((3, 4), (2, 5), (1, 1)):
        m = np.random.default_rng(sum(shape)).random(shape).astype(np.float32)
        out = program(m=m)
        np.testing.assert_array_equal(out["pairs"], m.ravel() * 2)
        np.testing.assert_array_equal(out["kept"], np.flatnonzero(m.ravel() > 0.5))

@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_len_and_sum_of_a_run_time_filter_inside_an_indexed_definition_count_per_row(run, target):
    """The filter keeps a different number of elements in each row; `len` and `sum` of them are
    a count and a guarded sum per row (other uses of such elements stay E011)."""
    X = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    out = run("""
        let X: [f32; 5, 7];
        let c[i in 0..5] = len([j | j in 0..7, X[i, j] > 0.5]);
        let s[i in 0..5] = sum([X[i, j] * 2.0 | j in 0..7, X[i, j] > 0.5, j != i]);
        let r[i] = len([v | v in X[i], v > 0.5]);
    """, target=target, X=X)
    kept = X > 0.5
    np.testing.assert_array_equal(out["c"], kept.sum(axis=1))
    np.testing.assert_array_equal(out["r"], kept.sum(axis=1))
    off_diagonal = kept & ~np.eye(5, 7, dtype=bool)
    # at most 7 f32 additions of values below 6
    np.testing.assert_allclose(out["s"], np.where(off_diagonal, X.astype(np.float64) * 2, 0).sum(axis=1),
                               rtol=1e-6, atol=1e-5)


def test_max_and_min_of_a_run_time_filter_per_point_and_per_step_reduce_it_where_written(run):
    """`max([..])` and `min([..])` of a filter that keeps a different number of elements per
    point, or per step of a recurrence (the filter reads the step's state, here through a
    function of its row: the kept elements were gathered before the loop ran, a KeyError in the
    lowering), are guarded reductions, as `len` and `sum` are; none kept gives their identity.
    Found by the hold-out program barrier_newton (a step length picked as the largest of 1, 1/2,
    1/4 .. keeping the iterate feasible)."""
    X = np.random.default_rng(4).standard_normal((4, 6))
    out = run("""
        let X: [f64; 4, 6];
        let hi[i in 0..4] = max([X[i, j] | j in 0..6, X[i, j] < 0.5]);
        let lo[i in 0..4] = min([X[i, j] * 2.0 | j in 0..6, X[i, j] > 0.0, j != i]);
        fn step(x) {
            let a = max([0.5 ** k | k in 0..20, all[j](X[0, j] * 0.5 ** k < x[0] + x[1])]);
            [0.5 * x[0] + a, x[1] + sum([x[0] * 0.5 ** k | k in 0..3, X[1, k] > 0.0])]
        }
        let z[0] = [4.0, 1.0];
        let z[t in 1..5] = step(z[t - 1]);
    """, X=X)
    m = np.where(X < 0.5, X, -np.inf).max(1)
    np.testing.assert_allclose(out["hi"], m, rtol=1e-15)
    keep = (X > 0) & ~np.eye(4, 6, dtype=bool)
    np.testing.assert_allclose(out["lo"], np.where(keep, 2 * X, np.inf).min(1), rtol=1e-15)
    z = [np.array([4.0, 1.0])]
    for _ in range(4):
        x = z[-1]; a = max(0.5 ** k for k in range(20) if (X[0] * 0.5 ** k < x[0] + x[1]).all())
        z.append(np.array([0.5 * x[0] + a, x[1] + sum(x[0] * 0.5 ** k for k in range(3) if X[1, k] > 0)]))
    np.testing.assert_allclose(out["z"], np.array(z), rtol=1e-14)


def test_the_length_property_of_a_run_time_filter_per_point_is_its_count(run):
    """`[..].length` is `len([..])`: a count per point of an enclosing definition or nested
    comprehension. It was E011 (the elements were built first): found by the hold-out program
    naive_bayes (a confusion matrix, `[[[d | d in 0..Docs, label[d] == a, pred[d] == b].length
    | b in 0..C] | a in 0..C]`)."""
    label, pred = np.int32([0, 2, 1, 1, 0, 2, 2]), np.int32([0, 1, 1, 2, 0, 2, 0])
    out = run("""
        let label: [i32; D];
        let pred: [i32; D];
        let confusion = [[[d | d in 0..D, label[d] == a, pred[d] == b].length | b in 0..3] | a in 0..3];
        let per_class[a in 0..3] = [d | d in 0..D, label[d] == a].length;
    """, label=label, pred=pred)
    want = np.array([[np.sum((label == a) & (pred == b)) for b in range(3)] for a in range(3)])
    np.testing.assert_array_equal(out["confusion"], want)
    np.testing.assert_array_equal(out["per_class"], want.sum(1))


def test_other_uses_of_a_run_time_filter_inside_an_indexed_definition_are_e011():
    with pytest.raises(CompileError) as info:
        einc.compile("let X: [f32; 3, 4];\nlet c[i in 0..3] = [X[i, j] | j in 0..4, X[i, j] > 2.0][0];\n")
    assert info.value.diagnostics[0].code == "E011"


TUPLE_GENERATORS = """
fn f(a, b) { a * 10 + b }
let P: [f32; N, 2];
let literal = [f(x, y) | (x, y) in [(3, 4), (5, 6)]];
let mixed = [x + y as f32 | (x, y) in [(1, 2.5), (3, 4.5)]];
let nested = [i * 100 + j * 10 + k | ((i, j), k) in [((1, 2), 3), ((4, 5), 6)]];
let dependent = [j | (n, _) in [(1, 2), (3, 4)], j in 0..n];
let rows = [a * 10.0 + b | (a, b) in P, a < b];
let rows_all = [a * 10.0 - b | (a, b) in P];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_tuple_patterns_in_generators_take_elements_apart(target):
    """`(x, y) in coll` binds the parts of each tuple, or the elements of each row of a table
    (at build time and over a run-time input), in nested patterns and with `_`."""
    P = np.array([[0, 1], [3, 2], [4, 5], [7, 6.5]], np.float32)
    program = einc.load(einc.compile(TUPLE_GENERATORS, target=target).vmfb)
    try:
        out = program(P=P)
    finally:
        program.close()
    np.testing.assert_array_equal(out["literal"], [34, 56])
    np.testing.assert_array_equal(out["mixed"], [3.5, 7.5])
    np.testing.assert_array_equal(out["nested"], [123, 456])
    np.testing.assert_array_equal(out["dependent"], [0, 0, 1, 2])
    np.testing.assert_allclose(out["rows"], [a * 10 + b for a, b in P if a < b], rtol=1e-6)
    np.testing.assert_allclose(out["rows_all"], P[:, 0] * 10 - P[:, 1], rtol=1e-6)


@pytest.mark.parametrize("source, message", [
    ("let P: [f32; N, 2];\nlet r = [a + b + c | (a, b, c) in P];", "cannot take [f32; 2] (a slice) apart into 3 parts"),
    ("let r = [a + b | (a, b) in [1, 2]];", "cannot take {int literal} apart into 2 parts"),
])
def test_a_tuple_pattern_that_does_not_fit_the_elements_is_a_type_error(diagnose, source, message):
    diag, _ = diagnose(source)
    assert diag.code == "E002" and message in diag.message


def test_a_filter_of_elements_batched_over_the_steps_is_reduced_where_written(run):
    """The elements `x[i] * q[t - 1]` (q computed before the loop) and `x[i] * t` differ per
    step: they come batched over the steps (rows), and a filter over a run-time size kept them
    in one array of rows, which reached the IR half built (an AttributeError traceback; fuzz seed
    10031 program 45). Reduced where written, as elements read from the step's state are."""
    x = np.array([3, 1, 4, 1, 5], np.float32)
    out = run("""
        let x: [f32; M];
        let q[t in 0..4] = x[t] * 2.0;
        let r[0] = 0.0;
        let r[t in 1..4] = r[t - 1] + v where v = max([x[i] * q[t - 1] | i in 0..M, i >= 1]);
        let s[0] = 0.0;
        let s[t in 1..4] = s[t - 1] + v where v = max([x[i] * (t as f32) | i in 0..M, i >= 1]);
    """, x=x)
    q, top = 2 * x[:4], x[1:].max()
    np.testing.assert_allclose(out["r"], np.concatenate([[0], np.cumsum(top * q[:3])]), rtol=1e-6)
    np.testing.assert_allclose(out["s"], np.concatenate([[0], np.cumsum(top * np.arange(1, 4))]), rtol=1e-6)


def test_a_filter_of_elements_batched_over_the_steps_kept_as_an_array_is_e011_at_its_body():
    with pytest.raises(CompileError) as info:
        einc.compile("let x: [f32; M];\nlet q[t in 0..4] = x[t] * 2.0;\nlet r[0] = 0.0;\n"
                     "let r[t in 1..4] = r[t - 1] + v[0] where v = [x[i] * q[t - 1] | i in 0..M, i >= 1];\n")
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.code == "E011" and "differ per point of the definition or step" in diagnostic.message
    assert (diagnostic.span.line, diagnostic.span.col) == (4, 47)


GRID_STEP = """
let u0: [f64; 20, 20];
let u[0] = u0;
let u[t in 1..4] = 0.5 * rhs where rhs = [[if c == 0 || d == 0 { 0.0 } else { u[t - 1, c, d] + u[t - 1, c - 1, d - 1] }
    | d in 0..20] | c in 0..20];
"""


def test_a_grid_of_nested_comprehensions_is_one_kernel_not_its_elements(tmp_path):
    """20 x 20 elements of nested comprehensions (more than NESTED_UNROLL_LIMIT together, though
    each level is under UNROLL_LIMIT) are an indexed kernel, not 400 scalar expressions: a 40 x
    40 grid's CG step unrolled that way built in minutes."""
    from einc.driver import front_end
    from einc.ir.nodes import Stack, walk
    path = tmp_path / "grid.ein"
    path.write_text(GRID_STEP)
    _, ir_program = front_end(str(path))
    group, = ir_program.recurrences
    # the outer comprehension is a kernel over c; each point's row may stay a literal of 20
    assert sum(len(v.elems) for v in walk(group.code()) if isinstance(v, Stack)) <= 20
    u0 = np.random.default_rng(5).standard_normal((20, 20))
    want = [u0]
    for _ in range(3):
        prev = want[-1]
        nxt = np.zeros((20, 20))
        nxt[1:, 1:] = prev[1:, 1:] + prev[:-1, :-1]
        want.append(0.5 * nxt)
    got = einc.load(einc.compile(str(path)).vmfb)(u0=u0)["u"]
    np.testing.assert_allclose(got, np.array(want), rtol=1e-13)
