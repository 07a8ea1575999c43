"""print, assert and build-time constants (LANGUAGE.md section 1)."""
import io
import re

import numpy as np
import pytest

import einc
from einc.runtime.errors import RunError
from tests.tiers import VULKAN_FULL


def test_prints_come_out_in_program_order_with_formats():
    x = np.array([1.0, 2.0, 4.0], np.float32)
    art = einc.compile("""
        let x: [f32; 3];
        let total = sum[i](x[i]);
        print("first", 1 + 2);
        print("total = {total:.2f}, again {total}", x);
    """)
    buf = io.StringIO()
    einc.load(art.vmfb).run({"x": x}, stdout=buf)
    assert buf.getvalue().splitlines() == ["first 3", "total = 7.00, again 7.0 [1. 2. 4.]"]


def test_failed_assert_stops_the_run_with_its_location():
    art = einc.compile("""
        let x: [f32; 3];
        let s = sum[i](x[i]);
        assert(s > 0.0, "weights must sum to a positive value");
        let y = x / s;
    """)
    program = einc.load(art.vmfb)
    out = program(x=np.ones(3, np.float32))
    np.testing.assert_allclose(out["y"], np.ones(3) / 3, rtol=1e-6)
    with pytest.raises(RunError, match=r"program.ein:4:9: error\[E006\]: assertion failed: weights must sum"):
        program(x=-np.ones(3, np.float32))


def test_load_npy_is_read_at_build_time(tmp_path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "w.npy", w)
    src = tmp_path / "model.ein"
    src.write_text("""
        let W = load_npy("w.npy") as [f32; 2, 3];
        let x: [f32; 3];
        let y[i] = sum[j](W[i, j] * x[j]);
    """)
    art = einc.compile(src)
    (tmp_path / "w.npy").unlink()          # the artifact carries the constant
    out = einc.load(art.vmfb)(x=np.ones(3, np.float32))
    np.testing.assert_array_equal(out["y"], w.sum(1))


def test_a_print_of_text_alone_comes_out_in_program_order():
    art = einc.compile("""
        let x: [f32; 3];
        print("weights ready");
        let total = sum[i](x[i]);
        print();
        print("total", total);
        print("done", "twice");
    """)
    buf = io.StringIO()
    einc.load(art.vmfb).run({"x": np.array([1.0, 2.0, 4.0], np.float32)}, stdout=buf)
    assert buf.getvalue() == "weights ready\n\ntotal 7.0\ndone twice\n"


def test_prints_keep_program_order_when_iree_schedules_them_later():
    # IREE runs a print once its values are ready: here the first one was scheduled after the
    # second, behind the two filters' read-backs, until the runner put prints in program order
    art = einc.compile("""
        let primes = [n | n in 2..40, all[d in 2..n](n % d != 0)];
        let grid = [r * 10 + c | r in 0..3, c in 0..4];
        let readings: [f32; N];
        let valid = [r | r in readings, r >= 0.0 && r <= 100.0];
        let rejected = [i | i in 0..N, readings[i] < 0.0 || readings[i] > 100.0];
        print(primes);
        print(grid);
    """)
    buf = io.StringIO()
    einc.load(art.vmfb).run({"readings": np.array([5.0, -1.0, 500.0], np.float32)}, stdout=buf)
    primes = np.array([2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37], np.int32)
    grid = np.array([0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23], np.int32)
    assert buf.getvalue() == f"{primes}\n{grid}\n"


def test_a_failed_assert_cuts_the_prints_after_it():
    art = einc.compile("""
        let x: [f32; 3];
        print("before");
        assert(sum[i](x[i]) > 0.0, "positive");
        print("after", x);
    """)
    buf = io.StringIO()
    with pytest.raises(RunError, match="positive"):
        einc.load(art.vmfb).run({"x": -np.ones(3, np.float32)}, stdout=buf)
    assert buf.getvalue() == "before\n"


