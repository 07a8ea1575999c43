"""Hold-out programs, third round (machine learning): linear, softmax and mini-batch regression
trained by gradient descent, momentum and Adam as recurrences over epochs, small networks and
recurrent cells with gradients through time, attention with rotary embeddings, hand-derived
backward passes of normalizations, strided convolutions, batch norm at inference, embedding bags,
label smoothing and half-precision inference, each checked against NumPy computed here (gradients
by hand-derived formulas or central differences in float64). Each case states its tolerance (`tol`,
rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


def num_grad(f, x, h=1e-6):
    """Central differences of the scalar function f at every entry of the float64 array x."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x); e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# 1 linear regression, SGD with momentum
def linreg_inputs():
    X = R(301).standard_normal((32, 3))
    return dict(X=X, y=X @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.1 * R(302).standard_normal(32))
@case("linreg_momentum", inputs=linreg_inputs, outputs=["loss", "fell", "final_w", "b"], tol=(1e-9, 1e-11))
def _(X, y):
    w = np.zeros(3); b = 0.0; vw = np.zeros(3); vb = 0.0; ws = [w]; bs = [b]
    mse = lambda w, b: np.mean((X @ w + b - y) ** 2)
    for _ in range(59):
        r = X @ w + b - y; gw = 2 * X.T @ r / 32; gb = 2 * r.mean()
        vw = 0.9 * vw - 0.05 * gw; vb = 0.9 * vb - 0.05 * gb; w = w + vw; b = b + vb; ws.append(w); bs.append(b)
    loss = np.array([mse(w, b) for w, b in zip(ws, bs)])
    return dict(loss=loss, fell=np.int32((loss[1:] > loss[:-1]).sum()), final_w=w, b=np.array(bs),
                __stdout__=[f"final loss {loss[-1]:.6f}"])


# 2 softmax regression with Adam
def softmax_inputs():
    rg = R(303); lab = rg.integers(0, 3, 20)
    X = rg.standard_normal((20, 4)) + np.eye(3, 4)[lab] * 1.5
    return dict(X=X.astype(np.float32), labels=lab.astype(np.int32))
@case("softmax_adam", sized=True, inputs=softmax_inputs, outputs=["losses", "W", "pred", "correct"], tol=(2e-4, 2e-5))
def _(X, labels):
    X = X.astype(np.float64); N = len(X); W = np.zeros((4, 3)); m1 = np.zeros_like(W); m2 = np.zeros_like(W)
    Y = np.eye(3)[labels]; Ws = [W]
    def lossgrad(W):
        z = X @ W; z = z - z.max(1, keepdims=True); p = np.exp(z); p /= p.sum(1, keepdims=True)
        return -np.mean(np.log((p * Y).sum(1))), X.T @ (p - Y) / N
    for t in range(1, 41):
        g = lossgrad(W)[1]; m1 = 0.9 * m1 + 0.1 * g; m2 = 0.999 * m2 + 0.001 * g * g
        W = W - 0.1 * (m1 / (1 - 0.9 ** t)) / (np.sqrt(m2 / (1 - 0.999 ** t)) + 1e-8); Ws.append(W)
    pred = (X @ W).argmax(1).astype(np.int32)
    return dict(losses=np.array([lossgrad(W)[0] for W in Ws]), W=np.array(Ws), pred=pred, correct=np.int32((pred == labels).sum()))


# 3 mini-batch SGD with a step schedule and clipping
def mb_inputs():
    X = R(304).standard_normal((24, 2))
    return dict(X=X.astype(np.float32), y=(X @ [0.8, -1.2] + 0.4 + 0.05 * R(305).standard_normal(24)).astype(np.float32))
@case("minibatch_schedule", inputs=mb_inputs, outputs=["w", "full"], tol=(1e-4, 1e-5), vk=True)
def _(X, y):
    X = X.astype(np.float64); y = y.astype(np.float64); w = np.zeros(3); ws = [w]
    def bl(w, k):
        Xb, yb = X[6 * k:6 * k + 6], y[6 * k:6 * k + 6]; r = Xb @ w[:2] + w[2] - yb
        return np.mean(r ** 2), np.concatenate([2 * Xb.T @ r / 6, [2 * r.mean()]])
    for e in range(1, 30):
        lr = 0.2 if e - 1 < 10 else 0.1 if e - 1 < 20 else 0.02
        w = np.clip(w - lr * bl(w, (e - 1) % 4)[1], -2, 2); ws.append(w)
    return dict(w=np.array(ws), full=np.array([np.mean([bl(w, k)[0] for k in range(4)]) for w in ws]))


# 4 two-layer network, four parameter recurrences
def mlp2_inputs():
    rg = R(306)
    return dict(X=rg.standard_normal((8, 3)).astype(np.float32), Y=rg.standard_normal((8, 2)).astype(np.float32),
                W1i=(0.5 * rg.standard_normal((3, 5))).astype(np.float32), W2i=(0.5 * rg.standard_normal((5, 2))).astype(np.float32))
