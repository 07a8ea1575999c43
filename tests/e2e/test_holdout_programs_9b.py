"""Hold-out programs, ninth round (training loops in the language): whole optimisers written as
recurrences over epochs with `@loss / @W` inside the step: logistic regression with L2, a step
schedule and Polyak/EMA averaging, early stopping by a running minimum and a patience counter, a
two-layer network by momentum on mini-batches through a shuffled order, LQR policy gradient with
global-norm clipping, skip-gram with negative samples given as indices, a 1-d CNN, a 784-64-10
network and a 784-128-64-10 one by Adam on real MNIST rows, a tied autoencoder with an EMA of its
weights, a character RNN by BPTT with Adagrad, quantisation-aware training with a straight-through
rule, DP-SGD with per-example gradients, Armijo line search beside Adam, epochs of mini-batches as
nested recurrences, masked matrix factorisation, optimisers as step functions, optimisers in
modules, a multiclass SVM, a closed-loop RNN over a batch and a dropout network whose masks hash
(step, row, unit) in wrapping u32 arithmetic, each checked against NumPy computed here (gradients
by hand, by complex steps or by central differences). Each case states its tolerance (`tol`, rtol
and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
from pathlib import Path

import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 logistic regression, L2, step schedule, Polyak and EMA averages
def lrp_inputs():
    rg = R(901); X = rg.standard_normal((24, 3)); wt = np.array([1.5, -2.0, 0.5])
    return dict(X=X, y=(X @ wt + 0.3 + 0.8 * rg.standard_normal(24) > 0).astype(np.float64))
@case("logreg_polyak", inputs=lrp_inputs, tol=(1e-10, 1e-12))
def _(X, y):
    E, lam, B = 30, 0.01, len(y)
    sp = lambda z: np.logaddexp(0, z)
    loss = lambda w, b: (sp(X @ w + b) - y * (X @ w + b)).mean() + 0.5 * lam * w @ w
    acc = lambda w, b: np.int32(((X @ w + b > 0) == (y > 0.5)).sum())
    w, b = np.zeros(3), 0.0; ws, bs = [w], [b]
    for e in range(E):
        r = 1 / (1 + np.exp(-(X @ w + b))) - y; lr = [0.5, 0.25, 0.1][min(e // 10, 2)]
        w, b = w - lr * (X.T @ r / B + lam * w), b - lr * r.mean(); ws.append(w); bs.append(b)
    ws, bs = np.array(ws), np.array(bs)
    wbar = np.cumsum(ws, 0) / np.arange(1, E + 2)[:, None]; bbar = np.cumsum(bs) / np.arange(1, E + 2)
    ema = [ws[0]]
    for e in range(1, E + 1):
        ema.append(0.8 * ema[-1] + 0.2 * ws[e])
    losses = np.array([loss(ws[e], bs[e]) for e in range(E + 1)]); lp = loss(wbar[-1], bbar[-1])
    return {"w": ws, "b": bs, "wbar": wbar, "bbar": bbar, "wema": np.array(ema), "losses": losses,
            "loss_polyak": lp, "acc.0": acc(ws[-1], bs[-1]), "acc.1": acc(wbar[-1], bbar[-1]),
            "__stdout__": [f"last {losses[-1]:.4f} polyak {lp:.4f}"]}

# 2 early stopping by a running minimum of the validation loss and a patience counter
def es_inputs():
    rg = R(902); wt = np.array([1.0, -2.0, 0.5, 1.5])
    Xtr = rg.standard_normal((32, 4)).astype(np.float32); Xva = rg.standard_normal((16, 4)).astype(np.float32)
    return dict(Xtr=Xtr, ytr=(Xtr @ wt).astype(np.float32), Xva=Xva, yva=(Xva @ (0.5 * wt)).astype(np.float32))
@case("early_stop_linreg", sized=True, inputs=es_inputs, tol=(1e-4, 1e-5))
def _(Xtr, ytr, Xva, yva):
    f = np.float32; E, P, lr = 40, 3, f(0.05)
    mse = lambda w, X, y: ((X @ w - y) ** 2).sum(dtype=f) / f(len(y))
    w = np.zeros(4, f); ws = [w]; va = [mse(w, Xva, yva)]; best, bep, wait, stop = [va[0]], [0], [0], [False]
    imp = []
    for e in range(1, E + 1):
        if not stop[-1]:
            w = w - lr * (f(2) * Xtr.T @ (Xtr @ w - ytr) / f(32))
        ws.append(w); va.append(mse(w, Xva, yva)); i = va[-1] < best[-1]; imp.append(i)
        bep.append(e if i else bep[-1]); wait.append(0 if i else wait[-1] + 1)
        best.append(va[-1] if i else best[-1]); stop.append(stop[-1] or wait[-1] >= P)
    return dict(w=np.array(ws), va=np.array(va), best=np.array(best), best_ep=np.int32(bep),
                wait=np.int32(wait), stopped=np.array(stop), improved=np.array([False] + imp),
                stop_at=np.int32(stop.index(True)), w_final=ws[-1])

# 3 two-layer ReLU network, heavy-ball momentum, mini-batches through a shuffled order
def mlp_inputs():
    rg = R(903); N, D, H, C = 20, 4, 6, 3
    X = rg.standard_normal((N, D)).astype(np.float32); lab = np.argmax(X[:, :3] + 0.3 * X[:, 3:], 1).astype(np.int32)
    th = np.concatenate([0.5 * rg.standard_normal(D * H), np.zeros(H), 0.5 * rg.standard_normal(H * C), np.zeros(C)])
    return dict(X=X, labels=lab, perm=rg.permutation(N).astype(np.int32), theta0=th.astype(np.float32))
@case("mlp_momentum_perm", inputs=mlp_inputs, outputs=["batch", "theta", "vel", "full_loss", "pred", "correct"],
      tol=(2e-4, 2e-5))
def _(X, labels, perm, theta0):
    f = np.float32; N, D = X.shape; H, C, M, S = 6, 3, 4, 15
    def unpack(th):
        o1 = D * H; o2 = o1 + H; o3 = o2 + H * C
        return th[:o1].reshape(D, H), th[o1:o2], th[o2:o3].reshape(H, C), th[o3:]
    def fwd(th, rows):
        W1, b1, W2, b2 = unpack(th); a = X[rows] @ W1 + b1; h = np.maximum(a, 0); z = h @ W2 + b2
        p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
        return a, h, z, p
    def loss(th, rows):
        _, _, z, p = fwd(th, rows); return -np.log(p[np.arange(len(rows)), labels[rows]]).mean(dtype=f)
    def grad(th, rows):
        W1, b1, W2, b2 = unpack(th); a, h, z, p = fwd(th, rows)
        dz = p.copy(); dz[np.arange(len(rows)), labels[rows]] -= 1; dz /= f(len(rows))
        dh = (dz @ W2.T) * (a > 0)
        return np.concatenate([(X[rows].T @ dh).ravel(), dh.sum(0), (h.T @ dz).ravel(), dz.sum(0)])
    batch = np.array([[perm[(t * M + m) % N] for m in range(M)] for t in range(S)], np.int32)
    th = theta0; v = np.zeros_like(th); ths, vs = [th], [v]
    for t in range(S):
        v = f(0.9) * v + grad(th, batch[t]); th = th - f(0.2) * v; ths.append(th); vs.append(v)
    allr = np.arange(N); pred = fwd(ths[-1], allr)[3].argmax(1).astype(np.int32)
    return dict(batch=batch, theta=np.array(ths), vel=np.array(vs), full_loss=np.array([loss(t, allr) for t in ths]),
                pred=pred, correct=np.int32((pred == labels).sum()))

# 4 LQR policy gradient with global-norm clipping and a decaying step (dJ/dK by complex steps)
def lq_inputs():
    rg = R(904)
    return dict(A=np.array([[1.0, 0.1], [0.0, 1.0]]) + 0.02 * rg.standard_normal((2, 2)), Bu=np.array([0.005, 0.1]),
                x0s=rg.standard_normal((3, 2)))
@case("lq_policy_clip", inputs=lq_inputs, outputs=["K", "g", "gnorm", "scale", "J", "clipped"], tol=(1e-9, 1e-11))
def _(A, Bu, x0s):
    T, I = 20, 25
    def cost(K):
        x = x0s.astype(complex); J = 0
        for t in range(T):
            u = -x @ K; J = J + (x * x).sum() + 0.1 * (u * u).sum(); x = x @ A.T + u[:, None] * Bu
        return J / 3
    K = np.zeros(2); Ks, gs, ns, sc = [K], [], [], []
    for k in range(1, I + 1):
        g = np.array([cost(K + 1e-30j * e).imag / 1e-30 for e in np.eye(2)]); n = np.sqrt(g @ g)
        s = 2.0 / n if n > 2.0 else 1.0; K = K - 0.05 / (1 + (k - 1) / 10) * s * g
        Ks.append(K); gs.append(g); ns.append(n); sc.append(s)
    z = lambda a: np.concatenate([np.zeros((1,) + np.shape(a)[1:]), a])
    return dict(K=np.array(Ks), g=z(np.array(gs)), gnorm=z(np.array(ns)), scale=z(np.array(sc)),
                J=np.array([cost(K).real for K in Ks]), clipped=np.int32((np.array(sc) < 1).sum()))

# 5 skip-gram, full batch, K negatives per pair given as indices; the gradient scatters onto the rows read
def sg_inputs():
    rg = R(905); V, D, P, K = 9, 4, 14, 3
    return dict(centers=rg.integers(0, 6, P).astype(np.int32), contexts=rg.integers(0, V, P).astype(np.int32),
                negs=rg.integers(0, V, (P, K)).astype(np.int32),
                In0=(0.3 * rg.standard_normal((V, D))).astype(np.float32), Out0=(0.3 * rg.standard_normal((V, D))).astype(np.float32))
@case("sgns_negatives", inputs=sg_inputs, tol=(2e-5, 2e-6), vk=True)
def _(centers, contexts, negs, In0, Out0):
    f = np.float32; P = len(centers); sig = lambda x: 1 / (1 + np.exp(-x))
    def parts(I, O):
        pos = (I[centers] * O[contexts]).sum(1); neg = (I[centers][:, None, :] * O[negs]).sum(2)
        return -np.log(sig(pos)).sum() / f(P), -np.log(sig(-neg)).sum() / f(P), pos, neg
    I, O = In0, Out0; Is, Os = [I], [O]
    for e in range(12):
        _, _, pos, neg = parts(I, O); gp = (sig(pos) - 1) / f(P); gn = sig(neg) / f(P)
        gI = np.zeros_like(I); gO = np.zeros_like(O)
        np.add.at(gI, centers, gp[:, None] * O[contexts] + (gn[:, :, None] * O[negs]).sum(1))
        np.add.at(gO, contexts, gp[:, None] * I[centers]); np.add.at(gO, negs, gn[:, :, None] * I[centers][:, None, :])
        I, O = I - f(0.5) * gI, O - f(0.5) * gO; Is.append(I); Os.append(O)
    a, b, _, _ = parts(I, O)
    return {"In": np.array(Is), "Out": np.array(Os), "curve": np.array([sum(parts(i, o)[:2]) for i, o in zip(Is, Os)]),
            "split.0": a, "split.1": b, "touched": np.int32(len(set(centers.tolist()))),
            "moved": np.abs(I - In0).max(1) > 0}

# 6 1-d CNN: valid convolution, ReLU, global max pool, logistic readout, gradient descent
def cnn_inputs():
    rg = R(906); N, L, F, W = 10, 12, 3, 3
    x = rg.standard_normal((N, L)).astype(np.float32); y = np.zeros(N, np.float32)
    for n in range(N // 2):   # positives carry a bump
        p = rg.integers(0, L - 3); x[n, p:p + 3] += np.float32([1.0, 2.0, 1.0]); y[n] = 1
    return dict(x=x, y=y, K0=(0.5 * rg.standard_normal((F, W))).astype(np.float32), v0=(0.5 * rg.standard_normal(F)).astype(np.float32))
@case("cnn1d_train", inputs=cnn_inputs, outputs=["K", "c", "v", "b", "loss", "acc", "knorm"], tol=(1e-4, 1e-5))
def _(x, y, K0, v0):
    f = np.float32; N, L = x.shape; F, W = K0.shape; Lo = L - W + 1
    win = np.stack([x[:, l:l + W] for l in range(Lo)], 1)          # N, Lo, W
    def fwd(K, c, v, b):
        pre = np.einsum("nlw,fw->nfl", win, K) + c[None, :, None]; a = np.maximum(pre, 0)
        arg = a.argmax(2); h = a.max(2); return pre, arg, h, h @ v + b
    def loss(K, c, v, b):
        z = fwd(K, c, v, b)[3]; return (np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0) - y * z).mean(dtype=f)
    K, c, v, b = K0, np.full(F, 0.1, f), v0, f(0); hist = [(K, c, v, b)]
    for s in range(8):
        pre, arg, h, z = fwd(K, c, v, b); dz = (1 / (1 + np.exp(-z)) - y) / f(N)
        dh = dz[:, None] * v[None, :]; dpre = dh * (np.take_along_axis(pre, arg[:, :, None], 2)[:, :, 0] > 0)
        sel = win[np.arange(N)[:, None], arg]                        # N, F, W: the selected window
        gK = (dpre[:, :, None] * sel).sum(0); gc = dpre.sum(0); gv = h.T @ dz; gb = dz.sum()
        K, c, v, b = K - f(0.3) * gK, c - f(0.3) * gc, v - f(0.3) * gv, b - f(0.3) * gb; hist.append((K, c, v, b))
    acc = [np.int32(((fwd(*p)[3] > 0) == (y > 0.5)).sum()) for p in hist]
    return dict(K=np.array([p[0] for p in hist]), c=np.array([p[1] for p in hist]), v=np.array([p[2] for p in hist]),
                b=np.array([p[3] for p in hist], f), loss=np.array([loss(*p) for p in hist]), acc=np.array(acc, np.int32),
                knorm=np.sqrt((np.array([p[0] for p in hist]) ** 2).sum(2)))

# 7 784-64-10 network on real MNIST rows (read in place), momentum, weight decay, global-norm clipping
MNIST = Path(__file__).resolve().parents[3] / "shared" / "data" / "mnist"
def mnist_inputs():
    if not MNIST.is_dir():
        pytest.skip("shared/data/mnist is not beside the repository")
    rg = R(907); X = 1 - np.load(MNIST / "samples.npy").reshape(10, 784)
    return dict(X=X.astype(np.float32), labels=np.load(MNIST / "labels.npy").astype(np.int32),
                W1i=(rg.standard_normal((784, 64)) / 28).astype(np.float32), W2i=(rg.standard_normal((64, 10)) / 8).astype(np.float32))
@case("mnist_mlp_clip", inputs=mnist_inputs, outputs=["gnorm", "sc", "curve", "pred", "correct", "W2"], tol=(1e-4, 1e-5))
def _(X, labels, W1i, W2i):
    f = np.float32; B = len(X); rows = np.arange(B)
    def fwd(W1, W2):
        h = np.maximum(X @ W1, 0); z = h @ W2; p = np.exp(z - z.max(1, keepdims=True)); return h, z, p / p.sum(1, keepdims=True)
    def loss(W1, W2):
        p = fwd(W1, W2)[2]; return -np.log(p[rows, labels]).mean(dtype=f)
    W1, W2 = W1i, W2i; V1, V2 = np.zeros_like(W1), np.zeros_like(W2); W2s, gns, scs, curve = [W2], [f(0)], [f(0)], [loss(W1, W2)]
    for t in range(6):
        h, z, p = fwd(W1, W2); dz = p.copy(); dz[rows, labels] -= 1; dz /= f(B)
        g2 = h.T @ dz; g1 = X.T @ ((dz @ W2.T) * (h > 0)); gn = np.sqrt((g1 * g1).sum() + (g2 * g2).sum()); sc = min(f(1), f(1) / gn)
        V1 = f(0.9) * V1 + sc * g1 + f(1e-4) * W1; V2 = f(0.9) * V2 + sc * g2 + f(1e-4) * W2
        W1, W2 = W1 - f(0.1) * V1, W2 - f(0.1) * V2; W2s.append(W2); gns.append(gn); scs.append(sc); curve.append(loss(W1, W2))
    pred = fwd(W1, W2)[1].argmax(1).astype(np.int32)
    return dict(gnorm=np.array(gns), sc=np.array(scs), curve=np.array(curve), pred=pred, correct=np.int32((pred == labels).sum()),
                W2=np.array(W2s), __stdout__=[f"correct {(pred == labels).sum()}"])

# 8 tied autoencoder, BCE, decoupled weight decay, bias-corrected EMA of the weights
def ae_inputs():
    rg = R(908); protos = rg.random((3, 8)) > 0.5
    pick = lambda n: (protos[rg.integers(0, 3, n)] ^ (rg.random((n, 8)) < 0.1)).astype(np.float64)
    return dict(X=pick(20), Xte=pick(6), W0=0.3 * rg.standard_normal((8, 3)))
@case("autoencoder_tied_ema", inputs=ae_inputs, tol=(1e-9, 1e-11))
def _(X, Xte, W0):
    E, lr, wd, beta = 25, 0.5, 0.01, 0.9; sig = lambda z: 1 / (1 + np.exp(-z))
    def fwd(W, a, c, X):
        h = sig(X @ W + a); return h, sig(h @ W.T + c)
    def bce(W, a, c, X):
        r = fwd(W, a, c, X)[1]; return -(X * np.log(r) + (1 - X) * np.log(1 - r)).sum() / len(X)
    W, a, c = W0, np.zeros(3), np.zeros(8); hist = [(W, a, c)]; m = np.zeros_like(W); ms = [m]
    for e in range(E):
        h, r = fwd(W, a, c, X); dr = (r - X) / len(X); dh = (dr @ W) * h * (1 - h)
        gW = dr.T @ h + X.T @ dh; W, a, c = (1 - lr * wd) * W - lr * gW, a - lr * dh.sum(0), c - lr * dr.sum(0)
        hist.append((W, a, c)); m = beta * m + (1 - beta) * W; ms.append(m)
    We = m / (1 - beta ** E); bits = fwd(W, a, c, Xte)[1] > 0.5
    return {"W": np.array([p[0] for p in hist]), "a": np.array([p[1] for p in hist]), "c": np.array([p[2] for p in hist]),
            "m": np.array(ms), "W_ema": We, "train_curve": np.array([bce(*p, X) for p in hist]),
            "test_loss.0": bce(W, a, c, Xte), "test_loss.1": bce(We, a, c, Xte), "bits": bits,
            "bit_errors": np.int32((bits != (Xte > 0.5)).sum())}

# 9 teacher-forced character RNN, BPTT, elementwise-clamped gradients, Adagrad
def rnn_inputs():
    rg = R(909); V, H = 5, 6
    return dict(tok=np.int32([0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 2, 4, 1, 3, 0]), Wxh0=(0.5 * rg.standard_normal((V, H))).astype(np.float32),
                Whh0=(0.4 * rg.standard_normal((H, H))).astype(np.float32), Why0=(0.5 * rg.standard_normal((H, V))).astype(np.float32))
@case("rnn_char_adagrad", inputs=rnn_inputs, outputs=["gx", "gh", "gy", "Wxh", "Whh", "Why", "curve", "ppl"], tol=(2e-4, 2e-5))
def _(tok, Wxh0, Whh0, Why0):
    f = np.float32; T = len(tok); H = Whh0.shape[0]
    def fwd(Wxh, Whh, Why):
        hs = [np.zeros(H, f)]
        for t in range(1, T):
            hs.append(np.tanh(Wxh[tok[t - 1]] + hs[-1] @ Whh))
        hs = np.array(hs); z = hs[1:] @ Why; p = np.exp(z - z.max(1, keepdims=True)); return hs, p / p.sum(1, keepdims=True)
    def nll(*W):
        p = fwd(*W)[1]; return -np.log(p[np.arange(T - 1), tok[1:]]).mean(dtype=f)
    def grads(Wxh, Whh, Why):
        hs, p = fwd(Wxh, Whh, Why); dz = p.copy(); dz[np.arange(T - 1), tok[1:]] -= 1; dz /= f(T - 1)
        gy = hs[1:].T @ dz; dh = dz @ Why.T; gx = np.zeros_like(Wxh); gh = np.zeros_like(Whh); carry = np.zeros(H, f)
        for t in range(T - 1, 0, -1):
            da = (dh[t - 1] + carry) * (1 - hs[t] ** 2); gx[tok[t - 1]] += da; gh += np.outer(hs[t - 1], da); carry = da @ Whh.T
        return [np.clip(g, -1, 1) for g in (gx, gh, gy)]
    Ws = [(Wxh0, Whh0, Why0)]; acc = [np.zeros_like(w) for w in Ws[0]]; gs = []
    for e in range(6):
        g = grads(*Ws[-1]); acc = [a + gi * gi for a, gi in zip(acc, g)]; gs.append(g)
        Ws.append(tuple(w - f(0.3) * gi / (np.sqrt(a) + f(1e-6)) for w, gi, a in zip(Ws[-1], g, acc)))
    z = lambda k: np.concatenate([np.zeros((1,) + gs[0][k].shape, f), np.array([g[k] for g in gs])])
    curve = np.array([nll(*W) for W in Ws])
    return dict(gx=z(0), gh=z(1), gy=z(2), Wxh=np.array([W[0] for W in Ws]), Whh=np.array([W[1] for W in Ws]),
                Why=np.array([W[2] for W in Ws]), curve=curve, ppl=np.exp(curve[-1]))

# 10 quantisation-aware training: clip and round to 4 bits in the forward pass, straight-through rule
def qat_inputs():
    rg = R(910); X = rg.standard_normal((16, 5)).astype(np.float32); Wt = rg.standard_normal((5, 2))
    return dict(X=X, Y=(X @ Wt).astype(np.float32), W0=(0.3 * rg.standard_normal((5, 2))).astype(np.float32),
                scale=np.float32([0.25, 0.2]))
@case("qat_ste_linear", inputs=qat_inputs, tol=(1e-4, 1e-5), vk=True)
def _(X, Y, W0, scale):
    f = np.float32; N = len(X)
    code = lambda W: np.round(np.clip(W / scale, -8, 7))
    loss = lambda W: ((X @ (code(W) * scale) - Y) ** 2).sum(dtype=f) / f(N)
    W = W0; Ws = [W]
    for s in range(20):
        r = X @ (code(W) * scale) - Y; inside = (W / scale > -8) & (W / scale < 7)
        W = W - f(0.1) * (f(2) * X.T @ r / f(N)) * inside; Ws.append(W)
    codes = np.zeros((21, 5, 2), np.int8); codes[19], codes[20] = code(Ws[19]), code(Ws[20])
    return dict(W=np.array(Ws), curve=np.array([loss(W) for W in Ws]), codes=codes,
                changed=np.int32((codes[20] != codes[19]).sum()), saturated=np.int32(((codes[20] >= 7) | (codes[20] <= -8)).sum()))

# 11 DP-SGD: per-example gradients clipped to norm C, Gaussian noise from an input
def dp_inputs():
    rg = R(911); X = rg.standard_normal((18, 3)); S = 10
    return dict(X=X, y=(X @ np.array([2.0, -1.0, 0.5]) + 0.5 * rg.standard_normal(18) > 0).astype(np.float64),
                noise=rg.standard_normal((S, 3)))
@case("dpsgd_per_example", inputs=dp_inputs, tol=(1e-10, 1e-12))
def _(X, y, noise):
    S, N = len(noise), len(y); C, sig, lr = 0.5, 0.8, 0.5
    w = np.zeros(3); ws = [w]; ges, gns, facs, clp = [], [], [], []
    for t in range(S):
        ge = (1 / (1 + np.exp(-(X @ w))) - y)[:, None] * X; gn = np.sqrt((ge ** 2).sum(1)); fac = 1 / np.maximum(1, gn / C)
        w = w - lr * ((fac[:, None] * ge).sum(0) + sig * C * noise[t]) / N
        ws.append(w); ges.append(ge); gns.append(gn); facs.append(fac); clp.append((gn > C).sum())
    z = lambda a: np.concatenate([np.zeros((1,) + a.shape[1:], a.dtype), a])
    return dict(w=np.array(ws), ge=z(np.array(ges)), gn=z(np.array(gns)), factor=z(np.array(facs)),
                clipped=z(np.array(clp, np.int32)), acc=((X @ w > 0) == (y > 0.5)).mean())

# 12 Armijo backtracking (guarded min over the halvings) beside Adam written as a tuple-valued update
def arm_inputs():
    rg = R(912); A = rg.standard_normal((15, 4)).astype(np.float32)
    return dict(A=A, b=(A @ np.float32([1.0, -0.5, 2.0, 0.0]) + 0.1 * rg.standard_normal(15)).astype(np.float32))
@case("armijo_adam_tuples", inputs=arm_inputs, tol=(2e-5, 2e-6))
def _(A, b):
    f = np.float32; M = len(b); S = 12; sg = lambda z: 1 / (1 + np.exp(-z))
    loss = lambda w: f(0.5) * ((A @ w - b) ** 2).sum(dtype=f) / f(M) + f(0.1) * (np.log(1 + np.exp(w)) + np.log(1 + np.exp(-w))).sum(dtype=f)
    grad = lambda w: A.T @ (A @ w - b) / f(M) + f(0.1) * (sg(w) - sg(-w))
    x = np.zeros(4, f); xs, gxs, ggs, ks = [x], [], [], []
    for t in range(S):
        g = grad(x); gg = (g * g).sum(dtype=f); L = loss(x)
        k = next((k for k in range(12) if loss(x - f(4) * f(0.5) ** k * g) <= L - f(1e-4) * f(4) * f(0.5) ** k * gg), np.iinfo(np.int32).max)
        x = x - f(4) * f(0.5) ** k * g; xs.append(x); gxs.append(g); ggs.append(gg); ks.append(k)
    w, m, v = np.zeros(4, f), np.zeros(4, f), np.zeros(4, f); W, Ms, Vs, gws = [w], [m], [v], []
    for t in range(1, S + 1):
        g = grad(w); m = f(0.9) * m + f(0.1) * g; v = f(0.999) * v + f(0.001) * g * g
        warm = {1: f(0.25), 2: f(0.5)}.get(t, f(1))
        w = w - warm * f(0.1) * (m / (1 - f(0.9) ** t)) / (np.sqrt(v / (1 - f(0.999) ** t)) + f(1e-8))
        W.append(w); Ms.append(m); Vs.append(v); gws.append(g)
    z = lambda a: np.concatenate([np.zeros((1,) + np.shape(a)[1:], f), np.array(a, f)])
    return {"x": np.array(xs), "gx": z(gxs), "gg": z(ggs), "k_ok": np.int32([0] + ks), "w": np.array(W), "m": np.array(Ms),
            "v": np.array(Vs), "gw": z(gws), "curves.0": np.array([loss(x) for x in xs]), "curves.1": np.array([loss(w) for w in W])}

# 13 epochs of mini-batches as nested recurrences, Huber loss, halving schedule
def eb_inputs():
    rg = R(913); X = rg.standard_normal((24, 3)).astype(np.float32); y = X @ np.float32([1.0, -2.0, 0.5])
    y[[3, 11, 17]] += np.float32([6.0, -5.0, 8.0])
    return dict(X=X, y=y.astype(np.float32))
@case("epochs_of_batches", inputs=eb_inputs, tol=(1e-5, 1e-6), vk=True)
def _(X, y):
    f = np.float32; NB = 4; rows = 24 // NB
    dh = lambda r: np.clip(r, -1, 1)
    hub = lambda r: np.where(np.abs(r) <= 1, f(0.5) * r * r, np.abs(r) - f(0.5))
    w = np.zeros(3, f); ws = [w]
    for e in range(6):
        lr = f(0.4) * f(0.5) ** (e // 2)
        for k in range(NB):
            idx = k + NB * np.arange(rows); w = w - lr * (X[idx].T @ dh(X[idx] @ w - y[idx])) / f(rows)
        ws.append(w)
    ws = np.array(ws)
    return dict(w=ws, losses=np.array([hub(X @ w - y).sum(dtype=f) / f(24) for w in ws]),
                outliers=np.int32((np.abs(X @ ws[-1] - y) > 1).sum()))

# 14 masked matrix factorisation with biases and momentum on named dims
def mf_inputs():
    rg = R(914); U, I = 7, 6
    Rt = (3 + rg.standard_normal((U, 2)) @ rg.standard_normal((2, I)) + 0.1 * rg.standard_normal((U, I))).astype(np.float32)
    return dict(Rt=Rt, seen=rg.random((U, I)) < 0.7, P0=(0.1 * rg.standard_normal((U, 3))).astype(np.float32),
                Q0=(0.1 * rg.standard_normal((I, 3))).astype(np.float32))
@case("mf_masked_bias", inputs=mf_inputs, tol=(1e-4, 1e-5))
def _(Rt, seen, P0, Q0):
    f = np.float32; lr, mom, lam = f(0.05), f(0.8), f(0.05); mu = Rt[seen].sum(dtype=f) / f(seen.sum())
    pred = lambda P, Q, bu, bi: mu + bu[:, None] + bi[None, :] + P @ Q.T
    prm = [P0, Q0, np.zeros(len(P0), f), np.zeros(len(Q0), f)]; vel = [np.zeros_like(p) for p in prm]; hist = [prm]
    vels = [vel]
    for e in range(30):
        P, Q, bu, bi = prm; d = f(2) * (pred(*prm) - Rt) * seen
        g = [d @ Q + f(2) * lam * P, d.T @ P + f(2) * lam * Q, d.sum(1), d.sum(0)]
        vel = [mom * v - lr * gi for v, gi in zip(vel, g)]; prm = [p + v for p, v in zip(prm, vel)]; hist.append(prm); vels.append(vel)
    rmse = [np.sqrt(((pred(*p) - Rt)[~seen] ** 2).sum(dtype=f) / f((~seen).sum())) for p in hist]
    out = {k: np.array([p[i] for p in hist]) for i, k in enumerate(["P", "Q", "bu", "bi"])}
    out.update({k: np.array([v[i] for v in vels]) for i, k in enumerate(["vP", "vQ", "vu", "vi"])})
    return dict(out, mu=mu, hidden_rmse=np.array(rmse))

# 15 optimisers as step functions differentiating their argument (named fn, lambda, Nesterov look-ahead
# bound in the step), the loss picked at run time by a match on an integer input (two cases, one file)
def osf_inputs(kind):
    def inputs():
        rg = R(915); X = rg.standard_normal((12, 3))
        return dict(X=X, y=X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rg.standard_normal(12), kind=np.int32(kind))
    return inputs
def osf_ref(X, y, kind):
    def loss(w):
        r = X @ w - y; return [np.mean(r * r), np.mean(np.log(np.exp(r) + np.exp(-r))), np.mean(np.abs(r))][min(kind, 2)]
    def grad(w):
        r = X @ w - y; return X.T @ [2 * r, np.tanh(r), np.sign(r)][min(kind, 2)] / len(y)
    a, b, c = [np.zeros(3)], [np.zeros(3)], [np.zeros(3), np.zeros(3)]
    for t in range(10):
        a.append(a[-1] - 0.2 * grad(a[-1])); b.append(b[-1] - 0.1 * grad(b[-1]))
    for t in range(2, 11):
        ahead = c[-1] + 0.7 * (c[-1] - c[-2]); c.append(ahead - 0.2 * grad(ahead))
    curves = np.array([[loss(w) for w in ws] for ws in (a, b, c)]).T
    return dict(a=np.array(a), b=np.array(b), c=np.array(c), curves=curves, nesterov_won=curves[-1, 2] < curves[-1, 0],
                __stdout__=[f"after 10 steps: {curves[-1, 0]:.5f} {curves[-1, 1]:.5f} {curves[-1, 2]:.5f}"])
case("optimizer_step_fns", inputs=osf_inputs(1), tol=(1e-10, 1e-12))(osf_ref)
case("optimizer_step_fns_abs", inputs=osf_inputs(2), file="optimizer_step_fns", tol=(1e-10, 1e-12))(osf_ref)

# 16 softmax classifier trained by momentum and by RMSprop from modules of its own (tuple-valued updates,
# a warm-up schedule matched on a tuple)
def om_inputs():
    rg = R(916); N, D, C = 15, 4, 3; X = rg.standard_normal((N, D)).astype(np.float32)
    return dict(X=X, labels=np.argmax(X[:, :C] + 0.5 * rg.standard_normal((N, C)), 1).astype(np.int32),
                W0=(0.2 * rg.standard_normal((D, C))).astype(np.float32))
@case("optim_modules", file="optim_mod/main", inputs=om_inputs, tol=(1e-4, 1e-5))
def _(X, labels, W0):
    f = np.float32; N = len(X); E = 16; rows = np.arange(N)
    def sched(e, base):
        return f(base) * f(e + 1) / f(3) if e < 3 else f(0.5) * f(base) if e % 4 == 3 else f(base)
    def probs(W):
        z = X @ W; p = np.exp(z - z.max(1, keepdims=True)); return z, p / p.sum(1, keepdims=True)
    def xent(W):
        return -np.log(probs(W)[1][rows, labels]).mean(dtype=f)
    def grad(W):
        p = probs(W)[1].copy(); p[rows, labels] -= 1; return X.T @ p / f(N)
    W, v, Rw, sr = W0, np.zeros_like(W0), W0, np.zeros_like(W0); hist = [(W, v, Rw, sr, 0 * W0, 0 * W0)]
    for e in range(E):
        g = grad(W); v = f(0.8) * v + g; W = W - sched(e, 0.5) * v
        gr = grad(Rw); sr = f(0.9) * sr + f(0.1) * gr * gr; Rw = Rw - sched(e, 0.05) * gr / (np.sqrt(sr) + f(1e-6))
        hist.append((W, v, Rw, sr, g, gr))
    st = lambda k: np.array([h[k] for h in hist])
    hit = lambda W: np.int32((probs(W)[0][rows, labels] >= probs(W)[0].max(1)).sum())
    return {"W": st(0), "vW": st(1), "R": st(2), "sR": st(3), "gW": st(4), "gR": st(5),
            "curves": np.array([[xent(h[0]), xent(h[2])] for h in hist]), "hits.0": hit(W), "hits.1": hit(Rw)}

# 17 Crammer-Singer multiclass SVM by subgradient steps (a max over classes), 1 / sqrt(t) schedule
def svm_inputs():
    rg = R(917); X = rg.standard_normal((10, 4)).astype(np.float32)
    return dict(X=X, lab=rg.integers(0, 3, 10).astype(np.int32), W0=(0.1 * rg.standard_normal((4, 3))).astype(np.float32))
@case("multiclass_svm_sgd", inputs=svm_inputs, tol=(1e-5, 1e-6))
def _(X, lab, W0):
    f = np.float32; N = len(X); rows = np.arange(N)
    aug = lambda W: X @ W + (np.arange(3)[None] != lab[:, None])
    margins = lambda W: aug(W).max(1) - (X @ W)[rows, lab]
    obj = lambda W: margins(W).sum(dtype=f) / f(N) + f(0.025) * (W * W).sum(dtype=f)
    W = W0; Ws = [W]
    for t in range(1, 9):
        G = np.zeros((N, 3), f); G[rows, aug(W).argmax(1)] += 1; G[rows, lab] -= 1
        W = W - f(0.5) / f(t) ** f(0.5) * (X.T @ G / f(N) + f(0.05) * W); Ws.append(W)
    m = margins(W)
    return dict(W=np.array(Ws), curve=np.array([obj(w) for w in Ws]), final_margins=m,
                violating=np.int32((m > 0).sum()), first_row=X[0] @ W)

# 18 closed-loop RNN over a batch (batch axis first; state and prediction of different ranks), BPTT
# steps; the gradient by central differences
def rcl_inputs():
    rg = R(918); xs = rg.standard_normal((3, 6))
    return dict(xs=xs, ys=np.sin(0.3 * np.cumsum(xs, 1)), Wh0=0.3 * rg.standard_normal((4, 4)),
                wx=rg.standard_normal(4), wo=0.5 * rg.standard_normal(4))
@case("rnn_closed_loop_batch", inputs=rcl_inputs, tol=(1e-6, 1e-8))
def _(xs, ys, Wh0, wx, wo):
    B, T = xs.shape
    def run(Wh):
        h, out = np.zeros((B, 4)), []
        for t in range(T):
            out.append(h @ wo)
            h = np.tanh(wx * (xs[:, t] + out[-1])[:, None] + h @ Wh)
        return np.array(out).T
    loss = lambda Wh: ((run(Wh) - ys) ** 2).mean()
    def grad(Wh, h=1e-6):
        e = lambda i: np.eye(16)[i].reshape(4, 4) * h
        return np.array([(loss(Wh + e(i)) - loss(Wh - e(i))) / (2 * h) for i in range(16)]).reshape(4, 4)
    Ws = [Wh0]
    for _ in range(5):
        Ws.append(Ws[-1] - 0.5 * grad(Ws[-1]))
    return dict(Wh=np.array(Ws), curve=np.array([loss(w) for w in Ws]), pred=run(Ws[-1]))

# 19 inverted dropout from a wrapping u32 hash of (step, row, unit), two-layer tanh network
def do_inputs():
    rg = R(919); X = rg.standard_normal((12, 3)).astype(np.float32)
    return dict(X=X, y=np.sin(X @ np.float32([1.0, -0.5, 0.8])).astype(np.float32),
                W1_0=(0.5 * rg.standard_normal((3, 8))).astype(np.float32), w2_0=(0.5 * rg.standard_normal(8)).astype(np.float32),
                seed=np.uint32(2463534242))
@case("dropout_hash_mlp", inputs=do_inputs, tol=(1e-4, 1e-5))
def _(X, y, W1_0, w2_0, seed):
    f = np.float32; N, S, H = len(X), 8, 8
    t, n, j = np.meshgrid(np.arange(S), np.arange(N), np.arange(H), indexing="ij")
    flat = ((t * N + n) * H + j).astype(np.uint32)
    kept = (flat * np.uint32(2654435761) + seed) // np.uint32(16777216) < 205
    mask = np.where(kept, f(256) / f(205), f(0))
    def fwd(W1, w2, m):
        a = np.tanh(X @ W1); h = a * m; return a, h, h @ w2
    mse = lambda W1, w2, m: ((fwd(W1, w2, m)[2] - y) ** 2).sum(dtype=f) / f(N)
    W1, w2 = W1_0, w2_0; hist = [(W1, w2)]
    for s in range(S):
        a, h, o = fwd(W1, w2, mask[s]); do = f(2) * (o - y) / f(N)
        g2 = h.T @ do; g1 = X.T @ ((do[:, None] * w2[None]) * mask[s] * (1 - a * a))
        W1, w2 = W1 - f(0.2) * g1, w2 - f(0.2) * g2; hist.append((W1, w2))
    ones = np.ones((N, H), f)
    return dict(mask=mask, W1=np.array([p[0] for p in hist]), w2=np.array([p[1] for p in hist]),
                eval_loss=np.array([mse(*p, ones) for p in hist]), dropped=np.int32((~kept).sum()))

# 20 784-128-64-10 network on real MNIST rows by Adam with bias correction (tuple-valued update)
def mad_inputs():
    if not MNIST.is_dir():
        pytest.skip("shared/data/mnist is not beside the repository")
    rg = R(920)
    return dict(X=(1 - np.load(MNIST / "samples.npy").reshape(10, 784)).astype(np.float32),
                labels=np.load(MNIST / "labels.npy").astype(np.int32), W1i=(rg.standard_normal((784, 128)) / 28).astype(np.float32),
                W2i=(rg.standard_normal((128, 64)) / 11).astype(np.float32), W3i=(rg.standard_normal((64, 10)) / 8).astype(np.float32))
@case("mnist_adam_deep", inputs=mad_inputs, outputs=["curve", "pred", "W3", "m3", "v3"], tol=(1e-4, 1e-5))
def _(X, labels, W1i, W2i, W3i):
    f = np.float32; B = len(X); rows = np.arange(B)
    def fwd(Ws):
        h1 = np.maximum(X @ Ws[0], 0); h2 = np.maximum(h1 @ Ws[1], 0); z = h2 @ Ws[2]
        p = np.exp(z - z.max(1, keepdims=True)); return h1, h2, z, p / p.sum(1, keepdims=True)
    Ws = [W1i, W2i, W3i]; ms = [np.zeros_like(w) for w in Ws]; vs = [np.zeros_like(w) for w in Ws]
    curve, hist = [], [(W3i, ms[2], vs[2])]
    for t in range(1, 11):
        h1, h2, z, p = fwd(Ws); curve.append(-np.log(p[rows, labels]).mean(dtype=f))
        dz = p.copy(); dz[rows, labels] -= 1; dz /= f(B)
        dh2 = (dz @ Ws[2].T) * (h2 > 0); dh1 = (dh2 @ Ws[1].T) * (h1 > 0)
        for k, g in enumerate((X.T @ dh1, h1.T @ dh2, h2.T @ dz)):
            ms[k] = f(0.9) * ms[k] + f(0.1) * g; vs[k] = f(0.999) * vs[k] + f(0.001) * g * g
            Ws[k] = Ws[k] - f(0.001) * (ms[k] / (1 - f(0.9) ** t)) / (np.sqrt(vs[k] / (1 - f(0.999) ** t)) + f(1e-8))
        hist.append((Ws[2], ms[2], vs[2]))
    _, _, z, p = fwd(Ws); curve.append(-np.log(p[rows, labels]).mean(dtype=f))
    return dict(curve=np.array(curve), pred=z.argmax(1).astype(np.int32), W3=np.array([h[0] for h in hist]),
                m3=np.array([h[1] for h in hist]), v3=np.array([h[2] for h in hist]))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
