"""The gradient of an MLP's cross-entropy: every weight against central finite differences in f64.

It also guards the reason this program once took IREE minutes to compile: derivative code that
rewrote `z[n, c]` as `z[u0, c]` lost the proof that the read stays in bounds, so every such read
became a clamped `tensor.extract` gather inside a reduction, which IREE's CPU codegen takes tens of
seconds per kernel to vectorise. Reads the substitution keeps in bounds stay indexing maps.
"""
import numpy as np

import einc
from einc.driver import emit_program, lower

H = 1e-6          # central-difference step in f64; its error is ~1e-9 here

MLP = """
    use std::math::{tanh, exp, log};
    let X: [f64; N, I];
    let labels: [i32; N];
    let W1: [f64; I, J];
    let W2: [f64; J, C];
    let h[n, j] = tanh(sum[i](X[n, i] * W1[i, j]));
    let z[n, c] = sum[j](h[n, j] * W2[j, c]);
    let top[n] = max[c](z[n, c]);
    let lse[n] = top[n] + log(sum[c](exp(z[n, c] - top[n])));
    let loss = sum[n](lse[n] - sum[c](if c == labels[n] { z[n, c] } else { 0.0 })) / 8.0;
    let g1 = @loss / @W1;
    let g2 = @loss / @W2;
"""


def mlp_loss(X, labels, W1, W2):
    z = np.tanh(X @ W1) @ W2
    lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
    return (lse - z[np.arange(len(X)), labels]).sum() / 8


def finite_difference(f, W):
    fd = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        up, down = W.copy(), W.copy()
        up[idx] += H
        down[idx] -= H
        fd[idx] = (f(up) - f(down)) / (2 * H)
    return fd


def test_mlp_cross_entropy_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    X, W1, W2 = rng.standard_normal((8, 5)), rng.standard_normal((5, 6)) * 0.5, rng.standard_normal((6, 3))
    labels = rng.integers(0, 3, 8).astype(np.int32)
    out = einc.load(einc.compile(MLP).vmfb)(X=X, labels=labels, W1=W1, W2=W2)
    np.testing.assert_allclose(out["loss"], mlp_loss(X, labels, W1, W2), rtol=1e-12)
    np.testing.assert_allclose(out["g1"], finite_difference(lambda W: mlp_loss(X, labels, W, W2), W1),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(out["g2"], finite_difference(lambda W: mlp_loss(X, labels, W1, W), W2),
                               rtol=1e-6, atol=1e-9)


def test_mlp_gradient_reads_tensors_through_indexing_maps(tmp_path):
    path = tmp_path / "mlp.ein"
    path.write_text(MLP)
    assert "tensor.extract" not in str(lower(str(path), "llvm-cpu"))


def test_both_gradients_share_one_reverse_pass(tmp_path):
    # without einc.passes.shared_values each gradient rebuilt the adjoints of z, top and lse
    path = tmp_path / "mlp.ein"
    path.write_text(MLP)
    definitions = [line.split(" = ", 1)[1] for line in emit_program(str(path), "ir").splitlines()
                   if line.startswith("%")]
    # two separate passes made 23 definitions; one shared pass at most 15 (fewer as more of the
    # adjoint reads stored values)
    assert len(definitions) == len(set(definitions)) <= 15


def test_gradient_reads_the_hidden_layer_instead_of_recomputing_it(tmp_path):
    # tanh's partial is 1 - h²: the adjoint reads h (einc.autodiff.primal_reuse)
    path = tmp_path / "mlp.ein"
    path.write_text(MLP)
    lines = emit_program(str(path), "ir").splitlines()
    g1 = next(line.split(" = ")[1] for line in lines if line.startswith("output g1"))
    h = next(line.split(" = ")[1] for line in lines if line.startswith("output h"))
    definition = next(line for line in lines if line.startswith(g1 + ":"))
    assert "tanh" not in definition and f"{h}[n, u1]" in definition
