"""The dense campaign's oracle (fuzz.dense.reference, fuzz.dense.compare) against NumPy written
independently here (sliding windows, matrix products), the Einlang it writes, and its
tolerance: rounding passes, a wrong padding or window does not."""
from __future__ import annotations

import random
import re

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fuzz.dense.compare import disagreement
from fuzz.dense.generate import dense_program, generate_case
from fuzz.dense.reference import evaluate
from fuzz.dense.spec import (Affine, Conjunct, DenseProgram, Definition, Input, Loop, Read, Reduction, Size,
                             Step, Sub)

rng = np.random.default_rng(3)


def _padded_strided_conv() -> DenseProgram:
    """y[n, o, h, w] = relu(b[o] + sum[c, kh, kw](x[n, c, 2h + kh - 1, w + 2kw - 2] * k[o, c, kh, kw])),
    reads outside x counting 0: padding 1 on rows, 2 on columns, stride 2 on rows, dilation 2 on columns."""
    rows = Size(7, "$H")                            # a named dim
    ih, iw = Sub(Affine((("h", 2), ("kh", 1)), -1), "ih"), Sub(Affine((("w", 1), ("kw", 2)), -2), "iw")
    guard = (Conjunct(ih, True, Size.of(0)), Conjunct(ih, False, rows, 1), Conjunct(iw, True, Size.of(0), 2),
             Conjunct(iw, False, Size.of(6), 2))
    image = Read("x", (Sub(Affine.of("n")), Sub(Affine.of("c")), ih, iw))
    weight = Read("k", tuple(Sub(Affine.of(v)) for v in ("o", "c", "kh", "kw")))
    loops = (Loop("n", Size.of(2), False), Loop("o", Size.of(4)), Loop("h", Size.of(4)), Loop("w", Size.of(6)))
    summed = (Loop("c", Size.of(3)), Loop("kh", Size.of(3)), Loop("kw", Size.of(3), False))
    steps = (Step("bias", Read("b", (Sub(Affine.of("o")),))), Step("relu"))
    y = Definition("y", loops, Reduction("sum", summed, (image, weight), guard), steps)
    inputs = (Input("x", (Size.of(2), Size.of(3), rows, Size.of(6))),
              Input("k", tuple(map(Size.of, (4, 3, 3, 3)))), Input("b", (Size.of(4),)))
    return DenseProgram("f32", inputs, (y,), ("y",))


def _numpy_conv(x, k, b):
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)))
    windows = sliding_window_view(padded, (3, 5), axis=(2, 3))[:, :, ::2, :, :, ::2]   # [n, c, h, w, kh, kw]
    return np.maximum(np.einsum("nchwpq,ocpq->nohw", windows[:, :, :4, :6], k) + b[None, :, None, None], 0)


def test_a_padded_strided_dilated_convolution_is_written_and_evaluated_as_numpy_computes_it():
    program = _padded_strided_conv()
    assert program.statements("p_")[-1] == (
        "let p_y[n, o in 0..4, h in 0..4, w in 0..6] = p_relu(sum[c in 0..3, kh in 0..3, kw]("
        "if ih >= 0 && ih <= p_H - 1 && iw > -1 && 6 > iw { p_x[n, c, ih, iw] * p_k[o, c, kh, kw] } "
        "else { 0.0 } where ih = 2 * h + kh - 1, iw = w + 2 * kw - 2) + p_b[o]);")
    inputs = {"x": rng.uniform(-1, 1, (2, 3, 7, 6)), "k": rng.uniform(-1, 1, (4, 3, 3, 3)),
              "b": rng.uniform(-1, 1, 4)}
    y = evaluate(program, inputs)["y"]
    np.testing.assert_allclose(y.value, _numpy_conv(inputs["x"], inputs["k"], inputs["b"]), rtol=1e-12)
    assert y.length == 3 * 3 * 3 + 2                # 27 products summed, one bias
    assert np.all(y.magnitude >= np.abs(y.value))