SAVES = """
let x: [f32; 3];
let y = x * 2.0;
save_npy("y.npy", y);
let c: [u8; 2] = [200, 7];
save_npy("sub/c.npy", c);
print("saved");
assert(y[0] < 0.0, "y[0] is not negative");
save_npy("never.npy", y);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_save_npy_writes_its_file_when_the_program_runs(tmp_path, monkeypatch, target):
    """In program order, relative to the folder the program runs in; a failed assert stops the
    effects after it, as it stops the prints."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    x = np.array([1.0, -2.0, 3.5], np.float32)
    program = einc.load(einc.compile(SAVES, target=target).vmfb)
    try:
        with pytest.raises(RunError, match="not negative"):
            program.run({"x": x}, stdout=io.StringIO())
    finally:
        program.close()
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x * 2)
    saved = np.load(tmp_path / "sub" / "c.npy")
    assert saved.dtype == np.uint8 and list(saved) == [200, 7]
    assert not (tmp_path / "never.npy").exists()


def test_save_npy_to_a_folder_that_does_not_exist_is_a_run_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program = einc.load(einc.compile('let x: [f32; 2];\nsave_npy("missing/x.npy", x);\n').vmfb)
    with pytest.raises(RunError, match="save_npy could not write missing/x.npy"):
        program(x=np.zeros(2, np.float32))


def test_save_npy_needs_a_file_name_known_at_build_time(diagnose):
    diag, _ = diagnose("let x: [f32; 2];\nsave_npy(x, x);\n")
    assert diag.code == "E002" and "file name" in diag.message


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_an_assert_message_shows_values_computed_at_run_time_when_it_fails(target):
    """The fields are traced only when the assertion fails and are never printed as output;
    the prints before the assert still come out, the ones after it do not."""
    art = einc.compile("""
        let x: [i32; 3];
        let f[0] = x[0];
        let f[t in 1..6] = f[t - 1] + 1;
        let m = sum[i](x[i]) as f32 / 3.0;
        print("before", f[0]);
        assert(f[4] == 5, "f[4] = {f[4]}, mean {m:.2f} of {x}");
        print("after");
    """, target=target)
    program = einc.load(art.vmfb)
    buf = io.StringIO()
    out = program.run({"x": np.array([1, 2, 3], np.int32)}, stdout=buf)
    np.testing.assert_array_equal(out["f"], np.arange(1, 7))
    assert buf.getvalue().splitlines() == ["before 1", "after"]
    buf = io.StringIO()
    x = np.array([3, 4, 7], np.int32)
    with pytest.raises(RunError) as info:
        program.run({"x": x}, stdout=buf)
    want = f"f[4] = {x[0] + 4}, mean {x.sum() / 3:.2f} of [3 4 7]"
    assert str(info.value).endswith(f"error[E006]: assertion failed: {want}")
    assert buf.getvalue().splitlines() == ["before 3"]


def test_a_print_of_several_arrays_of_run_time_sizes_builds_and_shows_each():
    """IREE-271: a `flow.tensor.trace` of two values with run-time sizes does not parse back
    ("expected 1 operands"), so `print("lcs {lcs}, osa {osa}")` over a named dim (the hold-out
    program edit_widths) failed the build; each such value after the first is traced apart and
    the runner joins the parts, in whatever order they come, as did a failed assert's values."""
    program = einc.load(einc.compile("""
        let a: [i32; B];
        let x[p] = a[p] * 2;
        let y[p, q] = a[p] - a[q];
        print("x {x}, n {B}, y {y}, z", a[0] + 1, x);
        assert(x[0] < 4, "x {x} y {y}");
    """).vmfb)
    try:
        a = np.array([1, 2, 5], np.int32)
        buf = io.StringIO()
        program.run({"a": a}, stdout=buf)
        assert buf.getvalue() == f"x {a * 2}, n 3, y {a[:, None] - a[None, :]}, z {a[0] + 1} {a * 2}\n"
        with pytest.raises(RunError) as info:
            program.run({"a": a + 1}, stdout=io.StringIO())
        assert str(info.value).endswith(f"assertion failed: x {(a + 1) * 2} y {a[:, None] - a[None, :]}")
    finally:
        program.close()


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_every_call_prints_its_own_values_of_a_recurrence(target):
    """IREE-46: on vulkan-spirv a print of a recurrence (or of its elements) showed 0 on every
    call after the first, whether an assert then failed or not; values computed from it printed
    right."""
    program = einc.load(einc.compile("""
        let x: [i32; 3];
        let f[0] = x[0];
        let f[t in 1..6] = f[t - 1] + 1;
        print("f", f, f[0], f[5] * 2);
        assert(f[4] < 8, "too big");
    """, target=target).vmfb)
    try:
        for first in (1, 2, 9, 3):
            buf = io.StringIO()
            f = np.arange(first, first + 6)
            if f[4] < 8:
                np.testing.assert_array_equal(program.run({"x": np.array([first, 0, 0], np.int32)}, stdout=buf)["f"], f)
            else:
                with pytest.raises(RunError, match="too big"):
                    program.run({"x": np.array([first, 0, 0], np.int32)}, stdout=buf)
            assert buf.getvalue() == f"f {f} {f[0]} {f[5] * 2}\n"
    finally:
        program.close()


