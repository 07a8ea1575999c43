"""The std::ml functions the other modules check in one float type, in the other one (mostly
f64, with integer data where it applies), on a different rank where the function allows it."""
import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

pytestmark = pytest.mark.full     # the first dtype of each is checked in the fast tier too

SOURCE = """
use std::ml::*;
let X: [f64; 2, 3, 5];
let M: [f64; 3, 4];
let v: [f64; 4];
let P: [f64; 3, 4];
let Tg: [f64; 3, 4];
let Q: [f64; 3, 4];
let K: [f64; 5, 4];
let V: [f64; 5, 2];
let I: [i32; 3, 4];
let Xs: [f64; 1, 8, 2, 2];
let S: [f32; 3, 3];
let y3: [f32; 3];
let Xt: [f64; 1, 3, 3, 2];
let Wt: [f64; 3, 2, 2, 3];
let Wd: [f64; 8, 1, 2, 2];
let Wl: [f64; 5, 2];
let c3: [f64; 3];
let Up: [f64; 2, 1, 5];
let Xq: [f32; 2, 3, 4];
let Xk: [f32; 2, 5, 4];
let Xv: [f32; 2, 5, 4];
let Mk: [f32; 3, 5];
let bn = batch_normalization(X, [1.0f64, 2.0, 0.5], [0.0f64, 1.0, -1.0], [0.1f64, 0.2, 0.3], [1.0f64, 0.5, 2.0], 1e-5);
let lrn_ = lrn(X, 2, 0.01, 0.5, 2.0);
let lpn = lp_normalization(v, -1, 2);
let l2n = l2_normalize(X, 1e-12);
let cs = cumsum(X);
let att = attention_dummy(Q, K, V, 0.5);
let mha = multi_head_attention_simple(Q, K, V, 2, 0.5);
let mhb = multi_head_attention(Xq, Xk, Xv, 2, 0.5, Mk);
let isc = image_scaler(X, 0.5, [1.0f64, 2.0, 3.0]);
let dg = diag_extract(M);
let dc = diag_construct(v);
let tr = trace(M);
let ou = outer(v, v);
let kr = kron(M, M);
let tl = tril(I, -1);
let tu = triu(I, 2);
let rl = roll(X, -1);
let ri = repeat_interleave(I, 3);
let fl = flip(I);
let ce = cross_entropy_loss(softmax(P), Tg);
let mse = mse_loss(X, X * 0.25);
let hub = huber_loss(M, M * 0.0, 0.5);
let bce = binary_cross_entropy(sigmoid(P), Tg);
let sce = softmax_cross_entropy_loss(P, Tg);
let cos_ = cosine_similarity(X, X * X);
let tk = topk(X, 3, -1);
let rngf = range(0.5, 2.0, 0.4);
let rngd = range(-1.0f64, 1.0, 0.25);
let dqd = dequantize_linear(I, 0.125f64, 3);
let qmd = qmatmul(I, 0.5f64, [[1, 2], [3, 4], [5, 6], [7, 8]], 0.25f64);
let tk_mid = topk(X, 2, 1);
let lpn_mid = lp_normalization(X, 1, 1);
let mvn = mean_variance_normalization(X, [0, 2]);
let am = argmax(I);
let gat = gather(I, [2, 0], 0);
let gat_v = gather(v, [[0, 3], [1, 1]], 0);
let gel = gather_elements(I, [[3, 0], [1, 1], [2, 2]], 1);
let sce_ = scatter_elements(M, [[0, 3], [1, 1], [2, 0]], [[1.0f64, 2.0], [3.0f64, 4.0], [5.0f64, 6.0]], 1);
let oh = onehot(I, 10, [0i32, 1]);
let gnd = gather_nd(I, [[1, 2], [2, 3]]);
let gel_mid = gather_elements(X, [[[2, 0, 1, 1, 0]], [[1, 1, 2, 0, 2]]], 1);
let sce_mid = scatter_elements(X, [[[2, 0, 1, 1, 0]], [[1, 1, 2, 0, 2]]], Up, 1);
let d2s = depth_to_space(Xs, 2);
let s2d = space_to_depth(d2s, 2);
let gm = gemm(M, M, c3, 1.0, 0.5, 0, 1);
let lin = linear(X, Wl, [1.0f64, 2.0]);
let dwc = depthwise_conv(Xs, Wd, [0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [1, 1], [0, 0, 1, 1], [1, 1]);
let ct = conv_transpose(Xt, Wt, [0.5f64, -0.5], [1, 1], [0, 0, 0, 0], [0, 0]);
let L = cholesky(S);
let xl = solve_triangular_lower(L, y3);
let xc = solve_cholesky(S, y3);
"""

