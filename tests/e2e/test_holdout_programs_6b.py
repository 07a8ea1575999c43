"""Hold-out programs, sixth round (machine learning, probabilistic models and reinforcement
learning): training loops with RMSprop and Adagrad whose gradients are taken by @ inside each
step, normalisation layers and their gradients, attention variants, a Kalman filter likelihood
differentiated by its noise parameters, mixture densities, contrastive losses, tabular RL, tree
ensembles through index arrays, a hidden semi-Markov model and half-precision conv nets, each
checked against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol;
integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


def log_softmax(z, axis=-1):
    m = z.max(axis, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis, keepdims=True))


def num_grad(f, x, h=1e-6):
    """Central differences of the scalar f at x (float64), the reference for every @ here."""
    x = np.array(x, np.float64); g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x); e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# 1 softmax regression trained by RMSprop
def rmsprop_inputs():
    rg = R(601); N, D = 60, 4
    y = rg.integers(0, 3, N).astype(np.int32)
    X = rg.standard_normal((N, D)) + np.eye(3, D)[y] * 1.5
    return dict(X=X.astype(np.float32), y=y)
@case("rmsprop_softmax", inputs=rmsprop_inputs, tol=(2e-3, 2e-4))
def _(X, y):
    X = X.astype(np.float64); N, D = X.shape; E = 30
    Y = np.eye(3)[y]
    def loss(W):
        return -(log_softmax(X @ W) * Y).sum() / N + 0.01 * (W ** 2).sum()
    def grad(W):
        return X.T @ (np.exp(log_softmax(X @ W)) - Y) / N + 0.02 * W
    W = np.zeros((D, 3)); v = np.zeros((D, 3)); Ws = [W]; vs = [v]; gs = []
    for _ in range(E - 1):
        g = grad(W); gs.append(g)
        v = 0.9 * v + 0.1 * g * g; W = W - 0.05 * g / (np.sqrt(v) + 1e-6); Ws.append(W); vs.append(v)
    gs.append(grad(W))
    pred = (X @ W).argmax(1).astype(np.int32)
    acc = (pred == y).mean()
    return dict(W=np.array(Ws), v=np.array(vs), g=np.array(gs), curve=np.array([loss(w) for w in Ws]),
                logits=X @ W, pred=pred, accuracy=acc, __stdout__=[f"accuracy {acc:.3f}"])


# 2 matrix factorisation by Adagrad, held-out error per epoch
def mf_inputs():
    rg = R(602); Us, It = 9, 7
    Rt = rg.standard_normal((Us, 2)) @ rg.standard_normal((2, It)) + 0.1 * rg.standard_normal((Us, It))
    return dict(Rt=Rt, mask=rg.random((Us, It)) < 0.7, U0=0.3 * rg.standard_normal((Us, 3)),
                V0=0.3 * rg.standard_normal((It, 3)))
@case("mf_adagrad", inputs=mf_inputs, tol=(1e-9, 1e-10))
def _(Rt, mask, U0, V0):
    E, lr, lam = 40, 0.3, 0.05
    def loss(U, V):
        return 0.5 * (((U @ V.T - Rt) * mask) ** 2).sum() + 0.5 * lam * ((U ** 2).sum() + (V ** 2).sum())
    U, V = U0, V0; GU = np.zeros_like(U); GV = np.zeros_like(V); Us, Vs, GUs, GVs, gUs, gVs = [U], [V], [GU], [GV], [], []
    for _ in range(E - 1):
        r = (U @ V.T - Rt) * mask
        gU = r @ V + lam * U; gV = r.T @ U + lam * V; gUs.append(gU); gVs.append(gV)
        GU = GU + gU ** 2; GV = GV + gV ** 2
        U = U - lr * gU / np.sqrt(GU + 1e-8); V = V - lr * gV / np.sqrt(GV + 1e-8)
        Us.append(U); Vs.append(V); GUs.append(GU); GVs.append(GV)
    held = np.array([(((u @ w.T - Rt) ** 2) * ~mask).sum() / (~mask).sum() for u, w in zip(Us, Vs)])
    return dict(U=np.array(Us), V=np.array(Vs), GU=np.array(GUs), GV=np.array(GVs), gU=np.array(gUs), gV=np.array(gVs),
                train=np.array([loss(u, w) for u, w in zip(Us, Vs)]), held=held, best_epoch=np.int32(held.argmin()))


# 3 group norm then RMS norm, gradients by input and all three affine parameters
def gn_inputs():
    rg = R(603); B, C, H, W = 2, 4, 3, 5
    f = lambda *s: rg.standard_normal(s).astype(np.float32)
    return dict(X=f(B, C, H, W) * 2 + 1, gamma=1 + 0.3 * f(C), beta=0.2 * f(C), g=1 + 0.2 * f(C), T=f(B, C, H, W))
@case("groupnorm_rmsnorm_grad", inputs=gn_inputs, tol=(2e-3, 2e-3), vk=True)
def _(X, gamma, beta, g, T):
    X, gamma, beta, g, T = (a.astype(np.float64) for a in (X, gamma, beta, g, T)); B, C, H, W = X.shape
    def fwd(X, gamma, beta, g):
        Xg = X.reshape(B, 2, C // 2, H, W)
        mu = Xg.mean((2, 3, 4), keepdims=True); var = Xg.var((2, 3, 4), keepdims=True)
        Y = ((Xg - mu) / np.sqrt(var + 1e-5)).reshape(B, C, H, W) * gamma[:, None, None] + beta[:, None, None]
        rms = np.sqrt((Y ** 2).mean(1) + 1e-5)
        Z = g[:, None, None] * Y / rms[:, None]
        return (T * Z).sum() + 0.5 * (Z ** 2).sum() / B, mu.reshape(B, 2), var.reshape(B, 2), Y, rms, Z
    loss, mu, var, Y, rms, Z = fwd(X, gamma, beta, g)
    L = lambda **kw: fwd(**{**dict(X=X, gamma=gamma, beta=beta, g=g), **kw})[0]
    return dict(mu=mu, var=var, Y=Y, rms=rms, Z=Z, loss=loss, dX=num_grad(lambda a: L(X=a), X),
                dgamma=num_grad(lambda a: L(gamma=a), gamma), dbeta=num_grad(lambda a: L(beta=a), beta),
                dg=num_grad(lambda a: L(g=a), g))


# 4 multi-query attention with a causal sliding window and a relative-position bias
def mqa_inputs():
    rg = R(604); S = 7
    f = lambda *s: rg.standard_normal(s).astype(np.float32)
    return dict(x=f(S, 8), Wq=0.4 * f(4, 8, 4), Wk=0.4 * f(8, 4), Wv=0.4 * f(8, 4), rel=0.5 * f(3))
@case("mqa_sliding_bias", inputs=mqa_inputs, tol=(1e-3, 1e-4))
def _(x, Wq, Wk, Wv, rel):
    x, Wq, Wk, Wv, rel = (a.astype(np.float64) for a in (x, Wq, Wk, Wv, rel)); S = len(x)
    i, j = np.arange(S)[:, None], np.arange(S)[None, :]
    vis = (j <= i) & (i - j < 3)
    def fwd(Wk, rel):
        q = np.einsum("sd,hde->hse", x, Wq); k = x @ Wk; v = x @ Wv
        sc = np.where(vis, np.einsum("hie,je->hij", q, k) / 2 + rel[np.clip(i - j, 0, 2)], -1e9)
        p = np.exp(sc - sc.max(2, keepdims=True)); p /= p.sum(2, keepdims=True)
        o = np.einsum("hij,je->ihe", p * vis, v)
        return 0.5 * (o ** 2).sum(), q, k, v, sc, p, o
    loss, q, k, v, sc, p, o = fwd(Wk, rel)
    return dict(q=q, k=k, v=v, p=p, o=o, loss=loss, drel=num_grad(lambda a: fwd(Wk, a)[0], rel),
                dWk=num_grad(lambda a: fwd(a, rel)[0], Wk), span=(p * (i - j)).sum(2))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
