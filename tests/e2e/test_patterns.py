"""`match` with Rust's patterns: literals, ranges, or-patterns, bindings (`n @ p`), guards
(`if` and `where`), tuples and arrays with a rest, on build-time and run-time values, and
exhaustiveness by cases. Each result is checked against the same match written in Python."""
import numpy as np
import pytest
from tests.tiers import VULKAN_FULL

CLASSIFY = """
fn classify(k: i32) -> i32 {
    match k { 0 => 100, 1 | 2 => 10, m @ 3..=9 => m, m where m > 50 => 2, m if m < 0 => -1, _ => 0 }
}
let n: i32;
let flag: bool;
let out = classify(n);
let signed = match (n, flag) { (0, _) => 0, (k, true) => k, (k, false) => -k };
let switch = match flag { true => 1.5, false => -1.5 };
"""


def classify(k: int) -> int:
    if k == 0:
        return 100
    if k in (1, 2):
        return 10
    if 3 <= k <= 9:
        return k
    if k > 50:
        return 2
    return -1 if k < 0 else 0


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_scalar_patterns_on_run_time_values(run, target):
    import einc
    program = einc.load(einc.compile(CLASSIFY, target=target).vmfb)
    try:
        for n in (0, 1, 2, 3, 9, 10, 50, 51, -4):
            for flag in (True, False):
                out = program(n=np.int32(n), flag=np.bool_(flag))
                assert out["out"] == classify(n)
                assert out["signed"] == (0 if n == 0 else n if flag else -n)
                assert out["switch"] == (1.5 if flag else -1.5)
    finally:
        program.close()


def test_a_range_pattern_open_below_excludes_its_end(run):
    # `..0` (Rust's half-open pattern, beside `..=0` and `0..`) was E001
    for n in (-5, -1, 0, 9, 10, 12):
        out = run("let n: i32;\nlet a = match n { ..0 => -1, 0..10 => 0, 10.. => 1 };\n", n=np.int32(n))
        assert out["a"] == (-1 if n < 0 else 0 if n < 10 else 1)


def test_array_patterns_on_rows_of_a_run_time_array(run):
    M = np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 1, 2]], np.int32)
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    out = run("""
        let x: [f32; 4];
        let M: [i32; 3, 4];
        let head = match x { [a, ..rest] => a * 10.0 + sum[i](rest[i]) };
        let ends = match x { [first, .., last] => first - last };
        let rows[i in 0..3] = match M[i] { [0, ..] => -1, [a, b, ..] => a + b };
        let picked[i in 0..4] = match i { 0 | 3 => x[i], _ => 0.0 };
    """, x=x, M=M)
    assert out["head"] == pytest.approx(x[0] * 10 + x[1:].sum())
    assert out["ends"] == pytest.approx(x[0] - x[-1])
    np.testing.assert_array_equal(out["rows"], [-1 if r[0] == 0 else r[0] + r[1] for r in M])
    np.testing.assert_array_equal(out["picked"], [x[0], 0, 0, x[3]])


def test_a_rest_alone_matches_rows_whose_length_is_known_only_at_run_time(run):
    # `[..r]` covers every length: it was E002 "non-exhaustive" and then E011 for a run-time length
    M = np.random.default_rng(6).standard_normal((5, 7)).astype(np.float32)
    out = run("""
        let M: [f32; R, C];
        let firsts[i in 0..R] = match M[i] { [..r] => r[0] * 2.0 };
        let totals[i in 0..R] = match M[i] { [..] => sum[c](M[i, c]) };
    """, M=M)
    np.testing.assert_array_equal(out["firsts"], M[:, 0] * 2)
    np.testing.assert_allclose(out["totals"], M.sum(1), rtol=1e-6)

def test_a_rest_bound_from_a_row_of_an_indexed_definition(run):
    # `..tail` of the row `M[r]` was E011 ("a sub-array used whole inside an indexed
    # definition") even when never used; it is now the row's elements read at each point
    M = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    x = np.random.default_rng(4).standard_normal((6, 3))
    out = run("""
        let M: [f32; 4, 5];
        let x: [f64; 6, 3];
        let heads[r in 0..4] = match M[r] { [a, b, ..rest] => a * b + sum[i](rest[i]) };
        let mids[r in 0..4, j in 0..3] = match M[r] { [_, ..mid, _] => mid[j] + 1.0 };
        let unused[r in 0..4] = match M[r] { [a, ..rest] => a };
        let s[0] = x[0, 0];
        let s[t in 1..6] = match x[t] { [_, ..tail] => 0.5 * s[t - 1] + sum[k](tail[k]) };
    """, M=M, x=x)
    np.testing.assert_allclose(out["heads"], M[:, 0] * M[:, 1] + M[:, 2:].sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["mids"], M[:, 1:4] + 1, rtol=1e-6)
    np.testing.assert_array_equal(out["unused"], M[:, 0])
    s = [x[0, 0]]
    for t in range(1, 6):
        s.append(0.5 * s[-1] + x[t, 1:].sum())
    np.testing.assert_allclose(out["s"], s, rtol=1e-12)