def test_an_assert_message_of_build_time_values_is_formatted_during_the_build():
    art = einc.compile('let n = 3;\nlet x: [f32; 2];\nassert(x[0] < 1.0, "n is {n}");\n')
    with pytest.raises(RunError, match=r"assertion failed: n is 3$"):
        einc.load(art.vmfb)(x=np.array([2.0, 0.0], np.float32))


def test_an_assert_message_may_show_a_whole_recurrence_or_the_failing_element_of_a_comprehension():
    art = einc.compile("""
        let x: [f32; 2];
        let h[0] = x[0];
        let h[t in 1..4] = h[t - 1] * 0.5;
        assert(h[3] > 1.0, "h = {h}");
    """)
    with pytest.raises(RunError, match=r"assertion failed: h = \[8\. 4\. 2\. 1\.\]$"):
        einc.load(art.vmfb)(x=np.array([8.0, 0.0], np.float32))
    # only the elements the filter keeps are checked; k is the element's position in x
    program = einc.load(einc.compile('let x: [f32; 4];\n'
                                     'let z = [{ assert(v > 0.0, "bad {v}"); v } | v in x, v > -5.0];\n').vmfb)
    x = np.array([1, -7, 2, 3], np.float32)
    np.testing.assert_array_equal(program(x=x)["z"], x[x > -5])
    with pytest.raises(RunError, match=r":2:12: error\[E006\]: assertion failed: bad -2\.0 at k = 2$"):
        program(x=np.array([1, -7, -2, 3], np.float32))