RNG = np.random.default_rng(5)
S3 = RNG.uniform(-1, 1, (3, 3))
SHAPES = dict(X=(2, 3, 5), M=(3, 4), v=(4,), P=(3, 4), Q=(3, 4), K=(5, 4), V=(5, 2), Xs=(1, 8, 2, 2),
              Xt=(1, 3, 3, 2), Wt=(3, 2, 2, 3), Wd=(8, 1, 2, 2), Wl=(5, 2), c3=(3,), Up=(2, 1, 5))
INPUTS = {k: rand(*shape, dtype=np.float64, seed=60 + n) for n, (k, shape) in enumerate(SHAPES.items())}
INPUTS.update({k: rand(*shape, seed=80 + n) for n, (k, shape) in enumerate(
    dict(Xq=(2, 3, 4), Xk=(2, 5, 4), Xv=(2, 5, 4), Mk=(3, 5)).items())})
INPUTS.update(Tg=np.eye(4)[[2, 0, 3]], I=RNG.integers(0, 10, (3, 4)).astype(np.int32),
              S=(S3 @ S3.T + 3 * np.eye(3)).astype(np.float32), y3=np.array([1.0, -1.0, 2.0], np.float32))
F = {k: v.astype(np.float64) for k, v in INPUTS.items()}
I = INPUTS["I"]
D = np.float64


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, **INPUTS)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_normalizations_f64(out):
    x, c = F["X"], (slice(None), None)
    ref = np.array([1, 2, 0.5])[c] * (x - np.array([0.1, 0.2, 0.3])[c]) / np.sqrt(np.array([1, 0.5, 2])[c] + 1e-5)
    close(out["bn"], ref + np.array([0, 1, -1])[c], D)
    sq = np.pad(x ** 2, [(0, 0), (0, 1), (0, 0)])              # size 2: channels c and c + 1
    close(out["lrn_"], x / (2 + 0.01 / 2 * (sq[:, :3] + sq[:, 1:])) ** 0.5, D)
    close(out["lpn"], F["v"] / np.linalg.norm(F["v"]), D)
    close(out["lpn_mid"], x / np.abs(x).sum(1, keepdims=True), D)
    mvn = (x - x.mean((0, 2), keepdims=True)) / np.sqrt(x.var((0, 2), keepdims=True) + 1e-9)
    close(out["mvn"], mvn, D, rtol=1e-10, atol=1e-10)
    close(out["l2n"], x / np.linalg.norm(x, axis=-1, keepdims=True), D)
    close(out["cs"], np.cumsum(x, -1), D)


def attention(q, k, v, scale):
    return softmax(scale * q @ k.T) @ v


def test_attention_f64(out):
    close(out["att"], attention(F["Q"], F["K"], F["V"], 0.5), D)
    heads = [attention(F["Q"][:, 2 * h:2 * h + 2], F["K"][:, 2 * h:2 * h + 2], F["V"][:, h:h + 1], 0.5)
             for h in range(2)]
    close(out["mha"], np.concatenate(heads, 1), D)


def test_multi_head_attention_batched_f32(out):
    q, k, v, mask = F["Xq"], F["Xk"], F["Xv"], F["Mk"]
    heads = [softmax(0.5 * q[..., 2 * h:2 * h + 2] @ np.swapaxes(k[..., 2 * h:2 * h + 2], -1, -2) + mask)
             @ v[..., 2 * h:2 * h + 2] for h in range(2)]
    close(out["mhb"], np.concatenate(heads, -1), atol=1e-5)


def test_matrix_helpers_f64_and_i32(out):
    m, v = F["M"], F["v"]
    close(out["isc"], 0.5 * F["X"] + np.array([1.0, 2, 3])[:, None], D)
    close(out["dg"], np.diag(m), D)
    close(out["dc"], np.diag(v), D)
    close(out["tr"], np.trace(m), D)
    close(out["ou"], np.outer(v, v), D)
    close(out["kr"], np.kron(m, m), D)
    close(out["rl"], np.roll(F["X"], -1, 0), D)
    for name, ref in dict(tl=np.tril(I, -1), tu=np.triu(I, 2), ri=np.repeat(I, 3, 0), fl=I[::-1]).items():
        assert out[name].dtype == np.int32, name
        np.testing.assert_array_equal(out[name], ref, err_msg=name)


