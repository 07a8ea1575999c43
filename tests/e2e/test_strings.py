"""Strings are build-time values (LANGUAGE.md section 9): their operations run during the build."""
import io

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError

PROGRAM = """
fn greet(name: str, n: i32) -> str { "hello {name} x{n}" }
fn scaled(mode: str, x) { if mode == "double" { x * 2.0 } else { x } }
fn act(kind: str, x) { match kind { "relu" => if x > 0.0 { x } else { 0.0 }, "neg" => -x, _ => x } }
let s = "ab";
let joined = s + "cd";
let names = ["ab", "cde", "f"];
let lens = [len(t) | t in names];
let long = [t | t in names, t.length > 1];
let chars = [c | c in "abc"];
let shout = [t + "!" | t in names];
let k = 3;
let x = 0.25;
let path = "data_{k}.npy";
let double = scaled("double", 1.5);
let same = scaled("same", 1.5);
let acts = [act("relu", -2.0), act("neg", -2.0), act("other", -2.0)];
let n_names = len(names);
let last = names[2];
print(s.length, len(joined), joined[3], joined == "abcd", joined != "abcd", "ab" < "b");
print(names, "cde" in names, "x" in names, "bc" in joined, names[1][2]);
print(lens, long, chars, shout);
print(path, "x={x} y={x:.3f}", greet("bob", k));
print(typeof("s"), typeof(names));
"""

EXPECTED = """2 4 d true false true
['ab' 'cde' 'f'] true false true e
[2 3 1] ['ab' 'cde'] ['a' 'b' 'c'] ['ab!' 'cde!' 'f!']
data_3.npy x=0.25 y=0.250 hello bob x3
str rectangular
"""


@pytest.fixture(scope="module")
def result():
    buf = io.StringIO()
    out = einc.load(einc.compile(PROGRAM).vmfb).run({}, stdout=buf)
    return out, buf.getvalue()


def test_string_operations_run_at_build_time(result):
    out, printed = result
    assert printed == EXPECTED
    # only numbers leave the program; strings and lists of them are build-time values
    assert set(out) == {"lens", "k", "x", "double", "same", "n_names", "acts"}
    np.testing.assert_array_equal(out["acts"], [0.0, 2.0, -2.0])     # `match` on a string
    np.testing.assert_array_equal(out["lens"], [2, 3, 1])
    assert out["double"] == np.float32(3.0) and out["same"] == np.float32(1.5)
    assert out["n_names"] == 3


def test_an_interpolated_path_reaches_load_npy(tmp_path):
    np.save(tmp_path / "data_3.npy", np.arange(3, dtype=np.float32))
    src = tmp_path / "prog.ein"
    src.write_text('let k = 3;\nlet w = load_npy("data_{k}.npy");\nlet total = sum[i](w[i]);\n')
    out = einc.load(einc.compile(src).vmfb)()
    assert out["total"] == np.float32(3.0)


def test_a_reduction_reading_strings_at_its_index_runs_at_build_time():
    """`sum[k in 0..len(w)](.. w[k] ..)` reads a string at a reduction's index: no kernel can,
    so the reduction is taken point by point during the build (it was E011), also with a
    guard, several indices, `max`, and a run-time input in its terms."""
    x = np.arange(1, 5, dtype=np.float32)
    out = einc.load(einc.compile("""
        let words = ["tree", "sky", "bee", "apple"];
        let vowels = ["a", "e", "i", "o", "u"];
        let x: [f32; 4];
        let nv = [sum[k in 0..len(w)](if w[k] in vowels { 1 } else { 0 }) | w in words];
        let ee = sum[i in 0..4, k in 0..3](1) where words[i][k] == "e";
        let longest = max[i in 0..4](len(words[i]));
        let all_short = all[i in 0..4](len(words[i]) < 6);
        let weighted = sum[i in 0..4](x[i] * (len(words[i]) as f32));
    """).vmfb)(x=x)
    words = ["tree", "sky", "bee", "apple"]
    np.testing.assert_array_equal(out["nv"], [sum(c in "aeiou" for c in w) for w in words])
    assert out["ee"] == sum(w[k] == "e" for w in words for k in range(3))
    assert out["longest"] == 5 and out["all_short"]
    np.testing.assert_allclose(out["weighted"], np.dot(x, [len(w) for w in words]), rtol=1e-6)


def test_an_indexed_definition_reading_a_string_at_its_index_takes_each_item_per_point():
    """`len(words[i])` picks the item at each point during the build (it was E011)."""
    words = ["ab", "c", "defg"]
    source = f"let words = {words};\nlet n[i in 0..3] = len(words[i]);\n".replace("'", '"')
    with einc.load(einc.compile(source).vmfb) as program:
        got = program()["n"]
    np.testing.assert_array_equal(got, np.array([len(w) for w in words], dtype=np.int32))


@pytest.mark.parametrize("source, code, line, words", [
    ('let x: [f32; 3];\nlet s = "value {x}";\n', "E011", 2, "the run-time input `x`"),
    ('let s = "abc";\nlet c = s[3];\n', "E005", 2, "out of bounds"),
    ('let s = "abc" + 1;\n', "E002", 1, "cannot join"),
    ('fn f(name: str) { name }\nlet y = f(2);\n', "E002", 1, "expected str"),
])
def test_string_errors_are_diagnostics(source, code, line, words):
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    diag = info.value.diagnostics[0]
    assert diag.code == code and diag.span.line == line and words in diag.message


