"""std::ml norm_ops, linalg_ops (products and norms), ml_ex, selection_ops, attention_ops."""
import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

SOURCE = """
use std::ml::*;
use std::ml::selection_ops::topk_1d_helper;
let X: [f32; 2, 3, 4, 5];
let Xd: [f64; 2, 3, 6];
let s3: [f32; 3];
let b3: [f32; 3];
let g36: [f64; 3, 6];
let M: [f32; 4, 5];
let N: [f32; 5, 3];
let v: [f32; 5];
let w: [f32; 5];
let Q: [f32; 2, 4, 6];
let K: [f32; 2, 5, 6];
let V: [f32; 2, 5, 3];
let Q2: [f32; 4, 6];
let Kt: [f32; 2, 6, 5];
let Wq: [f32; 6, 3];
let K2: [f32; 5, 6];
let V2: [f32; 5, 4];
let mask: [f32; 4, 5];
let Pr: [f32; 3, 5];
let Tg: [f32; 3, 5];
let bn = batch_normalization(X, s3, b3, [0.1, 0.2, -0.3], [1.0, 2.0, 0.5], 1e-5);
let inorm = instance_normalization(X, s3, b3, 1e-5);
let inorm_d = instance_normalization(Xd, [1.0f64, 2.0, 3.0], [0.0f64, 1.0, 0.0], 1e-5);
let ln_last = layer_normalization(X, v, w, 1e-5, -1);
let ln_mid = layer_normalization(Xd, g36, g36, 1e-5, 1);
let lrn_ = lrn(X, 3, 0.001, 0.75, 1.0);
let lpn1 = lp_normalization(X, -1, 1);
let lpn2 = lp_normalization(M, 1, 2);
let mvn = mean_variance_normalization(X, [0, 2, 3]);
let mm = matmul(M, N);
let mv = matmul(M, v);
let vm = matmul(v, N);
let vv = matmul(v, w);
let bmm = batch_matmul(Q, Kt);
let bmm2 = matmul(Q, Wq);
let n2 = vec_norm_2(v);
let n2b = vec_norm_2(M);
let fro = matrix_norm_frobenius(M);
let isc = image_scaler(X, 2.0, [1.0, 2.0, 3.0]);
let ey = eye(3);
let dg = diag_extract(M);
let dc = diag_construct(v);
let tr = trace(M);
let fn_ = frobenius_norm(Xd);
let ou = outer(v, w);
let kr = kron(M, Pr);
let tl = tril(M, 0);
let tu = triu(M, 1);
let rl = roll(M, 1);
let ri = repeat_interleave(v, 2);
let fl = flip(M);
let probs = softmax(Pr);
let ce = cross_entropy_loss(probs, Tg);
let mse = mse_loss(M, M * 0.5);
let mae = mae_loss(Xd, Xd * 0.5);
let hub = huber_loss(M, M * 0.0, 0.7);
let bce = binary_cross_entropy(sigmoid(Pr), Tg);
let sce = softmax_cross_entropy_loss(Pr, Tg);
let cs = cosine_similarity(v, w);
let cs2 = cosine_similarity(M, M * 2.0 + 1.0);
let amx = argmax(M);
let amn = argmin(v);
let tk = topk(M, 2, -1);
let tk1 = topk_1d_helper(v, 3);
let att = attention_dummy(Q, K, V, 0.4);
let mha = multi_head_attention_simple(Q2, K2, V2, 2, 0.5);
let mham = multi_head_attention(Q2, K2, V2, 2, 0.5, mask);
"""

SHAPES = dict(X=(2, 3, 4, 5), s3=(3,), b3=(3,), M=(4, 5), N=(5, 3), v=(5,), w=(5,), Q=(2, 4, 6),
              K=(2, 5, 6), V=(2, 5, 3), Q2=(4, 6), Kt=(2, 6, 5), Wq=(6, 3), K2=(5, 6), V2=(5, 4),
              mask=(4, 5), Pr=(3, 5))
INPUTS = {k: rand(*shape, seed=n) for n, (k, shape) in enumerate(SHAPES.items())}
INPUTS["Xd"] = rand(2, 3, 6, dtype=np.float64, seed=50)
INPUTS["g36"] = rand(3, 6, dtype=np.float64, seed=51)
INPUTS["Tg"] = np.eye(5, dtype=np.float32)[[1, 4, 0]]
F = {k: v.astype(np.float64) for k, v in INPUTS.items()}
EPS = 1e-5


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, **INPUTS)


def normalize(x, axes, eps=EPS):
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_batch_normalization(out):
    mean, var = np.array([0.1, 0.2, -0.3]), np.array([1.0, 2.0, 0.5])
    c = (slice(None), None, None)
    close(out["bn"], F["s3"][c] * (F["X"] - mean[c]) / np.sqrt(var[c] + EPS) + F["b3"][c], rtol=1e-5)


def test_instance_normalization_f32_rank4_and_f64_rank3(out):
    c = (slice(None), None, None)
    close(out["inorm"], F["s3"][c] * normalize(F["X"], (2, 3)) + F["b3"][c], atol=2e-5, rtol=1e-4)
    ref = np.array([1.0, 2, 3])[:, None] * normalize(F["Xd"], (2,)) + np.array([0.0, 1, 0])[:, None]
    close(out["inorm_d"], ref, np.float64, rtol=1e-10, atol=1e-10)