def test_scalar_patterns_on_a_row_of_an_indexed_definition_compare_point_by_point(run):
    # as on a whole array; on a row (`x[i] > 0.0`, or a function's row argument) it was E002
    # "this pattern matches a number" (programs fuzzer seed 66 program 40)
    x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    out = run("""
        let x: [f32; 5, 4];
        fn capped(a, c) { match c < a { true => 3.0, false => c } }
        fn row_total(row: [f32; 4]) -> f32 { let w = capped(row, 0.5); sum[k](w[k]) }
        let totals = [row_total(x[i]) | i in 0..5];
        let signs[i in 0..5, k in 0..4] = (match x[i] > 0.0 { true => 1, false => -1 })[k];
    """, x=x)
    np.testing.assert_allclose(out["totals"], np.where(0.5 < x, 3.0, 0.5).sum(1), rtol=1e-6)
    np.testing.assert_array_equal(out["signs"], np.where(x > 0, 1, -1))


def test_patterns_decided_at_build_time(run):
    out = run("""
        let v = [3, 4, 5];
        let first = match v { [] => 0, [a, ..] => a };
        let middle = match v { [_, m, _] => m, _ => -1 };
        let rest_sum = match v { [_, ..rest] => sum[i](rest[i]), [] => 0 };
        let seven = match 7 { 1 | 2 => 10, n @ 3..=9 => n * 2, _ => 0 };
        let pair = match (1, 2) { (1, b) => b, (a, _) => a };
        let word = match "cat" { "dog" => 1, "cat" => 2, _ => 3 };
    """)
    assert (out["first"], out["middle"], out["rest_sum"]) == (3, 4, 9)
    assert (out["seven"], out["pair"], out["word"]) == (14, 2, 2)


def test_or_pattern_bindings_take_the_alternative_that_matched(run):
    out = run("""
        let p: [i32; 2];
        let q = (p[0], p[1]);
        let v = match q { (0, k) | (k, 0) => k, _ => -1 };
    """, p=np.array([0, 7], np.int32))
    assert out["v"] == 7
    out = run("""
        let p: [i32; 2];
        let q = (p[0], p[1]);
        let v = match q { (0, k) | (k, 0) => k, _ => -1 };
    """, p=np.array([5, 0], np.int32))
    assert out["v"] == 5


@pytest.mark.parametrize("source, missing", [
    ("let n: i32;\nlet a = match n { 0 => 1, 1..=5 => 2 };\n", "i32::MIN..=-1"),
    ("let f: bool;\nlet a = match f { true => 1 };\n", "false"),
    ("let n: i32;\nlet p = (n, n > 0);\nlet a = match p { (0, true) => 1, (_, false) => 2 };\n",
     "(i32::MIN..=-1, true)"),
    ("let n: i32;\nlet a = match n { m if m > 0 => 1, 0 => 0, ..=-1 => 2 };\n", "1..=i32::MAX"),
    ("let x: f32;\nlet a = match x { 1.0 => 2.0 };\n", "_"),
    ("let n: i32;\nlet a = match n { ..0 => -1, 1.. => 1 };\n", "0"),
])
def test_a_match_that_misses_a_case_names_it(diagnose, source, missing):
    diag, text = diagnose(source)
    assert diag.code == "E002" and f"`{missing}` is not covered" in diag.message
    assert diag.span is not None and diag.span.line >= 1


@pytest.mark.parametrize("source", [
    "let f: bool;\nlet a = match f { true => 1, false => 0 };\n",
    "let n: u8;\nlet a = match n { 0..=100 => 1, 101.. => 2 };\n",
    "let n: i8;\nlet a = match n { ..=-1 => -1, 0 => 0, 1..=127 => 1 };\n",
    "let n: i32;\nlet a = match n { ..0 => -1, 0..10 => 0, 10.. => 1 };\n",
    "let n: i32;\nlet a = match (n, n > 2) { (_, true) => 1, (_, false) => 0 };\n",
])
def test_matches_that_cover_every_value_need_no_catch_all(tmp_path, source):
    from einc.driver import check_program
    path = tmp_path / "prog.ein"
    path.write_text(source)
    check_program(str(path))


def test_every_alternative_binds_the_same_names(diagnose):
    diag, _ = diagnose("let x = 3;\nlet a = match x { 1 | y => 2 };\n")
    assert diag.code == "E003" and "`y`" in diag.message


def test_a_pattern_of_the_wrong_shape_is_a_type_error(diagnose):
    diag, _ = diagnose("let a = match (1, 2) { (x, y, z) => x, _ => 0 };\n")
    assert diag.code == "E002" and "tuple pattern of 3" in diag.message


def test_a_row_read_gives_its_index_a_range_where_no_element_of_it_is_read(run):
    """`m[j]` is a row of m whichever pattern it meets: j spans m's first axis. A row that no
    arm reads an element of (`[..]`, `_`) gave j no range (E004; fuzz seed 9101 program 105,
    `let d3[i in 0..4, j] = max(j / 7, match x1[j] { [..] => 5 });`)."""
    m = np.random.default_rng(105).uniform(-1, 1, (5, 4)).astype(np.float32)
    out = run("""
        let m: [f32; 5, 4];
        let any_row[i in 0..3, j] = max(j / 2, match m[j] { [..] => 1 });
        let wild[j] = match m[j] { _ => 7 };
        let first[j] = match m[j] { [a, ..] => a, _ => 0.0 };
    """, m=m)
    np.testing.assert_array_equal(out["any_row"], np.broadcast_to(np.maximum(np.arange(5) // 2, 1), (3, 5)))
    np.testing.assert_array_equal(out["wild"], np.full(5, 7))
    np.testing.assert_array_equal(out["first"], m[:, 0])
