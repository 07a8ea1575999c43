"""i8, i16, i32, i64 and u8 .. u64: the integer element types of .npy data (docs/DECISIONS.md).
Arithmetic stays in the type and wraps like NumPy; unsigned types compare, divide and convert
unsigned."""
import io

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError

Q = np.array([-3, 5, 120, -128], np.int8)
U = np.array([0, 5, 200, 255], np.uint8)
H = np.array([-3000, 5, 12000], np.int16)
W = np.array([1, 4000000000], np.uint32)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("widths")
    for name, array in dict(q=Q, u=U, h=H, w=W).items():
        np.save(folder / f"{name}.npy", array)
    src = folder / "prog.ein"
    src.write_text("""
        let q = load_npy("q.npy");
        let u = load_npy("u.npy");
        let h = load_npy("h.npy");
        let w = load_npy("w.npy");
        let xs: [u8; 4];
        let s: u8;
        let q_f = q as [f32];
        let q_sum = sum[i](q[i] as i32);
        let q_div = q / 3i8;
        let q_twice = q + q;
        let q_max = max[i](q[i]);
        let u_f = u as [f32];
        let u_big = u > 100u8;
        let u_div = u / 3u8;
        let u_rem = u % 7u8;
        let u_max = max[i](u[i]);
        let u_min = min[i](u[i]);
        let h_narrow = h as [i8];
        let w_f = w as [f64];
        let w_wide = w as [i64];
        let shifted = xs + s;
        print(q, typeof(q[0]), shifted);
    """)
    buf = io.StringIO()
    result = einc.load(einc.compile(src).vmfb).run({"xs": U, "s": np.uint8(200)}, stdout=buf)
    return result, buf.getvalue()


@pytest.mark.parametrize("name, expected", [
    ("q", Q), ("q_f", Q.astype(np.float32)), ("q_sum", np.int32(Q.astype(np.int32).sum())),
    ("q_div", np.array([-1, 1, 40, -42], np.int8)), ("q_twice", Q + Q), ("q_max", np.int8(120)),
    ("u", U), ("u_f", U.astype(np.float32)), ("u_big", U > 100), ("u_div", U // 3), ("u_rem", U % 7),
    ("u_max", np.uint8(255)), ("u_min", np.uint8(0)), ("h", H), ("h_narrow", H.astype(np.int8)),
    ("w", W), ("w_f", W.astype(np.float64)), ("w_wide", W.astype(np.int64)),
    ("shifted", U + np.uint8(200)),
])
def test_integer_widths_follow_numpy(out, name, expected):
    value = out[0][name]
    assert value.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(value, expected)


def test_narrow_values_print_as_numpy_does(out):
    assert out[1] == f"{Q} i8 {U + np.uint8(200)}\n"


def test_a_literal_out_of_its_type_range_is_E006():
    with pytest.raises(CompileError) as info:
        einc.compile("let c: u8 = 300;\n")
    assert info.value.diagnostics[0].code == "E006" and "does not fit in u8" in info.value.diagnostics[0].message


def test_a_negated_suffixed_literal_is_one_literal_that_may_be_its_types_minimum():
    """`-32768i16` and `-128i8` fit, as in Rust (E006 before: the 32768i16 the minus applied to);
    an unsigned one stays the negation of its literal, which wraps (`-1u8` is 255, as the program
    fuzzer draws it: seed 59 program 300 was E006); a prefix minus binds tighter than `**` as
    before (`-2i16 ** 2` is 4)."""
    out = einc.load(einc.compile("let a = -32768i16;\nlet b = [-128i8, 127i8];\nlet c = -2i16 ** 2;\n"
                                 "let d = -0.5f64;\nlet e = -1u8;\nlet f = -3u32;\n").vmfb)()
    assert out["a"].dtype == np.int16 and out["a"] == -32768 and out["c"] == 4 and out["d"] == -0.5
    np.testing.assert_array_equal(out["b"], np.array([-128, 127], np.int8))
    assert out["e"].dtype == np.uint8 and out["e"] == 255 and out["f"] == np.uint32(2**32 - 3)


def test_a_recurrence_no_base_clause_types_takes_a_narrow_type_its_clauses_name():
    """A member whose start is written as an `if` (no base clause) is typed by a search over
    the scalar types: i16 from a cast, u8 from the data its step reads, are in it too."""
    x = np.array([200, 100, 7, 255], np.uint8)
    result = einc.load(einc.compile("""
        let x: [u8; 4];
        let r[t in 0..4] = if t == 0 { x[0] } else { r[t - 1] + x[t] };
        let q[t in 0..4] = if t == 0 { t as i16 + 7i16 } else { q[t - 1] * 300 + 7 };
    """)).run({"x": x})
    r, q = [x[0]], [np.int16(7)]
    with np.errstate(over="ignore"):
        for t in range(1, 4):
            r.append(r[-1] + x[t])
            q.append(q[-1] * np.int16(300) + np.int16(7))
    np.testing.assert_array_equal(result["r"], np.array(r, np.uint8))
    np.testing.assert_array_equal(result["q"], np.array(q, np.int16))
    assert result["r"].dtype == np.uint8 and result["q"].dtype == np.int16
