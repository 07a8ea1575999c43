"""Hold-out programs, fourth round (the standard library as users call it), written as users of
the language would write them and checked against NumPy computed here: a decoder block (transposed
conv, depthwise conv, instance norm, hardswish, global max pool) with its gradients, dense
retrieval (l2_normalize, cosine_similarity, topk, onehot, gather, log_softmax), determinants and
solves through lu / solve / cholesky, a mish classifier trained by a recurrence (binary cross
entropy, huber, mae, clip), sub-pixel upscaling (space_to_depth, lrn, depth_to_space, lp_pool,
flip, roll, tile), a ROI detector head (max_roi_pool, linear, argmax_all / argmin_all, squeeze /
unsqueeze), robust row statistics (partition, topk_extract, cumsum, clamps, lp and mean-variance
normalizations), a matrix exponential series (kron, tril / triu, diag helpers), sparse updates
(gather / scatter elements and nd, expand), std::numerics with derivatives, an activation zoo, an
encoder block (multi_head_attention, layer_normalization, gemm, gelu) and shape plumbing (pad,
grouped conv, average_pool, reshape, split, slice, concat). Each case states its tolerance (`tol`,
rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32


def fd_grad(f, x, h=1e-6):
    """Central differences of the scalar function f (float64) at every entry of the array x."""
    x = np.asarray(x, np.float64); g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x); e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# 1 a decoder block: transposed conv, depthwise conv, instance norm, hardswish, global max pool
def conv_transpose_np(X, W, B, s, p, op):
    N, C, H, Wd = X.shape; _, M, KH, KW = W.shape
    OH = (H - 1) * s + KH - 2 * p + op; OW = (Wd - 1) * s + KW - 2 * p + op
    full = np.zeros((N, M, (H - 1) * s + KH + op, (Wd - 1) * s + KW + op))
    for i in range(H):
        for j in range(Wd):
            full[:, :, i * s:i * s + KH, j * s:j * s + KW] += np.einsum("nc,cmhw->nmhw", X[:, :, i, j], W)
    return full[:, :, p:p + OH, p:p + OW] + B[None, :, None, None]
def depthwise_np(X, W):
    Xp = np.pad(X, ((0, 0), (0, 0), (1, 1), (1, 1))); H, Wd = X.shape[2:]
    return sum(Xp[:, :, a:a + H, b:b + Wd] * W[None, :, 0, a, b, None, None] for a in range(3) for b in range(3))
def decoder_np(X, Wt, Wd, g):
    up = conv_transpose_np(X, Wt, np.array([0.1, -0.2, 0.05]), 2, 1, 1)
    dw = depthwise_np(up, Wd)
    m = dw.mean((2, 3), keepdims=True); v = dw.var((2, 3), keepdims=True)
    nrm = g[None, :, None, None] * (dw - m) / np.sqrt(v + 1e-5) + np.array([0.1, 0.0, -0.1])[None, :, None, None]
    act = nrm * np.clip(nrm / 6 + 0.5, 0, 1)
    return up, act, act.max((2, 3))
def decoder_inputs():
    return dict(X=R(401).standard_normal((1, 2, 4, 4)).astype(f32), Wt=(0.5 * R(402).standard_normal((2, 3, 3, 3))).astype(f32),
                Wd=(0.4 * R(403).standard_normal((3, 1, 3, 3))).astype(f32), g=np.array([1.0, 0.8, 1.2], f32))
@case("upsample_decoder", inputs=decoder_inputs, outputs=["up", "act", "pooled", "score", "dWt", "dg", "n_hot"], tol=(2e-3, 2e-4))
def _(X, Wt, Wd, g):
    X, Wt, Wd, g = (a.astype(np.float64) for a in (X, Wt, Wd, g)); w = np.array([1.0, 2.0, 3.0])
    up, act, pooled = decoder_np(X, Wt, Wd, g)
    score_of = lambda Wt_, g_: (decoder_np(X, Wt_, Wd, g_)[2][0] * w).sum()
    return dict(up=up, act=act, pooled=pooled[:, :, None, None], score=(pooled[0] * w).sum(),
                dWt=fd_grad(lambda a: score_of(a, g), Wt), dg=fd_grad(lambda a: score_of(Wt, a), g), n_hot=np.int32(3))


# 2 dense retrieval: cosine scores, top-k, recall, an InfoNCE loss and its temperature derivative
def retrieval_inputs():
    Dc = R(411).standard_normal((9, 5)).astype(f32); rel = np.array([2, 7, 0, 4], np.int64)
    Q = (Dc[rel] + 0.9 * R(412).standard_normal((4, 5))).astype(f32)
    return dict(Q=Q, Dc=Dc, rel=rel, tau=f32(0.3))
@case("ranked_retrieval", inputs=retrieval_inputs, outputs=["S", "cs", "vals", "idx", "hits", "recall", "loss", "dtau", "lse", "best_doc"],
      tol=(1e-4, 1e-5))
def _(Q, Dc, rel, tau):
    qn = Q / np.linalg.norm(Q, axis=1, keepdims=True); dn = Dc / np.linalg.norm(Dc, axis=1, keepdims=True)
    S = (qn @ dn.T).astype(np.float64); idx = np.argsort(-S, axis=1, kind="stable")[:, :3]
    hits = (idx == rel[:, None]).any(1)
    def loss_of(t):
        lg = S / t; lse = np.log(np.exp(lg - lg.max(1, keepdims=True)).sum(1)) + lg.max(1)
        return -(lg[np.arange(4), rel] - lse).mean(), lse
    loss, lse = loss_of(float(tau))
    return dict(S=S, cs=S, vals=np.take_along_axis(S, idx, 1), idx=idx.astype(np.int64), hits=hits, recall=hits.mean(),
                loss=loss, dtau=(loss_of(float(tau) + 1e-6)[0] - loss_of(float(tau) - 1e-6)[0]) / 2e-6, lse=lse, best_doc=Dc[idx[0, 0]])


# 3 determinants and solves through lu, solve, cholesky and solve_cholesky
def lu_inputs():
    n = 5; A = R(421).standard_normal((n, n)) + n * np.eye(n)
    return dict(A=A, b=R(422).standard_normal(n), M=R(423).standard_normal((8, n)), y=R(424).standard_normal(8))
@case("lu_logdet", inputs=lu_inputs, outputs=["L", "U", "det", "logdet", "x", "resid", "beta", "logdet_g", "dlogdet", "inv_cols", "tr"],
      tol=(1e-9, 1e-10))
def _(A, b, M, y):
    n = len(A); L = np.eye(n); U = A.copy()
    for c in range(n - 1):
        L[c + 1:, c] = U[c + 1:, c] / U[c, c]; U[c + 1:] -= np.outer(L[c + 1:, c], U[c])
    inv = np.linalg.inv(A); G = M.T @ M
    return dict(L=L, U=np.triu(U), det=np.linalg.det(A), logdet=np.linalg.slogdet(A)[1], x=np.linalg.solve(A, b),
                resid=np.linalg.norm(A @ np.linalg.solve(A, b) - b), beta=np.linalg.lstsq(M, y, rcond=None)[0],
                logdet_g=np.linalg.slogdet(G)[1], dlogdet=inv.T, inv_cols=inv.T, tr=float(n))


# 4 a classifier trained by a recurrence: mish, sigmoid, binary cross entropy, clipped steps
def mish_np(x): return x * np.tanh(np.log1p(np.exp(x)))
def bce_forward(W, v, X): return 1 / (1 + np.exp(-(mish_np(X @ W) @ v)))
def bce_loss(W, v, X, y):
    p = bce_forward(W, v, X); return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
def bce_inputs():
    X = R(431).standard_normal((16, 3)).astype(f32)
    return dict(X=X, y=(X[:, 0] - 0.5 * X[:, 2] > 0).astype(f32), W0=(0.4 * R(432).standard_normal((3, 4))).astype(f32))
@case("bce_mish_train", inputs=bce_inputs, outputs=["loss", "W", "v", "scale", "correct", "hub", "mae"], tol=(2e-3, 2e-4))
def _(X, y, W0):
    X, y = X.astype(np.float64), y.astype(np.float64); W = [W0.astype(np.float64)]; v = [np.array([0.5, -0.5, 0.5, -0.5])]
    losses, scales = [], []
    for e in range(12):
        losses.append(bce_loss(W[-1], v[-1], X, y))
        gW = fd_grad(lambda a: bce_loss(a, v[-1], X, y), W[-1]); gv = fd_grad(lambda a: bce_loss(W[-1], a, X, y), v[-1])
        sc = min(1.0, 1 / np.sqrt((gW ** 2).sum() + (gv ** 2).sum() + 1e-12)); scales.append(sc)
        W.append(W[-1] - 0.5 * sc * gW); v.append(v[-1] - 0.5 * sc * gv)
    p = bce_forward(W[-1], v[-1], X); a = np.abs(p - y)
    return dict(loss=np.array(losses), W=np.array(W), v=np.array(v), scale=np.array(scales),
                correct=np.int32(((p > 0.5) == (y > 0.5)).sum()), hub=np.where(a <= 0.25, 0.5 * a * a, 0.25 * (a - 0.125)).mean(), mae=a.mean())


# 5 sub-pixel upscaling over named sizes: space_to_depth, lrn, depth_to_space, lp_pool, flip, roll, tile
def s2d(x, b):
    N, C, H, W = x.shape
    return x.reshape(N, C, H // b, b, W // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(N, C * b * b, H // b, W // b)
def d2s(x, b):
    N, C, H, W = x.shape
    return x.reshape(N, b, b, C // (b * b), H, W).transpose(0, 3, 4, 1, 5, 2).reshape(N, C // (b * b), H * b, W * b)
def lrn_np(x, size, alpha, beta, bias):
    C = x.shape[1]; lo = (size - 1) // 2; sq = np.zeros_like(x)
    for c in range(C):
        for k in range(size):
            cc = c + k - lo
            if 0 <= cc < C: sq[:, c] += x[:, cc] ** 2
    return x / (bias + alpha / size * sq) ** beta
@case("pixel_shuffle", inputs=lambda: dict(img=R(441).standard_normal((1, 1, 6, 10)).astype(f32),
                                            mix=R(442).standard_normal((4, 4)).astype(f32)),
      outputs=["folded", "normed", "big", "same", "energy", "rows", "shifted", "border", "peak"], tol=(1e-4, 1e-5), vk=True)
def _(img, mix):
    img = img.astype(np.float64); folded = s2d(img, 2); mixed = np.einsum("oc,nchw->nohw", mix.astype(np.float64), folded)
    normed = lrn_np(mixed, 3, 0.2, 0.75, 1.0); big = d2s(normed, 2)
    energy = np.sqrt((big ** 2).reshape(1, 1, 3, 2, 5, 2).sum((3, 5)))
    rows = big[0, 0, ::-1]; shifted = np.roll(rows, 1, axis=0)
    return dict(folded=folded, normed=normed, big=big, same=np.bool_(True), energy=energy, rows=rows, shifted=shifted,
                border=np.tile(shifted[0], 2), peak=big.max())


# 6 a detector head: max ROI pooling, linear + softmax, argmax_all / argmin_all, squeeze / unsqueeze
def roi_np(X, rois, PH, PW):
    _, C, H, W = X.shape; Y = np.zeros((len(rois), C, PH, PW))
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        x1, y1, x2, y2 = (int(np.round(v)) for v in (x1, y1, x2, y2))
        bh = max(y2 - y1 + 1, 1) / PH; bw = max(x2 - x1 + 1, 1) / PW
        for ph in range(PH):
            for pw in range(PW):
                hs = min(max(int(np.floor(ph * bh)) + y1, 0), H); he = min(max(int(np.ceil((ph + 1) * bh)) + y1, 0), H)
                ws = min(max(int(np.floor(pw * bw)) + x1, 0), W); we = min(max(int(np.ceil((pw + 1) * bw)) + x1, 0), W)
                if hs < he and ws < we: Y[r, :, ph, pw] = X[int(b), :, hs:he, ws:we].max((1, 2))
    return Y
def roi_inputs():
    rois = np.array([[0, 0, 0, 3, 3], [0, 2, 1, 7, 6], [0, 4, 4, 7, 7], [0, 1, 3, 5, 4]], f32)
    return dict(feat=R(451).standard_normal((1, 2, 8, 8)).astype(f32), rois=rois,
                Wc=R(452).standard_normal((8, 3)).astype(f32), bc=np.array([0.1, 0.0, -0.1], f32))
@case("roi_detect", inputs=roi_inputs, outputs=["pooled", "probs", "best_cls", "conf", "weakest", "area", "col", "again"], tol=(1e-5, 1e-6))
def _(feat, rois, Wc, bc):
    pooled = roi_np(feat.astype(np.float64), rois, 2, 2); logits = pooled.reshape(4, 8) @ Wc + bc
    probs = np.exp(logits - logits.max(1, keepdims=True)); probs /= probs.sum(1, keepdims=True); conf = probs.max(1)
    area = ((rois[:, 3] - rois[:, 1]).astype(np.int32) + 1) * ((rois[:, 4] - rois[:, 2]).astype(np.int32) + 1)
    return dict(pooled=pooled, probs=probs, best_cls=probs.argmax(1).astype(np.int32), conf=conf,
                weakest=np.int32(conf.argmin()), area=area, col=conf[:, None], again=conf)


# 7 robust row summaries over named sizes: partition, topk_extract, cumsum, clamps, reductions, normalizations, match
@case("robust_stats", inputs=lambda: dict(X=np.round(R(461).standard_normal((5, 8)), 2).astype(f32)),
      outputs=["mean", "parts", "top", "run", "pos", "sat", "l2", "growth", "l1n", "l2n", "mvn", "below", "kind"], tol=(1e-5, 1e-5), vk=True)
def _(X):
    X = X.astype(np.float64); N = X.shape[1]; mean = X.mean(1)
    parts = np.array([np.concatenate([r[r < m], r[r >= m]]) for r, m in zip(X, mean)])
    below = (X < mean[:, None]).sum(1).astype(np.int32)
    kind = np.array([0 if k == 0 else 1 if 2 * k < N else 2 if 2 * k == N else 3 for k in below], np.int32)
    D = X - mean[:, None]
    return dict(mean=mean, parts=parts, top=-np.sort(-X, 1)[:, :3], run=np.cumsum(X, 1), pos=np.maximum(X, 0),
                sat=np.clip(X * 0.5 + 0.5, 0, 1), l2=np.linalg.norm(X, axis=1), growth=np.prod(1 + 0.1 * X, 1),
                l1n=X / np.abs(X).sum(1, keepdims=True), l2n=X / np.linalg.norm(X, axis=1, keepdims=True),
                mvn=D / np.sqrt((D ** 2).mean(1, keepdims=True) + 1e-9), below=below, kind=kind)


# 8 a matrix exponential by a Taylor recurrence over kron / tril / triu, and d trace(exp(tA)) / dt
def expm_np(M, n=18):
    term = np.eye(len(M)); out = term.copy()
    for k in range(1, n):
        term = term @ M / k; out += term
    return out
@case("matrix_exp_series", inputs=lambda: dict(a=np.array([[0.3, -0.2], [0.1, 0.4]]), b=np.array([[0.5, 0.2], [-0.3, 0.1]]), t=0.7),
      outputs=["K", "A", "E", "tr", "dtr", "AE", "D", "reps", "off"], tol=(1e-10, 1e-12))
def _(a, b, t):
    K = np.kron(a, b); A = np.tril(K, 1) - 0.5 * np.triu(K, 2); E = expm_np(A * t)
    return dict(K=K, A=A, E=E, tr=np.trace(E), dtr=np.trace(A @ expm_np(A * t, 17)), AE=A @ E, D=np.diag(np.diag(E)),
                reps=np.repeat(np.diag(E), 2), off=np.abs(E - np.diag(np.diag(E))).sum())


# 9 sparse updates over named sizes: gather_elements, scatter_elements, gather_nd, scatter_nd, onehot, expand
def sg_inputs():
    rg = R(471)
    return dict(M=rg.standard_normal((5, 6)).astype(f32), cols=rg.integers(-6, 6, (5, 2)).astype(np.int64),
                pairs=np.array([[0, 1], [3, 5], [4, 0], [1, 2]], np.int64), bias=rg.standard_normal(6).astype(f32))
@case("scatter_gather_ops", inputs=sg_inputs, outputs=["picked", "best", "marks", "at", "patched", "hot", "n_hot", "shifted", "changed"])
def _(M, cols, pairs, bias):
    best = M.argmax(1); marks = np.zeros_like(M); marks[np.arange(5), best] = M.max(1)
    at = M[pairs[:, 0], pairs[:, 1]]; patched = M.copy(); patched[pairs[:, 0], pairs[:, 1]] = -at
    hot = np.eye(6, dtype=f32)[best]
    return dict(picked=np.take_along_axis(M, cols % 6, 1), best=best.astype(np.int64), marks=marks, at=at, patched=patched,
                hot=hot, n_hot=hot.sum(0).astype(np.int32), shifted=M + bias, changed=np.int32((patched != M).sum()))


# 10 std::numerics in f64 with derivatives: rk4_decay, discounted_return, euler_linear, value_iteration
def rk4_np(u0, k, dt, n):
    u = [u0]
    for _ in range(n):
        x = u[-1]; k1 = -k * x; k2 = -k * (x + 0.5 * dt * k1); k3 = -k * (x + 0.5 * dt * k2); k4 = -k * (x + dt * k3)
        u.append(x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return np.array(u)
def decay_inputs():
    rg = R(481); P = rg.uniform(0.1, 1, (3, 3)); P /= P.sum(1, keepdims=True)
    return dict(k=0.8, beta=0.9, rewards=rg.standard_normal(12), u0=rg.standard_normal(3),
                A=np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.2], [0.0, -0.2, -0.1]]), r=rg.standard_normal(3), P=P)
@case("decay_numerics", inputs=decay_inputs, outputs=["traj", "end", "dend", "exact", "ret", "dret", "path", "growth", "V", "res"],
      tol=(1e-7, 1e-9))
def _(k, beta, rewards, u0, A, r, P):
    T = len(rewards); path = [u0]
    for _ in range(50): path.append(path[-1] + 0.01 * A @ path[-1])
    path = np.array(path); V = np.linalg.solve(np.eye(3) - beta * P, r); Vn = np.zeros(3)
    for _ in range(300): Vn = r + beta * P @ Vn
    return dict(traj=rk4_np(2.0, k, 0.05, 40), end=rk4_np(2.0, k, 0.05, 40)[-1],
                dend=(rk4_np(2.0, k + 1e-6, 0.05, 40)[-1] - rk4_np(2.0, k - 1e-6, 0.05, 40)[-1]) / 2e-6,
                exact=-4.0 * np.exp(-2 * k), ret=(beta ** np.arange(T) * rewards).sum(),
                dret=(np.arange(T) * beta ** (np.arange(T) - 1.0) * rewards).sum(), path=path,
                growth=np.linalg.norm(path, axis=1), V=V, res=np.abs(r + beta * P @ Vn - Vn).max())


# 11 an activation zoo with derivatives, a match on a tuple of conditions, where over a mask
def zoo_np(v):
    sp = lambda z: 0.5 * z * (1 + np.tanh(0.7978845608028654 * (z + 0.044715 * z ** 3)))
    selu = 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(v))
    celu = np.maximum(v, 0) + np.minimum(0, 0.7 * np.expm1(v / 0.7))
    soft = np.where(v > 0.3, v - 0.3, np.where(v < -0.3, v + 0.3, 0.0))
    return (selu + celu + soft + v * np.clip(v / 6 + 0.5, 0, 1) + np.clip(0.2 * v + 0.5, 0, 1) + sp(v) + v / (1 + np.abs(v))
            + v - np.tanh(v) + np.where(v > 0.4, v, 0.0))
def zoo_inputs():
    x = np.linspace(-4.2, 4.1, 23)
    return dict(x=x.astype(f32))
@case("activation_zoo", inputs=zoo_inputs, outputs=["acts", "total", "dtotal", "gated", "code", "counts"], tol=(1e-4, 1e-5))
def _(x):
    v = x.astype(np.float64); acts = zoo_np(v)
    code = np.where(v > 0, 2, 0) + (np.abs(v) > 1).astype(int)
    return dict(acts=acts, total=acts.sum(), dtotal=(zoo_np(v + 1e-6) - zoo_np(v - 1e-6)) / 2e-6, gated=np.where(v > 0, acts, -acts),
                code=code.astype(np.int32), counts=np.bincount(code, minlength=4).astype(np.int32))


# 12 a transformer encoder block from the library, with gradients w.r.t. the input and the feed-forward weights
def gelu_np(z):
    from math import erf
    return 0.5 * z * (1 + np.vectorize(erf)(z / np.sqrt(2)))
def encoder_np(x, W1, W2, g):
    L = x.shape[1]; mask = np.triu(np.full((L, L), -1e9), 1); out = np.zeros_like(x)
    for h in range(2):
        q = x[0, :, 4 * h:4 * h + 4]; s = 0.5 * q @ q.T + mask
        p = np.exp(s - s.max(1, keepdims=True)); p /= p.sum(1, keepdims=True); out[0, :, 4 * h:4 * h + 4] = p @ q
    z = x + out; m = z.mean(-1, keepdims=True); v = z.var(-1, keepdims=True); h1 = (z - m) / np.sqrt(v + 1e-5) * g
    b2 = np.array([0.1, 0, 0, 0, 0, 0, 0, -0.1])
    o = h1[0] + gelu_np(h1[0] @ W1) @ W2 + b2
    return h1, (o.mean(0) * (np.arange(8) - 3.5)).sum()
def encoder_inputs():
    rg = R(491)
    return dict(x=rg.standard_normal((1, 5, 8)).astype(f32), W1=(0.3 * rg.standard_normal((8, 16))).astype(f32),
                W2=(0.3 * rg.standard_normal((16, 8))).astype(f32), g=rg.uniform(0.5, 1.5, 8).astype(f32))
@case("encoder_block", inputs=encoder_inputs, outputs=["h1", "readout", "dx", "dW1", "gram"], tol=(2e-3, 2e-4))
def _(x, W1, W2, g):
    x, W1, W2, g = (a.astype(np.float64) for a in (x, W1, W2, g)); h1, r = encoder_np(x, W1, W2, g)
    return dict(h1=h1, readout=r, dx=fd_grad(lambda a: encoder_np(a, W1, W2, g)[1], x),
                dW1=fd_grad(lambda a: encoder_np(x, a, W2, g)[1], W1), gram=h1)


# 13 shape plumbing around a grouped conv: pad, conv, average_pool, reshape, transpose, split, slice, concat, tile, flatten
def avg_pool_np(y, k, s, p):
    N, C, H, W = y.shape; OH = (H + 2 * p - k) // s + 1; out = np.zeros((N, C, OH, OH))
    for i in range(OH):
        for j in range(OH):
            h0, w0 = max(i * s - p, 0), max(j * s - p, 0); h1, w1 = min(i * s - p + k, H), min(j * s - p + k, W)
            out[:, :, i, j] = y[:, :, h0:h1, w0:w1].mean((2, 3))
    return out
@case("shapes_pipeline", inputs=lambda: dict(img=R(495).standard_normal((1, 4, 6, 6)).astype(f32),
                                              W=(0.3 * R(496).standard_normal((4, 2, 3, 3))).astype(f32)),
      outputs=["padded", "y", "pooled", "rows2", "tg", "left", "odd", "joined", "wide", "probs", "top"], tol=(1e-5, 1e-6))
def _(img, W):
    img, W = img.astype(np.float64), W.astype(np.float64); P = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 4, 6, 6))
    for o in range(4):
        for c in range(2):
            for a in range(3):
                for b in range(3):
                    y[0, o] += W[o, c, a, b] * P[0, (o // 2) * 2 + c, a:a + 6, b:b + 6]
    y = np.maximum(y + np.array([0.0, 0.1, 0.2, 0.3])[None, :, None, None], 0)
    pooled = avg_pool_np(y, 3, 2, 1); tg = pooled.reshape(4, 9).T; joined = np.concatenate([tg[:4], tg[4:][1:5:2]])
    feat = joined.reshape(-1); e = np.exp(feat - feat.max()); probs = e / e.sum()
    return dict(padded=P, y=y, pooled=pooled, rows2=pooled.reshape(1, 36), tg=tg, left=tg[:4], odd=tg[4:][1:5:2], joined=joined, wide=np.tile(joined[0], 2),
                probs=probs, top=np.int32(probs.argmax()))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