POINTWISE_ASSERTS = """fn twice(v) { assert(v != 0.0); v * 2.0 }
let A: [f32; ?, ?];
let x: [f32; ?];
let B[i, j] = { assert(A[i, j] < 5.0, "A = {A[i, j]:.1f}"); A[i, j] * 2.0 };
let s[i] = sum[j]({ assert(A[i, j] >= -1.0, "low"); A[i, j] });
let y[i] = twice(x[i]);
let h[0] = 1.0;
let h[t in 1..4] = { assert(x[t] > 0.0, "x = {x[t]}"); h[t - 1] * x[t] };
let g[i] = { assert(x[i] > 0.0, "g {x[i]}"); x[i] } where x[i] > -5.0;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_an_assert_in_an_indexed_body_holds_at_every_point_and_names_the_first_that_fails(target):
    """In a definition's body, a reduction's, a function called per point and a recurrence
    step (over the clause's own steps: x[0] < 0 is not checked): NumPy's values where it
    holds, else the first failing point in row-major order with the message's values there;
    only where the definition's guard holds (g's x[0] = -7 is not checked)."""
    program = einc.load(einc.compile(POINTWISE_ASSERTS, target=target).vmfb)
    a = np.array([[0, 1, 4, 2], [3, -1, 0, 4]], np.float32)
    x = np.array([-7, 2, 0.5, 4], np.float32)
    out = program(A=a, x=x)
    np.testing.assert_array_equal(out["B"], a * 2)
    np.testing.assert_array_equal(out["s"], a.sum(1))
    np.testing.assert_array_equal(out["y"], x * 2)
    np.testing.assert_array_equal(out["h"], np.cumprod(np.concatenate([[1], x[1:]])))
    big = a.copy()
    big[1, 2] = big[1, 3] = 6.0
    with pytest.raises(RunError, match=r":4:17: error\[E006\]: assertion failed: A = 6\.0 at i = 1, j = 2$"):
        program(A=big, x=x)
    low = a.copy()
    low[[0, 1, 1], [3, 0, 2]] = -2.0
    with pytest.raises(RunError, match=r":5:21: error\[E006\]: assertion failed: low at i = 0, j = 3$"):
        program(A=low, x=x)
    with pytest.raises(RunError, match=r":1:15: error\[E006\]: assertion failed: condition is false at i = 2$"):
        program(A=a, x=np.array([-7, 2, 0, 0], np.float32))
    with pytest.raises(RunError, match=r":8:22: error\[E006\]: assertion failed: x = -0\.5 at t = 2$"):
        program(A=a, x=np.array([-7, 2, -0.5, -4], np.float32))
    np.testing.assert_array_equal(out["g"], np.where(x > -5, x, 0))
    with pytest.raises(RunError, match=r":9:14: error\[E006\]: assertion failed: g -3\.0 at i = 0$"):
        program(A=a, x=np.array([-3, 2, 0.5, 4], np.float32))


def test_an_assert_on_a_recurrences_own_values_inside_its_step_is_refused_where_it_is(diagnose):
    diag, _ = diagnose("let h[0] = 1.0;\nlet h[t in 1..5] = { assert(h[t - 1] < 3.0); h[t - 1] * 2.0 };\n")
    assert diag.code == "E011" and (diag.span.line, diag.span.col) == (2, 22)


def test_a_failed_assert_of_the_standard_library_points_at_the_users_call():
    # std `solve` with sizes that disagree only at run time said `linalg_ops.ein:95:5: assertion
    # failed: ..`, a line of the library the user never wrote
    art = einc.compile("use std::ml::linalg_ops::solve;\n"
                       "fn fit(A, b) { solve(A, b) }\n"
                       "let A: [f32; N, N];\nlet b: [f32; M];\nlet x = fit(A, b);\n")
    A = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
    b = np.array([1, 2, 3], np.float32)
    with einc.load(art.vmfb) as program:
        np.testing.assert_allclose(program(A=A, b=b)["x"], np.linalg.solve(A, b), rtol=1e-5)
        with pytest.raises(RunError) as info:
            program(A=A, b=np.ones(4, np.float32))
    assert info.value.location.endswith("program.ein:2:16") and info.value.code == "E006"
    assert info.value.message.startswith("assertion failed: solve: A must be square, with a row per entry of b "
                                         "(in `solve(A, b)`; the library's assert is at ")
    assert re.search(r"stdlib/ml/linalg_ops\.ein:\d+:\d+\)$", info.value.message)


def test_an_assert_under_a_guard_reading_an_index_it_does_not_holds_where_the_guard_does():
    """The check runs over the guard's indices too: `where i + j < 3` around an assert on x[i]
    left j unbound outside the body (an internal KeyError while lowering, before)."""
    program = einc.load(einc.compile("let x: [f32; 3];\n"
                                     "let y[i in 0..3, j in 0..2] = { assert(x[i] < 5.0, \"big\"); x[i] } where i + j < 2;\n"))
    x = np.array([1, 2, 9], np.float32)
    i, j = np.indices((3, 2))
    np.testing.assert_array_equal(program(x=x)["y"], np.where(i + j < 2, x[i], 0))
    with pytest.raises(RunError, match=r"assertion failed: big at i = 1, j = 0$"):
        program(x=np.array([1, 7, 9], np.float32))


def test_an_assert_in_a_definition_over_a_finished_recurrence_holds_at_every_point():
    # was E011 "an assert on a value of a recurrence inside its step": the check looked through
    # the finished recurrence's value into its step's code
    source = ("let x0: f32;\nlet x[0] = x0;\nlet x[t in 1..5] = 0.5 * x[t - 1] + 1.0;\n"
              "let y[t in 0..5] = { assert(x[t] < 100.0, \"big: {x[t]}\"); 2.0 * x[t] };\n")
    program = einc.load(einc.compile(source).vmfb)
    x = [np.float32(5)]
    for _ in range(4):
        x.append(np.float32(0.5) * x[-1] + np.float32(1))
    np.testing.assert_array_equal(program(x0=np.float32(5))["y"], 2 * np.array(x, np.float32))
    with pytest.raises(RunError, match=r":4:22: error\[E006\]: assertion failed: big: 500\.0 at t = 0$"):
        program(x0=np.float32(500))
