"""Hold-out programs, ninth round (training loops in the language): whole optimisers written as
recurrences over epochs with `@loss / @W` inside the step: logistic regression with L2, a step
schedule and Polyak/EMA averaging, early stopping by a running minimum, ... each checked against
NumPy computed here (gradients by hand or by complex steps). Each case states its tolerance
(`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
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
@case("early_stop_linreg", inputs=es_inputs, tol=(1e-4, 1e-5))
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


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
