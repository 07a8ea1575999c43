"""Lowering of definitions and reductions, compiled for llvm-cpu and checked against NumPy."""
import numpy as np
import pytest

from einc.ir.nodes import Generic, Reduce
from einc.ir.types import Lin
from einc.mlir.dense import cpu_matmuls
from einc.mlir import lower_to_text
from einc.target import get
from lowering_harness import (compile_program, Compiled, const, op, program, read, ref, run,
                              scalar_input, tensor_input, var)

rng = np.random.default_rng(0)


def test_elementwise_add_of_two_dynamic_inputs():
    syms = {}
    a = tensor_input("a", 0, "f32", ["N"], syms)
    b = tensor_input("b", 1, "f32", ["N"], syms)
    i = var("i", a.shape[0])
    c = Generic((i,), op("add", read(a, ref(i)), read(b, ref(i))))
    module = Compiled(compile_program(program([a, b], [("c", c)], syms)), "llvm-cpu")
    for n in (1, 7):
        x, y = rng.random(n, np.float32), rng.random(n, np.float32)
        np.testing.assert_allclose(module.main(x, y)[0], x + y, rtol=1e-6)
    with pytest.raises(RuntimeError, match="shape mismatch: named dim N differs between a and b"):
        module.main(np.zeros(3, np.float32), np.zeros(4, np.float32))


def test_guarded_definition_reads_padding_safely():
    # y[i] = x[i - 1] where i >= 1: the read at i = 0 is out of bounds but discarded
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    i = var("i", x.shape[0])
    shifted = read(x, op("sub", ref(i), const(1, "i32")), in_bounds=False)
    y = Generic((i,), shifted, guard=op("ge", ref(i), const(1, "i32"), dtype="bool"))
    data = rng.random(6, np.float32)
    (got,) = run(program([x], [("y", y)], syms), data)
    np.testing.assert_array_equal(got, np.concatenate([[0], data[:-1]]).astype(np.float32))


def _matmul_program():
    syms = {}
    a = tensor_input("A", 0, "f32", ["M", "K"], syms)
    b = tensor_input("B", 1, "f32", ["K", "N"], syms)
    i, j, k = var("i", a.shape[0]), var("j", b.shape[1]), var("k", a.shape[1])
    body = Reduce("sum", (k,), op("mul", read(a, ref(i), ref(k)), read(b, ref(k), ref(j))))
    return program([a, b], [("C", Generic((i, j), body))], syms)


def test_matmul_is_a_named_op_with_dynamic_sizes(monkeypatch):
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: None)    # else packed: test_cpu_matmuls.py
    p = _matmul_program()
    assert "linalg.matmul" in lower_to_text(p, get("llvm-cpu"))
    module = Compiled(compile_program(p), "llvm-cpu")
    for m, k, n in ((3, 5, 2), (17, 33, 9)):
        a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
        np.testing.assert_allclose(module.main(a, b)[0], a @ b, rtol=1e-5)
    with pytest.raises(RuntimeError, match="named dim K differs between A and B"):
        module.main(np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))


def test_batch_matmul_and_matvec_are_named_ops():
    syms = {}
    a = tensor_input("A", 0, "f32", ["B", "M", "K"], syms)
    b = tensor_input("W", 1, "f32", ["B", "K", "N"], syms)
    v = tensor_input("v", 2, "f32", ["K"], syms)
    bb, i, j, k = var("b", a.shape[0]), var("i", a.shape[1]), var("j", b.shape[2]), var("k", a.shape[2])
    batched = Generic((bb, i, j), Reduce("sum", (k,), op("mul", read(a, ref(bb), ref(i), ref(k)),
                                                           read(b, ref(bb), ref(k), ref(j)))))
    m, k2, i2 = tensor_input("Mv", 3, "f32", [4, "K"], syms), var("k2", a.shape[2]), var("i2", Lin(4))
    matvec = Generic((i2,), Reduce("sum", (k2,), op("mul", read(v, ref(k2)), read(m, ref(i2), ref(k2)))))
    p = program([a, b, v, m], [("C", batched), ("y", matvec)], syms)
    text = lower_to_text(p, get("llvm-cpu"))
    assert "linalg.batch_matmul" in text and "linalg.matvec" in text
    xa, xb = rng.random((2, 3, 4), np.float32), rng.random((2, 4, 5), np.float32)
    xv, xm = rng.random(4, np.float32), rng.random((4, 4), np.float32)
    got_c, got_y = run(p, xa, xb, xv, xm)
    np.testing.assert_allclose(got_c, xa @ xb, rtol=1e-5)
    np.testing.assert_allclose(got_y, xm @ xv, rtol=1e-5)


def test_convolution_is_a_named_op_over_a_dynamic_image():
    # out[oh, ow] = sum[kh, kw](img[oh + kh, ow + kw] * w[kh, kw]) with a dynamic image
    syms = {}
    img = tensor_input("img", 0, "f32", ["H", "W"], syms)
    w = tensor_input("w", 1, "f32", [3, 3], syms)
    oh, ow = var("oh", img.shape[0] - 2), var("ow", img.shape[1] - 2)
    kh, kw = var("kh", 3), var("kw", 3)
    pixel = read(img, op("add", ref(oh), ref(kh)), op("add", ref(ow), ref(kw)))
    out = Generic((oh, ow), Reduce("sum", (kh, kw), op("mul", pixel, read(w, ref(kh), ref(kw)))))
    p = program([img, w], [("out", out)], syms)
    text = lower_to_text(p, get("llvm-cpu"))
    assert "linalg.conv_2d " in text and "tensor.extract" not in text
    x, k = rng.random((6, 7), np.float32), rng.random((3, 3), np.float32)
    expected = np.array([[np.sum(x[r:r + 3, c:c + 3] * k) for c in range(5)] for r in range(4)])
    np.testing.assert_allclose(run(p, x, k)[0], expected, rtol=1e-5)