def test_a_pooling_with_a_nonzero_fill_and_a_flattened_matmul():
    x = Read("x", (Sub(Affine((("h", 3), ("dh", 1)), -1)),))
    pool = Definition("p", (Loop("h", Size.of(3)),),
                      Reduction("max", (Loop("dh", Size.of(3)),), (x,), (Conjunct(x.subs[0], True, Size.of(0)),), -5.0))
    flat = Read("w", (Sub(Affine((("a", 3), ("b", 1)))), Sub(Affine.of("j"))))
    dense = Definition("d", (Loop("j", Size.of(2)),),
                       Reduction("sum", (Loop("a", Size.of(2)), Loop("b", Size.of(3))),
                                 (Read("m", (Sub(Affine.of("a")), Sub(Affine.of("b")))), flat)))
    program = DenseProgram("f64", (Input("x", (Size.of(8),)), Input("m", (Size.of(2), Size.of(3))),
                                   Input("w", (Size.of(6), Size.of(2)))), (pool, dense), ("p", "d"))
    xs, m, w = np.arange(8.0) - 4, rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (6, 2))
    got = evaluate(program, {"x": xs, "m": m, "w": w})
    np.testing.assert_array_equal(got["p"].value, [-3.0, 0.0, 3.0])   # windows [fill, -4, -3], [-2, -1, 0], [1, 2, 3]
    np.testing.assert_allclose(got["d"].value, m.reshape(6) @ w, rtol=1e-12)


def test_the_tolerance_passes_rounding_and_fails_a_wrong_value():
    program = _padded_strided_conv()
    inputs = {"x": rng.uniform(-1, 1, (2, 3, 7, 6)).astype(np.float32),
              "k": rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32), "b": rng.uniform(-1, 1, 4).astype(np.float32)}
    want = evaluate(program, inputs)["y"]
    f32 = _numpy_conv(*(inputs[n] for n in ("x", "k", "b")))          # NumPy's own f32 order of sums
    assert disagreement(f32.astype(np.float32), want, "f32") is None
    wrong = f32.astype(np.float32).copy()
    wrong[1, 2, 0, 0] += 1e-3                                          # one border point off
    assert "at (1, 2, 0, 0)" in disagreement(wrong, want, "f32")
    assert "shape" in disagreement(f32[:, :, :3].astype(np.float32), want, "f32")
    assert "dtype" in disagreement(f32.astype(np.float64), want, "f32")


def test_generated_programs_are_deterministic_and_every_read_stays_inside_its_guard():
    """evaluate raises GeneratorError for a read that leaves its tensor where its guard holds."""
    first = [generate_case(5, k) for k in range(30)]
    again = [generate_case(5, k) for k in range(30)]
    assert [c.program for c in first] == [c.program for c in again]
    assert all(np.array_equal(a.inputs[n], b.inputs[n]) for a, b in zip(first, again) for n in a.inputs)
    texts = "\n".join(line for c in first for line in c.program.statements())
    for form in ("sum[", "max[", "where i", "if ", "relu("):
        assert form in texts
    assert dense_program(random.Random(1)).definitions


def test_a_layer_of_stacked_weights_is_written_and_evaluated_as_its_slice():
    """Matmuls against one layer of a stack (`w[1, k, j]`) are generated and evaluated as
    NumPy's product with w[1]."""
    layer = Read("w", (Sub(Affine((), 1)), Sub(Affine.of("k")), Sub(Affine.of("j"))))
    loops = (Loop("i", Size.of(4)), Loop("j", Size.of(3)))
    y = Definition("y", loops, Reduction("sum", (Loop("k", Size.of(5)),),
                                         (Read("a", (Sub(Affine.of("i")), Sub(Affine.of("k")))), layer)))
    inputs = (Input("a", (Size.of(4), Size.of(5))), Input("w", (Size.of(2), Size.of(5), Size.of(3))))
    program = DenseProgram("f64", inputs, (y,), ("y",))
    assert program.statements()[-1] == "let y[i in 0..4, j in 0..3] = sum[k in 0..5](a[i, k] * w[1, k, j]);"
    a, w = rng.uniform(-1, 1, (4, 5)), rng.uniform(-1, 1, (2, 5, 3))
    np.testing.assert_allclose(evaluate(program, {"a": a, "w": w})["y"].value, a @ w[1], rtol=1e-12)
    texts = "\n".join(line for k in range(200) for line in generate_case(5, k).program.statements())
    assert re.search(r"\w+\[\d, k, j\]", texts)