@case("mlp2_train", inputs=mlp2_inputs, outputs=["curve", "out", "W1"], tol=(1e-4, 1e-5))
def _(X, Y, W1i, W2i):
    X, Y = X.astype(np.float64), Y.astype(np.float64)
    W1, W2, b1, b2 = W1i.astype(np.float64), W2i.astype(np.float64), np.zeros(5), np.zeros(2)
    fwd = lambda W1, b1, W2, b2: np.tanh(X @ W1 + b1) @ W2 + b2
    loss = lambda *p: np.mean((fwd(*p) - Y) ** 2)
    curve = []; W1s = [W1]
    for s in range(6):
        curve.append(loss(W1, b1, W2, b2))
        if s == 5: break
        h = np.tanh(X @ W1 + b1); do = 2 * (h @ W2 + b2 - Y) / Y.size; dh = do @ W2.T * (1 - h ** 2)
        W1, b1, W2, b2 = W1 - 0.3 * X.T @ dh, b1 - 0.3 * dh.sum(0), W2 - 0.3 * h.T @ do, b2 - 0.3 * do.sum(0); W1s.append(W1)
    return dict(curve=np.array(curve), out=fwd(W1, b1, W2, b2), W1=np.array(W1s))


# 5 GRU, gradient through time
def gru_inputs():
    rg = R(307); m = lambda *s: 0.6 * rg.standard_normal(s)
    return dict(xs=m(6, 3), Wz=m(4, 3), Uz=m(4, 4), Wr=m(4, 3), Ur=m(4, 4), Wh=m(4, 3), Uh=m(4, 4), target=m(4))
def gru_loss(xs, Wz, Uz, Wr, Ur, Wh, Uh, target):
    sg = lambda a: 1 / (1 + np.exp(-a)); h = np.zeros(4)
    for x in xs:
        z = sg(Wz @ x + Uz @ h); r = sg(Wr @ x + Ur @ h); hc = np.tanh(Wh @ x + Uh @ (r * h)); h = (1 - z) * h + z * hc
    return np.sum((h - target) ** 2)
@case("gru_bptt", inputs=gru_inputs, outputs=["loss", "dUh", "dWz", "dxs"], tol=(1e-7, 1e-9))
def _(**a):
    g = lambda k: num_grad(lambda v: gru_loss(**{**a, k: v}), a[k])
    return dict(loss=gru_loss(**a), dUh=g("Uh"), dWz=g("Wz"), dxs=g("xs"))


# 6 LSTM with stacked gates, gradient through time
def lstm_inputs():
    rg = R(308)
    return dict(xs=rg.standard_normal((5, 2)).astype(np.float32), W=(0.5 * rg.standard_normal((12, 5))).astype(np.float32),
                bias=(0.1 * rg.standard_normal(12)).astype(np.float32), v=rg.standard_normal(3).astype(np.float32))
def lstm_loss(xs, W, bias, v):
    sg = lambda a: 1 / (1 + np.exp(-a)); h = np.zeros(3); c = np.zeros(3); tot = 0.0
    for x in xs:
        p = W @ np.concatenate([x, h]) + bias
        c = sg(p[3:6]) * c + sg(p[0:3]) * np.tanh(p[6:9]); h = sg(p[9:12]) * np.tanh(c); tot += (v @ h) ** 2
    return tot / len(xs)
@case("lstm_bptt", inputs=lstm_inputs, outputs=["loss", "dW", "dxs"], tol=(2e-4, 2e-6), vk=True)
def _(xs, W, bias, v):
    a = dict(xs=xs.astype(np.float64), W=W.astype(np.float64), bias=bias.astype(np.float64), v=v.astype(np.float64))
    g = lambda k: num_grad(lambda t: lstm_loss(**{**a, k: t}), a[k])
    return dict(loss=lstm_loss(**a), dW=g("W"), dxs=g("xs"))


# 7 rotary embeddings and a causal mask
def rope_inputs():
    rg = R(309)
    return dict(X=rg.standard_normal((5, 4)).astype(np.float32), Wq=(0.5 * rg.standard_normal((4, 6))).astype(np.float32),
                Wk=(0.5 * rg.standard_normal((4, 6))).astype(np.float32), Wv=rg.standard_normal((4, 6)).astype(np.float32))