PICKED = """
let names = ["ab", "b", "cab", "d"];
let grid = [["x", "y"], ["y", "x"]];
let x: [f64; 4];
let k: i32;
let kept[j in 0..4] = x[j] where names[j] == "ab";
let others = sum[j](x[j] where names[j] != "b");
let chosen[j in 0..4] = if names[j] in ["b", "d"] { 1.0 } else { x[j] };
let lengths[j in 0..4] = len(names[j]);
let has_a[j in 0..4] = "a" in names[j];
let joined[j in 0..4] = names[j] + "!" == "b!";
let first_c[j in 0..4] = names[j][0] == "c";
let before_c[j in 0..4] = names[j] < "c";
let diagonal[i in 0..2, j in 0..2] = grid[i, j] == "x";
let at_k = names[k] == "cab";
"""


def test_a_build_time_string_list_read_at_an_index_is_compared_per_point(run):
    """`names[j] == "ab"` in a `where` guard, an `if`, a reduction's guard (LANGUAGE.md section 9
    lists comparisons, `in`, `+`, `len` and indexing of arrays of strings among the build-time
    operations): each candidate is compared during the build and the table of results read at
    j (it was E011, a position in a string list must be known at build time)."""
    names = ["ab", "b", "cab", "d"]
    x = np.array([1.5, -2.0, 4.0, 0.25])
    out = run(PICKED, x=x, k=np.int32(2))
    np.testing.assert_array_equal(out["kept"], np.where([n == "ab" for n in names], x, 0.0))
    np.testing.assert_allclose(out["others"], sum(v for n, v in zip(names, x) if n != "b"), rtol=1e-12)
    np.testing.assert_array_equal(out["chosen"], np.where([n in ("b", "d") for n in names], 1.0, x))
    np.testing.assert_array_equal(out["lengths"], [len(n) for n in names])
    np.testing.assert_array_equal(out["has_a"], ["a" in n for n in names])
    np.testing.assert_array_equal(out["joined"], [n + "!" == "b!" for n in names])
    np.testing.assert_array_equal(out["first_c"], [n[0] == "c" for n in names])
    np.testing.assert_array_equal(out["before_c"], [n < "c" for n in names])
    np.testing.assert_array_equal(out["diagonal"], [[True, False], [False, True]])
    assert bool(out["at_k"]) is True


def test_two_items_of_a_build_time_string_picked_at_different_positions_compare_per_point(run):
    """`word[i] == word[i + l]` in a span DP (the longest palindromic subsequence of a word, found
    by the hold-out program palindrome_subseq): both sides picked per point were E011; the pairs
    of candidates are compared during the build. Under the range that depends on the step
    (`i in 0..n - l`), and under an `if`, a picked read was checked over the whole hull (E005
    where it never runs); it is clamped there, as other reads are."""
    out = run("""
        let word = "banana";
        let n = len(word);
        let same[i in 0..n, j in 0..n] = word[i] == word[j];
        let P[0, i in 0..n] = 1;
        let P[l in 1..n, i in 0..n - l] = if word[i] == word[i + l] { P[l - 1, i] + 1 } else { P[l - 1, i + 1] };
        let back[i in 0..n] = if i > 0 { len(word[i - 1] + "x") } else { 0 };
    """)
    w = "banana"
    np.testing.assert_array_equal(out["same"], [[a == b for b in w] for a in w])
    P = np.zeros((6, 6), np.int32); P[0] = 1
    for l in range(1, 6):
        for i in range(6 - l):
            P[l, i] = P[l - 1, i] + 1 if w[i] == w[i + l] else P[l - 1, i + 1]
    np.testing.assert_array_equal(out["P"], P)
    np.testing.assert_array_equal(out["back"], [0, 2, 2, 2, 2, 2])


def test_a_match_with_string_patterns_on_an_item_picked_per_point_compares_each_item(run):
    """`match text[k] { " " => .., "a" | "b" => .., _ => .. }` at an index of a definition or a
    reduction (a text's letter codes, found by the hold-out program text_codes) was E002, a
    string pattern for a value of type str: each arm's literal is compared with every item
    during the build, as `==` is."""
    x = np.int32([10, 20, 30, 40, 50])
    out = run("""
        let text = "a b c";
        let x: [i32; 5];
        let spaces = sum[k in 0..len(text)](match text[k] { " " => 1, _ => 0 });
        let picked[k in 0..5] = match text[k] { " " => x[k], "a" | "b" => 2, _ => 0 };
    """, x=x)
    assert out["spaces"] == 2
    np.testing.assert_array_equal(out["picked"], [2 if c in "ab" else (v if c == " " else 0) for c, v in zip("a b c", x)])


@pytest.mark.parametrize("source, code, words", [
    # a string per point is not a number: it cannot be an array's element
    ('let names = ["a", "b"];\nlet y[j in 0..2] = names[j];\n', "E004", "must be a number"),
    # the index runs past the list: the table's read is out of bounds
    ('let names = ["a", "b"];\nlet y[j in 0..3] = names[j] == "a";\n', "E005", "out of bounds"),
    # rows of different lengths have no second position per point
    ('let g = [["a"], ["b", "c"]];\nlet y[i in 0..2, j in 0..1] = g[i, j] == "a";\n', "E011", "one length"),
])
def test_string_items_picked_per_point_outside_the_documented_forms_are_diagnostics(diagnose, source, code, words):
    diag, _ = diagnose(source)
    assert diag.code == code and words in diag.message