def test_a_read_running_backwards_is_written_and_evaluated_as_the_reversed_array():
    """`a[i, K - 1 - k]` (a reversed view for einc) is NumPy's product with a[:, ::-1], also over
    a named dim; generated matmuls read some operands so."""
    k = Size(5, "$K")
    backwards = Read("a", (Sub(Affine.of("i")), Sub(Affine.backwards("k", k))))
    loops = (Loop("i", Size.of(4)), Loop("j", Size.of(3)))
    y = Definition("y", loops, Reduction("sum", (Loop("k", k),),
                                         (backwards, Read("w", (Sub(Affine.of("k")), Sub(Affine.of("j")))))))
    program = DenseProgram("f64", (Input("a", (Size.of(4), k)), Input("w", (k, Size.of(3)))), (y,), ("y",))
    assert program.statements("p_")[-1] == (
        "let p_y[i in 0..4, j in 0..3] = sum[k in 0..p_K](p_a[i, p_K - 1 - k] * p_w[k, j]);")
    a, w = rng.uniform(-1, 1, (4, 5)), rng.uniform(-1, 1, (5, 3))
    np.testing.assert_allclose(evaluate(program, {"a": a, "w": w})["y"].value, a[:, ::-1] @ w, rtol=1e-12)
    texts = "\n".join(line for n in range(100) for line in generate_case(5, n).program.statements())
    assert re.search(r"\[[^]]*\w+ - 1 - \w+[],]", texts)


def test_softmax_attention_with_its_row_maximum_and_sum_inline():
    """`exp(s - max[u](s[n, i, u]))`, its context divided after by `sum[u](p[n, i, u])`, as the
    attention stage writes them inline, mean softmax attention."""
    loops = (Loop("n", Size.of(2), False), Loop("i", Size.of(3)), Loop("j", Size.of(5)))
    n, i, j = loops
    u, f = Loop("u", Size.of(5), False), Loop("f", Size.of(4))
    at = lambda tensor, *over: Read(tensor, tuple(Sub(Affine.of(loop.name)) for loop in over))
    peak = Reduction("max", (u,), (at("s", n, i, u),))
    p = Definition("p", loops, at("s", n, i, j), (Step("subtract", reduction=peak), Step("exp")))
    c = Definition("c", (n, i, f), Reduction("sum", (j,), (at("p", n, i, j), at("v", n, j, f))))
    total = Reduction("sum", (u,), (at("p", n, i, u),))
    o = Definition("o", (n, i, f), at("c", n, i, f), (Step("divide_by", reduction=total),))
    program = DenseProgram("f32", (Input("s", (Size.of(2), Size.of(3), Size.of(5))),
                                   Input("v", (Size.of(2), Size.of(5), Size.of(4)))), (p, c, o), ("o",))
    assert program.statements()[2:] == [
        "let p[n, i in 0..3, j in 0..5] = std::math::exp(s[n, i, j] - max[u](s[n, i, u]));",
        "let c[n, i in 0..3, f in 0..4] = sum[j in 0..5](p[n, i, j] * v[n, j, f]);",
        "let o[n, i in 0..3, f in 0..4] = c[n, i, f] / sum[u](p[n, i, u]);"]
    s, v = rng.uniform(-3, 3, (2, 3, 5)), rng.uniform(-1, 1, (2, 5, 4))
    weights = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(evaluate(program, {"s": s, "v": v})["o"].value,
                               weights / weights.sum(-1, keepdims=True) @ v, rtol=1e-12)