def rope_np(X, Wq, Wk, Wv):
    T, D = X.shape[0], Wq.shape[1]; th = np.arange(T)[:, None] * 10000.0 ** (-2 * np.arange(D // 2) / D)
    def rot(a):
        r = np.empty_like(a); c, s = np.cos(th), np.sin(th)
        r[:, 0::2] = a[:, 0::2] * c - a[:, 1::2] * s; r[:, 1::2] = a[:, 1::2] * c + a[:, 0::2] * s
        return r
    q, k, v = rot(X @ Wq), rot(X @ Wk), X @ Wv
    sc = np.where(np.tri(T, dtype=bool), q @ k.T / np.sqrt(D), -1e30)
    p = np.exp(sc - sc.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    out = p @ v
    return p, out, np.sum(out * (((np.arange(T)[:, None] + np.arange(D)) % 3) - 1.0))
@case("rope_attention", inputs=rope_inputs, outputs=["att", "out", "readout", "dWq"], tol=(1e-4, 2e-5), vk=True)
def _(X, Wq, Wk, Wv):
    a = {k: v.astype(np.float64) for k, v in dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv).items()}
    att, out, ro = rope_np(**a)
    return dict(att=att, out=out, readout=ro, dWq=num_grad(lambda w: rope_np(**{**a, "Wq": w})[2], a["Wq"]))


# 8 layer norm and softmax backward by hand and by @
@case("norm_backward", inputs=lambda: dict(X=R(310).standard_normal((4, 8)), G=R(311).standard_normal((4, 8))),
      outputs=["dX_auto", "dX_hand", "dS_auto", "dS_hand", "agree"], tol=(1e-9, 1e-11))
def _(X, G):
    # dL/dX of sum(G * xhat) and of sum(G * softmax(X)) in closed form, row by row
    rstd = 1 / np.sqrt(X.var(1, keepdims=True) + 1e-5); xhat = (X - X.mean(1, keepdims=True)) * rstd
    dX = rstd * (G - G.mean(1, keepdims=True) - xhat * (G * xhat).mean(1, keepdims=True))
    p = np.exp(X - X.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    dS = p * (G - (G * p).sum(1, keepdims=True))
    return dict(dX_auto=dX, dX_hand=dX, dS_auto=dS, dS_hand=dS, agree=np.bool_(True))


# 9 strided convolution with named dims and its gradients
def conv_inputs():
    rg = R(312)
    return dict(X=rg.standard_normal((2, 2, 7, 9)).astype(np.float32), K=(0.4 * rg.standard_normal((3, 2, 3, 3))).astype(np.float32),
                bias=(0.1 * rg.standard_normal(3)).astype(np.float32))
def conv_np(X, K, bias):
    N, C, H, W = X.shape; OH, OW = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    Y = np.zeros((N, K.shape[0], OH, OW)) + bias[None, :, None, None]
    for kh in range(3):
        for kw in range(3):
            Y += np.einsum("ncij,oc->noij", X[:, :, kh:kh + 2 * OH - 1:2, kw:kw + 2 * OW - 1:2], K[:, :, kh, kw])
    return Y
@case("conv_stride_grad", inputs=conv_inputs, outputs=["Y", "same", "loss", "dK", "dX", "db"], tol=(1e-4, 1e-5))
def _(X, K, bias):
    a = {k: v.astype(np.float64) for k, v in dict(X=X, K=K, bias=bias).items()}
    L = lambda **b: np.sum(np.maximum(conv_np(**{**a, **b}), 0) ** 2) / 2
    Y = conv_np(**a)
    return dict(Y=Y, same=0.0, loss=L(), dK=num_grad(lambda k: L(K=k), a["K"]), dX=num_grad(lambda x: L(X=x), a["X"]),
                db=num_grad(lambda b: L(bias=b), a["bias"]))


# 10 batch norm at inference, as written, from std::ml and folded into the convolution
def bn_inputs():
    rg = R(313)
    return dict(X=rg.standard_normal((2, 3, 4, 4)).astype(np.float32), W=rg.standard_normal((5, 3)).astype(np.float32),
                gamma=rg.uniform(0.5, 1.5, 5).astype(np.float32), beta=rg.standard_normal(5).astype(np.float32),
                mean=rg.standard_normal(5).astype(np.float32), var=rg.uniform(0.2, 2.0, 5).astype(np.float32))
@case("bn_fold_inference", inputs=bn_inputs, outputs=["bn", "lib", "folded", "Wf", "bf", "active"], tol=(1e-5, 1e-5), vk=True)
def _(X, W, gamma, beta, mean, var):
    X, W, gamma, beta, mean, var = (a.astype(np.float64) for a in (X, W, gamma, beta, mean, var))
    s = gamma / np.sqrt(var + np.float32(1e-3)); c = np.einsum("oc,nchw->nohw", W, X)
    bn = s[:, None, None] * (c - mean[:, None, None]) + beta[:, None, None]
    return dict(bn=bn, lib=bn, folded=bn, Wf=W * s[:, None], bf=beta - mean * s, active=np.int32((bn > 0).sum()))


# 11 embedding bags in mean mode
def bag_inputs():
    rg = R(314)
    return dict(ids=rg.integers(0, 7, 10).astype(np.int64), offsets=np.int32([0, 3, 3, 7]), table=rg.standard_normal((7, 4)).astype(np.float32),
                Wc=rg.standard_normal((4, 3)).astype(np.float32), target=np.int32([2, 0, 1, 1]))
def bag_loss(ids, offsets, table, Wc, target):
    stop = np.append(offsets[1:], len(ids))
    pooled = np.array([table[ids[a:b]].mean(0) if b > a else np.zeros(table.shape[1]) for a, b in zip(offsets, stop)])
    z = pooled @ Wc
    return pooled, np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(len(z)), target])
@case("embedding_bag_mean", inputs=bag_inputs, outputs=["count", "pooled", "loss", "dtable", "touched"], tol=(1e-5, 1e-6))
def _(ids, offsets, table, Wc, target):
    a = dict(ids=ids, offsets=offsets, table=table.astype(np.float64), Wc=Wc.astype(np.float64), target=target)
    pooled, loss = bag_loss(**a)
    dt = num_grad(lambda t: bag_loss(**{**a, "table": t})[1], a["table"])
    return dict(count=np.diff(np.append(offsets, len(ids))).astype(np.int32), pooled=pooled, loss=loss,
                dtable=dt, touched=np.int32(len(np.unique(ids))))


# 12 label smoothing
@case("label_smoothing", inputs=lambda: dict(logits=(2 * R(315).standard_normal((6, 5))).astype(np.float32), labels=np.int64([0, 4, 2, 2, 1, 3])),
      outputs=["loss", "grad", "closed", "top", "hits", "accuracy"], tol=(1e-5, 1e-6))
def _(logits, labels):
    z = logits.astype(np.float64); N, C = z.shape
    lp = z - z.max(1, keepdims=True); lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    q = np.full((N, C), 0.1 / C); q[np.arange(N), labels] += 0.9
    g = (np.exp(lp) - q) / N; top = z.argmax(1); hits = int((top == labels).sum())
    return dict(loss=-np.sum(q * lp) / N, grad=g, closed=g, top=top.astype(np.int64), hits=np.int32(hits), accuracy=hits / N)


# 13 half-precision block with f32 accumulation
def f16_inputs():
    rg = R(316)
    return dict(x=rg.standard_normal((6, 16)).astype(np.float16), W=(0.3 * rg.standard_normal((16, 8))).astype(np.float16),
                b=(0.1 * rg.standard_normal(8)).astype(np.float16), g=rg.uniform(0.5, 1.5, 8).astype(np.float16))
@case("f16_block", inputs=f16_inputs, outputs=["acc", "normed", "y", "cls"], tol=(2e-3, 2e-3))
def _(x, W, b, g):
    acc = x.astype(np.float32) @ W.astype(np.float32) + b.astype(np.float32)
    normed = acc / np.sqrt((acc * acc).mean(1, keepdims=True) + np.float32(1e-6)) * g.astype(np.float32)
    y = (0.5 * normed * (1 + np.tanh(np.float32(0.7978846) * (normed + np.float32(0.044715) * normed ** 3)))).astype(np.float16)
    return dict(acc=acc, normed=normed, y=y, cls=y.astype(np.float32).argmax(1).astype(np.int32))


# 14 hypergradients through a training run
def hyper_inputs():
    rg = R(317); X = rg.standard_normal((20, 3)); Xv = rg.standard_normal((8, 3)); wt = np.array([1.0, -0.5, 2.0])
    return dict(X=X, y=X @ wt + 0.2 * rg.standard_normal(20), Xv=Xv, yv=Xv @ wt + 0.2 * rg.standard_normal(8),
                lr=np.float64(0.05), lam=np.float64(0.1))
def hyper_val(X, y, Xv, yv, lr, lam):
    w = np.full(3, 0.1)
    for _ in range(24):
        w = w - lr * (2 * X.T @ (X @ w - y) / len(y) + 2 * lam * w)
    return np.mean((Xv @ w - yv) ** 2)
@case("hypergrad_lr", inputs=hyper_inputs, outputs=["val", "dval_dlr", "dval_dlam"], tol=(1e-7, 1e-10))
def _(**a):
    h = 1e-6; d = lambda k: (hyper_val(**{**a, k: a[k] + h}) - hyper_val(**{**a, k: a[k] - h})) / (2 * h)
    return dict(val=hyper_val(**a), dval_dlr=d("lr"), dval_dlam=d("lam"))


# 15 one training function called twice, tuples and a match on them
def fit_inputs():
    rg = R(318); X = rg.standard_normal((16, 2))
    return dict(X=X.astype(np.float32), y=(X @ [1.5, -1.0] + 0.3 + 0.5 * rg.standard_normal(16) > 0).astype(np.float32))
@case("fit_twice", inputs=fit_inputs, outputs=["w_slow", "curve_slow", "w_fast", "curve_fast", "winner"], tol=(1e-4, 1e-6), vk=True)
def _(X, y):
    A = np.hstack([X.astype(np.float64), np.ones((len(X), 1))]); y = y.astype(np.float64)
    nll = lambda w: np.mean(np.log1p(np.exp(A @ w)) - y * (A @ w))
    def fit(lr):
        w = np.zeros(3); ws = [w]
        for _ in range(14):
            w = w - lr * A.T @ (1 / (1 + np.exp(-A @ w)) - y) / len(y); ws.append(w)
        return w, np.array([nll(w) for w in ws])
    (ws, cs), (wf, cf) = fit(0.1), fit(1.0)
    win = (1 if cf[14] < cs[14] else 0) if cf[14] < cf[0] else -1
    return dict(w_slow=ws, curve_slow=cs, w_fast=wf, curve_fast=cf, winner=np.int32(win),
                __stdout__=[f"slow {cs[14]:.4f} fast {cf[14]:.4f} winner {win}"])


# 16 Huber regression with a custom derivative rule, Nesterov momentum
def huber_inputs():
    rg = R(319); X = rg.standard_normal((30, 2)); y = X @ [2.0, -1.0] + 0.5 + 0.1 * rg.standard_normal(30)
    y[[3, 11, 20]] += [8.0, -6.0, 10.0]
    return dict(X=X, y=y)
@case("huber_nesterov", inputs=huber_inputs, outputs=["w", "curve", "flags", "outliers"], tol=(1e-9, 1e-11))
def _(X, y):
    A = np.hstack([X, np.ones((30, 1))])
    hub = lambda r: np.where(np.abs(r) <= 1, 0.5 * r * r, np.abs(r) - 0.5)
    v = np.zeros(3); w = np.zeros(3); ws = [w]
    for _ in range(39):
        a = w + 0.8 * v; g = A.T @ np.clip(A @ a - y, -1, 1) / 30
        v = 0.8 * v - 0.1 * g; w = w + v; ws.append(w)
    flags = (np.abs(A @ w - y) > 1).astype(np.int8)
    return dict(w=np.array(ws), curve=np.array([np.mean(hub(A @ w - y)) for w in ws]), flags=flags, outliers=np.int32(flags.sum()))


# 17 std::ml gru (bidirectional, linear_before_reset) with an SGD step, lstm (reverse, clipped)
sig = lambda a: 1 / (1 + np.exp(-a))
def onnx_gru(X, W, R, B, h0):
    Y = np.zeros((X.shape[0], 2) + h0.shape[1:]); Yh = np.zeros_like(h0); H = W.shape[1] // 3
    for d in range(2):
        h = h0[d]; Wz, Wr, Wh = np.split(W[d], 3); Rz, Rr, Rh = np.split(R[d], 3); bw, br = np.split(B[d], 2)
        for t in (range(len(X)) if d == 0 else reversed(range(len(X)))):
            x = X[t]; z = sig(x @ Wz.T + h @ Rz.T + bw[:H] + br[:H]); r = sig(x @ Wr.T + h @ Rr.T + bw[H:2 * H] + br[H:2 * H])
            hc = np.tanh(x @ Wh.T + r * (h @ Rh.T + br[2 * H:]) + bw[2 * H:]); h = (1 - z) * hc + z * h; Y[t, d] = h
        Yh[d] = h
    return Y, Yh
def onnx_lstm_reverse(X, W, R, B, clip):
    H = R.shape[-1]; h = np.zeros((X.shape[1], H)); c = np.zeros_like(h); Y = np.zeros((X.shape[0], 1) + h.shape)
    for t in reversed(range(len(X))):
        g = np.clip(X[t] @ W[0].T + h @ R[0].T + B[0, :4 * H] + B[0, 4 * H:], -clip, clip)
        i, o, f, cc = np.split(g, 4, axis=1); c = sig(f) * c + sig(i) * np.tanh(cc); h = sig(o) * np.tanh(c); Y[t, 0] = h
    return Y, h[None], c[None]
def rnn_inputs():
    rg = R(320); m = lambda *s: (0.5 * rg.standard_normal(s)).astype(np.float32)
    return dict(X=m(4, 2, 2), W=m(2, 9, 2), Rg=m(2, 9, 3), B=m(2, 18), h0=m(2, 2, 3), Wl=m(1, 8, 6), Rl=m(1, 8, 2), Bl=m(1, 16))
@case("std_gru_lstm", inputs=rnn_inputs, outputs=["L0", "dW", "L1", "Y", "Yh", "Ylstm", "Yl_h", "Yl_c"], tol=(2e-4, 2e-5))
def _(X, W, Rg, B, h0, Wl, Rl, Bl):
    X, W, Rg, B, h0, Wl, Rl, Bl = (a.astype(np.float64) for a in (X, W, Rg, B, h0, Wl, Rl, Bl))
    def readout(W):
        Y, Yh = onnx_gru(X, W, Rg, B, h0); return np.sum(Y ** 2) + np.sum(Yh)
    dW = num_grad(readout, W); W1 = W - 0.05 * dW; Y, Yh = onnx_gru(X, W1, Rg, B, h0)
    seq = Y.transpose(0, 2, 1, 3).reshape(4, 2, 6)
    Yl, Ylh, Ylc = onnx_lstm_reverse(seq, Wl, Rl, Bl, 0.5)
    return dict(L0=readout(W), dW=dW, L1=readout(W1), Y=Y, Yh=Yh, Ylstm=Yl, Yl_h=Ylh, Yl_c=Ylc)


# 18 an RNN trained over epochs, backpropagation through time in each epoch
def rnn_train_inputs():
    rg = R(321); t = np.arange(12)
    return dict(seq=(np.sin(0.7 * t) + 0.1 * rg.standard_normal(12)).astype(np.float32),
                P0=(0.5 * rg.standard_normal((3, 4))).astype(np.float32), U0=(0.4 * rg.standard_normal((4, 4))).astype(np.float32))
def rnn_loss(seq, P, U):
    h = np.zeros(4); tot = 0.0
    for t in range(1, len(seq)):
        h = np.tanh(P[0] * seq[t - 1] + U @ h + P[2]); tot += (P[1] @ h - seq[t]) ** 2
    return tot / (len(seq) - 1)
@case("rnn_train_epochs", sized=True, inputs=rnn_train_inputs, outputs=["curve", "P", "U"], tol=(2e-4, 2e-5))
def _(seq, P0, U0):
    seq = seq.astype(np.float64); P, U = P0.astype(np.float64), U0.astype(np.float64); Ps, Us = [P], [U]
    for _ in range(7):
        gP = num_grad(lambda p: rnn_loss(seq, p, U), P); gU = num_grad(lambda u: rnn_loss(seq, P, u), U)
        P, U = P - 0.05 * gP, U - 0.05 * gU; Ps.append(P); Us.append(U)
    return dict(curve=np.array([rnn_loss(seq, p, u) for p, u in zip(Ps, Us)]), P=np.array(Ps), U=np.array(Us))


# 19 bf16 forward and gradient on a rounded copy of f32 master weights, with loss scaling
def bf16_inputs():
    import ml_dtypes
    rg = R(322); X = rg.standard_normal((16, 4))
    return dict(X=X.astype(ml_dtypes.bfloat16), y=(X @ [0.5, -1.0, 0.25, 1.5]).astype(ml_dtypes.bfloat16))
@case("bf16_master_weights", inputs=bf16_inputs, outputs=["w", "final_loss"], tol=(3e-2, 2e-2))
def _(X, y):
    import ml_dtypes
    bf = lambda a: np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
    X, y = X.astype(np.float64), y.astype(np.float64); w = np.zeros(4); ws = [w]
    for _ in range(11):
        w16 = bf(w); g = 2 * X.T @ (X @ w16 - y) / len(y); w = w - 0.1 * g; ws.append(w)
    return dict(w=np.array(ws), final_loss=np.mean((X @ bf(w) - y) ** 2))


# 20 a dense layer and softmax over rest indices, gradients through two uses
def rest_inputs():
    rg = R(323)
    return dict(X=rg.standard_normal((2, 3, 4)).astype(np.float32), W=rg.standard_normal((4, 3)).astype(np.float32),
                bias=(0.1 * rg.standard_normal(3)).astype(np.float32))
def rest_loss(X, W, bias):
    def sm(z):
        e = np.exp(z - z.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
    tok = sm(X @ W + bias); summ = sm(X.mean(1) @ W + bias)
    return tok, summ, np.sum(tok * np.arange(1, 4)) - summ[:, 0].sum()
@case("rest_dense_grad", inputs=rest_inputs, outputs=["tokens", "summary", "loss", "dW", "dbias"], tol=(1e-4, 1e-5))
def _(X, W, bias):
    a = dict(X=X.astype(np.float64), W=W.astype(np.float64), bias=bias.astype(np.float64))
    tok, summ, loss = rest_loss(**a)
    return dict(tokens=tok, summary=summ, loss=loss, dW=num_grad(lambda w: rest_loss(**{**a, "W": w})[2], a["W"]),
                dbias=num_grad(lambda b: rest_loss(**{**a, "bias": b})[2], a["bias"]))


# 21 autoregressive decoding with attention over a growing cache
def ar_inputs():
    rg = R(324); m = lambda *s: (0.6 * rg.standard_normal(s)).astype(np.float32)
    return dict(x0=rg.standard_normal(4).astype(np.float32), Wq=m(4, 4), Wk=m(4, 4), Wv=m(4, 4), Wo=m(4, 4))
@case("ar_attention_decode", sized=True, inputs=ar_inputs, outputs=["x", "o", "norms"], tol=(1e-4, 1e-5), vk=True)
def _(x0, Wq, Wk, Wv, Wo):
    xs = [x0.astype(np.float64)]; ks, vs, os = [], [], []
    for t in range(7):
        x = xs[t]; ks.append(x @ Wk); vs.append(x @ Wv); q = x @ Wq
        s = np.array(ks) @ q / 2.0; p = np.exp(s - s.max()); p /= p.sum(); os.append(p @ np.array(vs))
        if t < 6:
            xs.append(np.tanh(os[t] @ Wo))
    x = np.array(xs)
    return dict(x=x, o=np.array(os), norms=(x * x).sum(1))


# 22 InfoNCE with cosine similarities, both directions
def nce_inputs():
    rg = R(325); A = rg.standard_normal((5, 3))
    return dict(A=A.astype(np.float32), Bm=(A + 0.7 * rg.standard_normal((5, 3))).astype(np.float32))
def nce(A, Bm):
    u = lambda M: M / np.sqrt((M * M).sum(1, keepdims=True) + 1e-8)
    S = u(A) @ u(Bm).T / 0.2
    xe = lambda S: np.mean(np.log(np.exp(S - S.max(1, keepdims=True)).sum(1)) + S.max(1) - np.diag(S))
    return S, 0.5 * (xe(S) + xe(S.T))
@case("infonce", inputs=nce_inputs, outputs=["sim", "loss", "dA", "dB", "matched"], tol=(1e-4, 1e-5))
def _(A, Bm):
    A, Bm = A.astype(np.float64), Bm.astype(np.float64); S, loss = nce(A, Bm)
    return dict(sim=S, loss=loss, dA=num_grad(lambda a: nce(a, Bm)[1], A), dB=num_grad(lambda b: nce(A, b)[1], Bm),
                matched=np.int32((np.diag(S) >= S.max(1)).sum()))


# 23 inverted dropout from an integer hash, focal loss
def focal_inputs():
    rg = R(326)
    return dict(X=rg.standard_normal((10, 6)).astype(np.float32), W=(0.5 * rg.standard_normal((6, 8))).astype(np.float32),
                v=rg.standard_normal(8).astype(np.float32), y=rg.integers(0, 2, 10).astype(np.int32), seed=np.int64(12345))
def focal_np(X, W, v, y, seed):
    n, h = np.meshgrid(np.arange(10, dtype=np.int64), np.arange(8, dtype=np.int64), indexing="ij")
    z = (n * 8 + h + int(seed) * 2654435761) % 4294967296; r = (z * 1103515245 + 12345) % 2147483648
    keep = r / 2147483648.0 >= 0.25
    hid = np.where(keep, np.maximum(X @ W, 0) / 0.75, 0); p = 1 / (1 + np.exp(-hid @ v))
    loss = -np.mean(np.where(y == 1, 0.75 * (1 - p) ** 2 * np.log(p), 0.25 * p ** 2 * np.log(1 - p)))
    return keep, loss
@case("focal_dropout", inputs=focal_inputs, outputs=["loss", "dW", "kept"], tol=(1e-4, 1e-6))
def _(X, W, v, y, seed):
    a = dict(X=X.astype(np.float64), W=W.astype(np.float64), v=v.astype(np.float64), y=y, seed=seed)
    keep, loss = focal_np(**a)
    return dict(loss=loss, dW=num_grad(lambda w: focal_np(**{**a, "W": w})[1], a["W"]), kept=np.int32(keep.sum()))


# 24 Newton's method with the Hessian as the derivative of the gradient
def newton_inputs():
    rg = R(327); X = rg.standard_normal((25, 2))
    return dict(X=X, y=(X @ [1.0, -2.0] + 0.5 + rg.standard_normal(25) > 0).astype(np.float64), probe=np.array([0.3, -1.0, 0.5]))
@case("newton_logreg", inputs=newton_inputs, outputs=["w", "losses", "gf", "Hf", "hvp", "Hv"], tol=(1e-8, 1e-10))
def _(X, y, probe):
    A = np.hstack([X, np.ones((len(X), 1))]); N = len(X)
    nll = lambda w: np.mean(np.log1p(np.exp(A @ w)) - y * (A @ w)) + 0.01 * w @ w
    def gh(w):
        p = 1 / (1 + np.exp(-A @ w))
        return A.T @ (p - y) / N + 0.02 * w, (A.T * (p * (1 - p))) @ A / N + 0.02 * np.eye(3)
    w = np.zeros(3); ws = [w]
    for _ in range(5):
        g, H = gh(w); w = w - np.linalg.solve(H, g); ws.append(w)
    g, H = gh(w)
    return dict(w=np.array(ws), losses=np.array([nll(w) for w in ws]), gf=g, Hf=H, hvp=H @ probe, Hv=H @ probe)


# 25 perceptron rule on the first misclassified example
def perceptron_inputs():
    rg = R(328); X = rg.standard_normal((14, 2)); y = np.where(X @ [1.0, 2.0] + 0.3 > 0, 1, -1)
    return dict(X=X.astype(np.float32), y=y.astype(np.int32))
@case("perceptron", inputs=perceptron_inputs, outputs=["pick", "w", "mistakes", "separated"], tol=(1e-5, 1e-6), vk=True)
def _(X, y):
    X = X.astype(np.float32); A = np.hstack([X, np.ones((14, 1), np.float32)]); w = np.zeros(3, np.float32); ws = [w]; picks = [0]
    wrong = lambda w: y * (A @ w) <= 0
    for _ in range(39):
        bad = np.flatnonzero(wrong(w)); p = bad[0] if len(bad) else 14; picks.append(p)
        if p < 14:
            w = w + y[p] * A[p]
        ws.append(w)
    picks = np.int32(picks)
    return dict(pick=picks, w=np.array(ws), mistakes=np.int32((picks[1:] < 14).sum()), separated=np.bool_(not wrong(w).any()))


# 26 multinomial naive Bayes
def nb_inputs():
    rg = R(329); label = rg.integers(0, 3, 12); rates = rg.uniform(0.2, 3.0, (3, 7))
    return dict(counts=rg.poisson(rates[label]).astype(np.int32), label=label.astype(np.int32))
@case("naive_bayes", inputs=nb_inputs, outputs=["class_docs", "tot", "score", "pred", "confusion"], tol=(1e-10, 1e-12))
def _(counts, label):
    Y = np.eye(3, dtype=np.int64)[label]; tok = Y.T @ counts.astype(np.int64); tot = tok.sum(1)
    ll = np.log((tok + 1) / (tot + 7)[:, None]); lp = np.log(Y.sum(0) / 12)
    score = lp + counts @ ll.T; pred = score.argmax(1)
    conf = np.array([[np.sum((label == a) & (pred == b)) for b in range(3)] for a in range(3)], np.int32)
    return dict(class_docs=Y.sum(0), tot=tot, score=score, pred=pred.astype(np.int32), confusion=conf)


# 27 skip-gram with negative sampling, sparse SGD rows
def sg_inputs():
    rg = R(330); V, D, S = 6, 3, 20
    c = rg.integers(0, V, S); ctx = (c + rg.choice([-1, 1], S)) % V; neg = rg.integers(0, V, S)
    return dict(pairs=np.stack([c, ctx, neg], 1).astype(np.int32), In0=(0.5 * rg.standard_normal((V, D))).astype(np.float32),
                Out0=(0.5 * rg.standard_normal((V, D))).astype(np.float32))
@case("skipgram_sgd", inputs=sg_inputs, outputs=["loss", "In", "Out", "nearest"], tol=(1e-4, 1e-5))
def _(pairs, In0, Out0):
    sg = lambda x: 1 / (1 + np.exp(-x)); I, O = In0.astype(np.float64), Out0.astype(np.float64); Is, Os, L = [I], [O], [0.0]
    for c, p, n in pairs:
        ps, ns = I[c] @ O[p], I[c] @ O[n]; L.append(-np.log(sg(ps)) - np.log(sg(-ns)))
        I2 = I.copy(); I2[c] = I[c] - 0.2 * ((sg(ps) - 1) * O[p] + sg(ns) * O[n])
        up = np.zeros(len(O)); up[p] += sg(ps) - 1; up[n] += sg(ns)
        O = O - 0.2 * up[:, None] * I[c][None, :]; I = I2; Is.append(I); Os.append(O)
    sim = I @ I.T - np.eye(len(I)) * 1e9
    return dict(loss=np.array(L), In=np.array(Is), Out=np.array(Os), nearest=sim.argmax(1).astype(np.int32))


# 28 AdamW, warmup and cosine schedule, global-norm clipping
def adamw_inputs():
    rg = R(331); X = rg.standard_normal((24, 4))
    return dict(X=X, y=X @ [2.0, -3.0, 0.5, 1.0] + 0.1 * rg.standard_normal(24))
@case("adamw_cosine_clip", inputs=adamw_inputs, outputs=["lrs", "w", "curve"], tol=(1e-9, 1e-11))
def _(X, y):
    rate = lambda t: 0.05 * t / 5 if t <= 5 else 0.5 * 0.05 * (1 + np.cos(np.pi * (t - 5) / 25))
    w = np.zeros(4); m = np.zeros(4); v = np.zeros(4); ws = [w]
    for t in range(1, 31):
        g = 2 * X.T @ (X @ w - y) / 24; nrm = np.sqrt(g @ g); g = g / nrm if nrm > 1 else g
        m = 0.9 * m + 0.1 * g; v = 0.999 * v + 0.001 * g * g
        w = w - rate(t) * ((m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8) + 0.01 * w); ws.append(w)
    return dict(lrs=np.array([0.0] + [rate(t) for t in range(1, 31)]), w=np.array(ws),
                curve=np.array([np.mean((X @ w - y) ** 2) for w in ws]))


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