def test_layer_normalization(out):
    close(out["ln_last"], normalize(F["X"], (3,)) * F["v"] + F["w"], atol=2e-5, rtol=1e-4)
    close(out["ln_mid"], normalize(F["Xd"], (1, 2)) * F["g36"] + F["g36"], np.float64, rtol=1e-10, atol=1e-10)


def test_lrn(out):
    x = F["X"]
    sq = np.pad(x ** 2, [(0, 0), (1, 1), (0, 0), (0, 0)])
    window = sq[:, 0:3] + sq[:, 1:4] + sq[:, 2:5]
    close(out["lrn_"], x / (1.0 + 0.001 / 3 * window) ** 0.75)


def test_lp_normalization(out):
    close(out["lpn1"], F["X"] / np.abs(F["X"]).sum(-1, keepdims=True), rtol=1e-5)
    close(out["lpn2"], F["M"] / np.linalg.norm(F["M"], axis=-1, keepdims=True), rtol=1e-5)


def test_mean_variance_normalization(out):
    close(out["mvn"], (F["X"] - F["X"].mean((0, 2, 3), keepdims=True))
          / np.sqrt(F["X"].var((0, 2, 3), keepdims=True) + 1e-9), atol=2e-5, rtol=1e-4)


def test_matmul_ranks(out):
    close(out["mm"], F["M"] @ F["N"], atol=1e-5)
    close(out["mv"], F["M"] @ F["v"], atol=1e-5)
    close(out["vm"], F["v"] @ F["N"], atol=1e-5)
    close(out["vv"], F["v"] @ F["w"], atol=1e-5)
    close(out["bmm"], F["Q"] @ F["Kt"], atol=1e-5)
    close(out["bmm2"], F["Q"] @ F["Wq"], atol=1e-5)


def test_norms(out):
    close(out["n2"], np.linalg.norm(F["v"]))
    close(out["n2b"], np.linalg.norm(F["M"], axis=-1))
    close(out["fro"], np.linalg.norm(F["M"]))
    close(out["fn_"], np.linalg.norm(F["Xd"]), np.float64)


def test_matrix_helpers(out):
    close(out["isc"], 2.0 * F["X"] + np.array([1.0, 2, 3])[:, None, None])
    close(out["ey"], np.eye(3))
    close(out["dg"], np.diag(F["M"]))
    close(out["dc"], np.diag(F["v"]))
    close(out["tr"], np.trace(F["M"]))
    close(out["ou"], np.outer(F["v"], F["w"]))
    close(out["kr"], np.kron(F["M"], F["Pr"]))
    close(out["tl"], np.tril(F["M"], 0))
    close(out["tu"], np.triu(F["M"], 1))
    close(out["rl"], np.roll(F["M"], 1, axis=0))
    close(out["ri"], np.repeat(F["v"], 2))
    close(out["fl"], F["M"][::-1])


def test_losses(out):
    p, t = softmax(F["Pr"]), F["Tg"]
    close(out["ce"], -(t * np.log(p)).sum() / 3, rtol=1e-5)
    close(out["mse"], ((0.5 * F["M"]) ** 2).mean(), rtol=1e-5)
    close(out["mae"], np.abs(0.5 * F["Xd"]).mean(), np.float64)
    a = np.abs(F["M"])
    close(out["hub"], np.where(a <= 0.7, 0.5 * a * a, 0.7 * (a - 0.35)).mean(), rtol=1e-5)
    s = 1 / (1 + np.exp(-F["Pr"]))
    close(out["bce"], -(t * np.log(s) + (1 - t) * np.log(1 - s)).mean(), rtol=1e-5)
    close(out["sce"], -(t * np.log(p)).sum() / 3, rtol=1e-5)


def test_cosine_similarity(out):
    v, w, m = F["v"], F["w"], F["M"]
    close(out["cs"], v @ w / np.linalg.norm(v) / np.linalg.norm(w), rtol=1e-5)
    m2 = 2 * m + 1
    close(out["cs2"], (m * m2).sum(-1) / np.linalg.norm(m, axis=-1) / np.linalg.norm(m2, axis=-1), rtol=1e-5)


def test_selection(out):
    np.testing.assert_array_equal(out["amx"], F["M"].argmax(-1))
    assert out["amx"].dtype == np.int64 and out["amn"] == F["v"].argmin()
    values, idx = out["tk.0"], out["tk.1"]
    order = np.argsort(-F["M"], axis=-1, kind="stable")[:, :2]
    np.testing.assert_array_equal(idx, order)
    close(values, np.take_along_axis(F["M"], order, -1))
    close(out["tk1"], np.sort(F["v"])[::-1][:3])


def attention(q, k, v, scale, mask=0.0):
    return softmax(scale * q @ np.swapaxes(k, -1, -2) + mask) @ v


def test_attention(out):
    close(out["att"], attention(F["Q"], F["K"], F["V"], 0.4), atol=1e-5)
    heads = [attention(F["Q2"][:, 3 * h:3 * h + 3], F["K2"][:, 3 * h:3 * h + 3], F["V2"][:, 2 * h:2 * h + 2], 0.5)
             for h in range(2)]
    close(out["mha"], np.concatenate(heads, 1), atol=1e-5)
    heads = [attention(F["Q2"][:, 3 * h:3 * h + 3], F["K2"][:, 3 * h:3 * h + 3], F["V2"][:, 2 * h:2 * h + 2], 0.5,
                       F["mask"]) for h in range(2)]
    close(out["mham"], np.concatenate(heads, 1), atol=1e-5)