def test_losses_f64(out):
    p, t, x, m = softmax(F["P"]), F["Tg"], F["X"], F["M"]
    close(out["ce"], -(t * np.log(p)).sum() / 3, D)
    close(out["mse"], ((0.75 * x) ** 2).mean(), D)
    a = np.abs(m)
    close(out["hub"], np.where(a <= 0.5, 0.5 * a * a, 0.5 * (a - 0.25)).mean(), D)
    s = 1 / (1 + np.exp(-F["P"]))
    close(out["bce"], -(t * np.log(s) + (1 - t) * np.log(1 - s)).mean(), D)
    close(out["sce"], -(t * np.log(p)).sum() / 3, D)
    x2 = x * x
    close(out["cos_"], (x * x2).sum(-1) / np.linalg.norm(x, axis=-1) / np.linalg.norm(x2, axis=-1), D)


def test_selection_and_indexing_f64_and_i32(out):
    order = np.argsort(-F["X"], axis=-1, kind="stable")[..., :3]
    np.testing.assert_array_equal(out["tk.1"], order)
    close(out["tk.0"], np.take_along_axis(F["X"], order, -1), D)
    order = np.argsort(-F["X"], axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(out["tk_mid.1"], order)
    close(out["tk_mid.0"], np.take_along_axis(F["X"], order, 1), D)
    np.testing.assert_array_equal(out["am"], I.argmax(-1))
    np.testing.assert_array_equal(out["gat"], I[[2, 0]])
    close(out["gat_v"], F["v"][[[0, 3], [1, 1]]], D)
    gi = np.array([[3, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(out["gel"], np.take_along_axis(I, gi, 1))
    ref = F["M"].copy()
    np.put_along_axis(ref, np.array([[0, 3], [1, 1], [2, 0]]), np.array([[1.0, 2], [3, 4], [5, 6]]), 1)
    ref[1, 1] = 4.0                                              # the later duplicate wins
    close(out["sce_"], ref, D)
    assert out["oh"].dtype == np.int32
    np.testing.assert_array_equal(out["oh"], np.eye(10, dtype=np.int32)[I])
    np.testing.assert_array_equal(out["gnd"], I[[1, 2], [2, 3]])
    mid = np.array([[[2, 0, 1, 1, 0]], [[1, 1, 2, 0, 2]]])
    close(out["gel_mid"], np.take_along_axis(F["X"], mid, 1), D)
    ref = F["X"].copy()
    np.put_along_axis(ref, mid, F["Up"], 1)
    close(out["sce_mid"], ref, D)


def test_range_and_dequantize_in_float_types(out):
    close(out["rngf"], np.arange(0.5, 2.0, 0.4))
    close(out["rngd"], np.arange(-1.0, 1.0, 0.25), D)
    close(out["dqd"], (I - 3) * 0.125, D)
    close(out["qmd"], I @ np.array([[1, 2], [3, 4], [5, 6], [7, 8]]) * 0.125, D)


def test_space_depth_f64(out):
    x = F["Xs"]
    n, c, h, w = x.shape
    close(out["d2s"], x.reshape(n, 2, 2, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, 2 * h, 2 * w), D)
    close(out["s2d"], x, D)


def conv2d_ref(x, w, b, pads, group):
    xp = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    m, cg, kh, kw = w.shape
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    y = np.zeros((x.shape[0], m, oh, ow))
    for o in range(m):
        g = o // (m // group)
        for i in range(oh):
            for j in range(ow):
                y[:, o, i, j] = (xp[:, g * cg:(g + 1) * cg, i:i + kh, j:j + kw] * w[o]).sum((1, 2, 3)) + b[o]
    return y


def test_layers_and_convs_f64(out):
    m = F["M"]
    close(out["gm"], m @ m.T + 0.5 * F["c3"], D)
    close(out["lin"], F["X"] @ F["Wl"] + np.array([1.0, 2]), D)
    close(out["dwc"], conv2d_ref(F["Xs"], F["Wd"], np.arange(8.0), [0, 0, 1, 1], 8), D)
    x, w = F["Xt"], F["Wt"]
    full = np.zeros((1, 2, x.shape[2] + 1, x.shape[3] + 2))
    for i in range(x.shape[2]):
        for j in range(x.shape[3]):
            full[:, :, i:i + 2, j:j + 3] += np.einsum("nc,cmhw->nmhw", x[:, :, i, j], w)
    close(out["ct"], full + np.array([0.5, -0.5])[None, :, None, None], D)


def test_cholesky_and_solves_f32(out):
    s, y = F["S"], F["y3"]
    lower = np.linalg.cholesky(s)
    close(out["L"], lower)
    close(out["xl"], np.linalg.solve(lower, y))
    close(out["xc"], np.linalg.solve(s, y), rtol=1e-5)