def test_reduction_over_a_range_that_depends_on_the_outer_index():
    # y[i] = sum[k](x[k]) where k <= i: the hull of k is [0, N), narrowed by the guard
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    i, k = var("i", x.shape[0]), var("k", x.shape[0])
    cumulative = Reduce("sum", (k,), read(x, ref(k)), guard=op("le", ref(k), ref(i), dtype="bool"))
    data = rng.random(9, np.float32)
    (got,) = run(program([x], [("y", Generic((i,), cumulative))], syms), data)
    np.testing.assert_allclose(got, np.cumsum(data), rtol=1e-5)


@pytest.mark.parametrize("kind,dtype,reference", [
    ("max", "f32", np.max), ("min", "f32", np.min), ("prod", "f32", np.prod),
    ("max", "i32", np.max), ("min", "i32", np.min), ("sum", "i32", np.sum),
])
def test_whole_array_reductions(kind, dtype, reference):
    syms = {}
    x = tensor_input("x", 0, dtype, ["R", "C"], syms)
    r, c = var("r", x.shape[0]), var("c", x.shape[1])
    data = (rng.random((3, 4)) * 4 - 2).astype(np.float32) if dtype == "f32" else \
        rng.integers(-50, 50, (3, 4), dtype=np.int32)
    (got,) = run(program([x], [("m", Reduce(kind, (r, c), read(x, ref(r), ref(c))))], syms), data)
    assert got.shape == ()
    np.testing.assert_allclose(got, reference(data), rtol=1e-5)


@pytest.mark.parametrize("kind,reference", [("all", np.all), ("any", np.any)])
def test_boolean_reductions_per_row(kind, reference):
    syms = {}
    x = tensor_input("x", 0, "i32", ["R", "C"], syms)
    r, c = var("r", x.shape[0]), var("c", x.shape[1])
    positive = op("gt", read(x, ref(r), ref(c)), const(0, "i32"), dtype="bool")
    data = np.array([[1, 2, 3], [0, 5, 1], [-1, 0, 0]], np.int32)
    (got,) = run(program([x], [("ok", Generic((r,), Reduce(kind, (c,), positive)))], syms), data)
    np.testing.assert_array_equal(got, reference(data > 0, axis=1))


def test_data_dependent_gather():
    syms = {}
    table = tensor_input("table", 0, "f32", ["T"], syms)
    idx = tensor_input("idx", 1, "i32", ["N"], syms)
    i = var("i", idx.shape[0])
    gathered = Generic((i,), read(table, read(idx, ref(i)), in_bounds=False))
    t, ix = rng.random(10, np.float32), np.array([3, 0, 9, 3, 12, -2], np.int32)
    (got,) = run(program([table, idx], [("g", gathered)], syms), t, ix)
    np.testing.assert_array_equal(got, t[np.clip(ix, 0, 9)])   # out-of-range subscripts clamp


def test_nested_reductions_and_reduction_in_elementwise_body():
    # y[i] = x[i] / sum[j](x[j]) and z[i] = max[j](sum[k](A[i, j, k]))
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    a = tensor_input("A", 1, "f32", [2, 3, 4], syms)
    i, j = var("i", x.shape[0]), var("j", x.shape[0])
    total = Reduce("sum", (j,), read(x, ref(j)))
    y = Generic((i,), op("div", read(x, ref(i)), total))
    ai, aj, ak = var("ai", 2), var("aj", 3), var("ak", 4)
    z = Generic((ai,), Reduce("max", (aj,), Reduce("sum", (ak,), read(a, ref(ai), ref(aj), ref(ak)))))
    xs, xa = rng.random(5, np.float32), rng.random((2, 3, 4), np.float32)
    got_y, got_z = run(program([x, a], [("y", y), ("z", z)], syms), xs, xa)
    np.testing.assert_allclose(got_y, xs / xs.sum(), rtol=1e-5)
    np.testing.assert_allclose(got_z, xa.sum(2).max(1), rtol=1e-5)


def test_offset_ranges_and_symbolic_subscripts():
    # y[i] for i in 1..N: x[N - i] (reversal through a symbolic subscript), z[i] = i
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    n = x.shape[0]
    i = var("i", n - 1, lo=1)
    from einc.ir.nodes import Size
    y = Generic((i,), read(x, op("sub", Size(n), ref(i))))
    z = Generic((i,), ref(i))
    data = rng.random(6, np.float32)
    got_y, got_z = run(program([x], [("y", y), ("z", z)], syms), data)
    np.testing.assert_array_equal(got_y, data[::-1][:-1])
    np.testing.assert_array_equal(got_z, np.arange(1, 6))


def test_array_literal_of_per_point_scalars_read_by_subscript():
    from einc.ir.nodes import Stack
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    i = var("i", x.shape[0])
    signs = Stack((op("gt", read(x, ref(i)), const(0.0), dtype="bool"),
                   op("lt", read(x, ref(i)), const(0.0), dtype="bool")))
    pair = Stack((read(x, ref(i)), op("neg", read(x, ref(i)))))
    y = Generic((i,), read(signs, const(1, "i32"), in_bounds=False))
    z = Generic((i,), read(pair, const(1, "i32"), in_bounds=False))
    data = np.array([1, -2, 0], np.float32)
    got_y, got_z = run(program([x], [("y", y), ("z", z)], syms), data)
    np.testing.assert_array_equal(got_y, data < 0)
    np.testing.assert_array_equal(got_z, -data)
