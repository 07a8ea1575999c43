"""Hold-out programs, sixth round (machine learning, probabilistic models and reinforcement
learning): training loops with RMSprop and Adagrad whose gradients are taken by @ inside each
step, normalisation layers and their gradients, attention variants, a Kalman filter likelihood
differentiated by its noise parameters, mixture densities, contrastive losses, tabular RL, tree
ensembles through index arrays, a hidden semi-Markov model and half-precision conv nets, each
checked against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol;
integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import ml_dtypes
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


def cs_grad(f, x):
    """The gradient of the real scalar f at x by complex steps: exact to rounding, for references
    to long recurrences where differences would lose digits."""
    x = np.array(x, np.float64); g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape, complex); e[i] = 1e-30j
        g[i] = f(x + e).imag / 1e-30
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


# 5 local-level Kalman likelihood, ascended by its gradient in (log q, log r)
def kalman_inputs():
    rg = R(605); T = 60
    mu = np.cumsum(rg.normal(0, np.sqrt(0.3), T))
    return dict(y=mu + rg.normal(0, np.sqrt(1.5), T))
@case("kalman_loglik_grad", inputs=kalman_inputs, tol=(1e-8, 1e-9))
def _(y):
    T = len(y)
    def loglik(th, filt=False):
        q, r = np.exp(th[0]), np.exp(th[1]); m, P, ll, ms = y[0] + 0j * q, r, 0, [y[0]]
        for t in range(1, T):
            Pp = P + q; S = Pp + r; v = y[t] - m
            m = m + Pp / S * v; P = Pp * r / S; ll = ll - 0.5 * (np.log(2 * np.pi * S) + v * v / S)
        return ll
    th = [np.zeros(2)]
    for _ in range(24):
        th.append(th[-1] + 0.02 * cs_grad(loglik, th[-1]))
    th = np.array(th); ll = np.array([loglik(a).real for a in th]); q, r = np.exp(th[-1])
    return dict(th=th, ll=ll, grad_end=cs_grad(loglik, th[-1]), q_hat=q, r_hat=r, __stdout__=[f"q = {q:.4f}, r = {r:.4f}"])


# 6 mixture density network, three SGD steps on its negative log-likelihood
def mdn_inputs():
    rg = R(606); N = 40
    x = rg.uniform(-1, 1, N)
    t = np.where(rg.random(N) < 0.5, np.sin(3 * x), -x) + 0.1 * rg.standard_normal(N)
    return dict(x=x.astype(np.float32), t=t.astype(np.float32), P0=rg.standard_normal((2, 8)).astype(np.float32),
                Q0=0.4 * rg.standard_normal((3, 3, 8)).astype(np.float32))
@case("mdn_gaussian", inputs=mdn_inputs, tol=(2e-4, 2e-5))
def _(x, t, P0, Q0):
    x, t = x.astype(np.float64), t.astype(np.float64)
    def nll(P, Q):
        h = np.tanh(np.outer(x, P[0]) + P[1]); head = np.einsum("akj,nj->nak", Q, h)
        lg = head[:, 0]; lp = lg - np.log(np.exp(lg).sum(1, keepdims=True))
        z = (t[:, None] - head[:, 1]) / np.exp(head[:, 2])
        comp = lp - 0.5 * z * z - head[:, 2] - 0.9189385
        best = comp.real.max(1, keepdims=True)
        return -(best[:, 0] + np.log(np.exp(comp - best).sum(1))).sum() / len(x)
    P, Q = [P0.astype(np.float64)], [Q0.astype(np.float64)]
    for _ in range(3):
        gP = cs_grad(lambda a: nll(a, Q[-1]), P[-1]); gQ = cs_grad(lambda a: nll(P[-1], a), Q[-1])
        P.append(P[-1] - 0.1 * gP); Q.append(Q[-1] - 0.1 * gQ)
    return dict(P=np.array(P), Q=np.array(Q), curve=np.array([nll(a, b) for a, b in zip(P, Q)]))


# 7 value iteration on a grid world with slips, greedy policy and its rollout
def grid_inputs():
    wall = np.zeros((5, 6), bool); wall[1, 1:4] = True; wall[3, 2:6] = True; wall[3, 5] = False
    reward = np.full((5, 6), -0.1, np.float32); reward[2, 4] = -1.0
    return dict(wall=wall, reward=reward)
@case("gridworld_value_iter", inputs=grid_inputs, tol=(1e-5, 1e-5), vk=True)
def _(wall, reward):
    S, goal = 30, 29; moves = [(-1, 0), (0, 1), (1, 0), (0, -1)]
    def step(s, a):
        r, c = s // 6 + moves[a][0], s % 6 + moves[a][1]
        return s if not (0 <= r < 5 and 0 <= c < 6) or wall[r, c] else r * 6 + c
    nxt = np.array([[step(s, a) for a in range(4)] for s in range(S)], np.int32)
    V = [np.zeros(S, np.float32)]; Qs = [np.zeros((S, 4), np.float32)]
    rw = reward.ravel(); g, sl = np.float32(0.9), np.float32(0.1)
    for _ in range(59):
        v = V[-1]
        Q = rw[:, None] + g * ((np.float32(1) - 2 * sl) * v[nxt] + sl * v[nxt[:, [1, 2, 3, 0]]] + sl * v[nxt[:, [3, 0, 1, 2]]])
        Q[goal] = 0; Qs.append(Q); v = Q.max(1); v[goal] = 10; V.append(v)
    V = np.array(V); pol = Qs[-1].argmax(1).astype(np.int32)
    path = [0]
    for _ in range(19):
        path.append(goal if path[-1] == goal else nxt[path[-1], pol[path[-1]]])
    path = np.int32(path)
    return dict(nxt=nxt, V=V, Q=np.array(Qs), policy=pol, path=path, reached=np.bool_((path == goal).any()),
                residual=np.abs(V[59] - V[58]).max())


# 8 Q-learning and SARSA replayed over a fixed episode
def qlearn_inputs():
    rg = R(608); T = 80
    st = rg.integers(0, 6, T).astype(np.int32); at = rg.integers(0, 3, T).astype(np.int32)
    return dict(st=st, at=at, rw=np.where(at == st % 3, 1.0, -0.2) + 0.1 * rg.standard_normal(T))
@case("q_learning_episode", inputs=qlearn_inputs, tol=(1e-10, 1e-12))
def _(st, at, rw):
    T = len(st); Q = np.zeros((T, 6, 3)); Sa = np.zeros((T, 6, 3)); td = np.zeros(T)
    for t in range(1, T):
        s, a = st[t - 1], at[t - 1]
        td[t] = rw[t - 1] + 0.95 * Q[t - 1, st[t]].max() - Q[t - 1, s, a]
        Q[t] = Q[t - 1]; Q[t, s, a] += 0.2 * td[t]
        Sa[t] = Sa[t - 1]; Sa[t, s, a] += 0.2 * (rw[t - 1] + 0.95 * Sa[t - 1, st[t], at[t]] - Sa[t - 1, s, a])
    gq, gs = Q[-1].argmax(1).astype(np.int32), Sa[-1].argmax(1).astype(np.int32)
    visits = np.zeros((6, 3), np.int32); np.add.at(visits, (st[:-1], at[:-1]), 1)
    return dict(Q=Q, td=td, Sa=Sa, greedy_q=gq, greedy_sarsa=gs, agree=np.int32((gq == gs).sum()), visits=visits,
                mean_abs_td=np.abs(td[1:]).mean())


# 9 exact softmax policy gradient with an entropy bonus, and REINFORCE on fixed draws
def pg_inputs():
    rg = R(609); C, A, M = 3, 4, 200
    Rm = rg.uniform(0, 1, (C, A)).astype(np.float32); pc = np.float32([0.5, 0.3, 0.2])
    ctx = rg.choice(C, M, p=pc).astype(np.int32); act = rg.integers(0, A, M).astype(np.int32)
    return dict(Rm=Rm, pc=pc, ctx=ctx, act=act, rew=(Rm[ctx, act] + 0.1 * rg.standard_normal(M)).astype(np.float32))
@case("softmax_policy_gradient", inputs=pg_inputs, tol=(1e-4, 1e-5))
def _(Rm, pc, ctx, act, rew):
    Rm, pc, rew = Rm.astype(np.float64), pc.astype(np.float64), rew.astype(np.float64); C, A = Rm.shape; M = len(ctx)
    pol = lambda th: np.exp(log_softmax(th))
    def grad(th):      # d/dtheta of sum_c pc sum_a p (R - beta log p)
        p = pol(th); f = Rm - 0.05 * np.log(p) - 0.05
        return pc[:, None] * p * (f - (p * f).sum(1, keepdims=True))
    J = lambda th: (pc * (pol(th) * (Rm - 0.05 * np.log(pol(th)))).sum(1)).sum()
    th = [np.zeros((C, A))]
    for _ in range(39):
        th.append(th[-1] + 0.5 * grad(th[-1]))
    p0 = pol(th[0]); b = rew.mean()
    rf = np.zeros((C, A))
    for m in range(M):
        rf[ctx[m]] += (rew[m] - b) * ((np.arange(A) == act[m]) - p0[ctx[m]])
    pf = pol(th[-1])
    return dict(theta=np.array(th), J=np.array([J(a) for a in th]), pi_final=pf, p0=p0, baseline=b, reinforce=rf,
                reinforce_mean=rf / M, g0=grad(th[0]), best_action=pf.argmax(1).astype(np.int32))


# 10 gradient-boosted trees over binned features, walked through index arrays
def gbdt_inputs():
    rg = R(610); N, F, Tr = 50, 5, 6
    X = rg.standard_normal((N, F)).astype(np.float32)
    edges = np.sort(rg.standard_normal((F, 7)), 1).astype(np.float32)
    return dict(X=X, edges=edges, feat=rg.integers(0, F, (Tr, 7)).astype(np.int16),
                cut=rg.integers(0, 8, (Tr, 7)).astype(np.uint8), leaf=rg.standard_normal((Tr, 8)).astype(np.float32))
@case("gbdt_binned", inputs=gbdt_inputs, tol=(1e-5, 1e-6))
def _(X, edges, feat, cut, leaf):
    N, F = X.shape; Tr = len(feat)
    b = (X[:, :, None] > edges[None]).sum(2).astype(np.uint8)
    node = np.zeros((4, N, Tr), np.int32)
    for d in range(1, 4):
        k = node[d - 1]; f = feat[np.arange(Tr)[None], k].astype(np.int64)
        node[d] = 2 * k + np.where(b[np.arange(N)[:, None], f] > cut[np.arange(Tr)[None], k], 2, 1)
    reached = node[3] - 7
    margin = np.float32(-0.2) + np.float32(0.3) * leaf[np.arange(Tr)[None], reached].sum(1)
    prob = 1 / (1 + np.exp(-margin.astype(np.float64)))
    label = (prob > 0.5).astype(np.uint8)
    return dict(bin=b, node=node, reached=reached, margin=margin, prob=prob, label=label,
                used=np.bincount(feat.ravel(), minlength=F).astype(np.int32), path0=node[:, 0, 0], positives=np.int32(label.sum()))


# 11 hidden semi-Markov forward pass in log space
def hsmm_inputs():
    rg = R(611); S, Dm, T = 3, 4, 30
    A = rg.random((S, S)) * (1 - np.eye(S)); A /= A.sum(1, keepdims=True)
    dur = rg.random((S, Dm)) + 0.1; dur /= dur.sum(1, keepdims=True)
    with np.errstate(divide="ignore"):
        logA = np.where(A > 0, np.log(np.where(A > 0, A, 1)), -1e30)
    return dict(y=rg.normal(0, 1, T) + np.repeat(rg.integers(0, 3, T // 5), 5), mu=np.array([0.0, 1.0, 2.0]),
                sd=np.array([0.6, 0.5, 0.7]), logA=logA, logpi=np.log(np.array([0.5, 0.3, 0.2])), logdur=np.log(dur))
@case("hsmm_forward", inputs=hsmm_inputs, tol=(1e-9, 1e-9))
def _(y, mu, sd, logA, logpi, logdur):
    T, S, Dm = len(y), len(mu), logdur.shape[1]
    le = -0.5 * ((y[:, None] - mu) / sd) ** 2 - np.log(sd) - 0.9189385332046727
    cum = np.cumsum(le, 0)
    seg = lambda s, a, b: cum[b, s] - (cum[a - 1, s] if a > 0 else 0)
    lse = lambda v: v.max() + np.log(np.exp(v - v.max()).sum())
    alpha = np.zeros((T, S)); into = np.zeros((T, S))
    for t in range(T):
        for s in range(S):
            term = [-1e30 if d > t else logpi[s] + logdur[s, d] + seg(s, 0, t) if d == t
                    else into[t - d - 1, s] + logdur[s, d] + seg(s, t - d, t) for d in range(Dm)]
            alpha[t, s] = lse(np.array(term))
        for s in range(S):
            into[t, s] = lse(alpha[t] + logA[:, s])
    ll = lse(alpha[-1])
    last = [[logdur[s, d] + seg(s, T - 1 - d, T - 1) for d in range(Dm)] for s in range(S)]
    return dict(le=le, cum=cum, into=into, alpha=alpha, loglik=ll, last_state=np.exp(alpha[-1] - ll),
                last_dur=np.int32([1 + np.argmax(r) for r in last]))


# 12 mixed-precision conv net: bf16 images and filters, f32 accumulation and master weights
def bf16_inputs():
    rg = R(612)
    return dict(X=rg.standard_normal((4, 2, 7, 8)).astype(ml_dtypes.bfloat16), labels=np.int32([0, 1, 1, 0]),
                K0=(0.3 * rg.standard_normal((4, 2, 3, 3))).astype(np.float32), V0=rg.standard_normal((4, 2)).astype(np.float32))
@case("bf16_conv_train", inputs=bf16_inputs, tol=(2e-4, 2e-5))
def _(X, labels, K0, V0):
    X = X.astype(np.float64); B, C, H, W = X.shape; Y = np.eye(2)[labels]
    patches = np.stack([X[:, :, i:i + H - 2, j:j + W - 2] for i in range(3) for j in range(3)], 2)   # b c (ij) h w
    def forward(K, V):
        Kh = K.astype(ml_dtypes.bfloat16).astype(np.float64).reshape(4, C, 9)
        conv = np.einsum("bcphw,ocp->bohw", patches, Kh)
        pooled = np.maximum(conv, 0).mean((2, 3))
        return conv, pooled, pooled @ V
    def loss_grad(K, V):     # the filters' gradient is the bf16 copy's, rounded to bf16 once
        conv, pooled, z = forward(K, V)
        p = np.exp(log_softmax(z)); dz = (p - Y) / B
        dconv = (dz @ V.T)[:, :, None, None] * (conv > 0) / ((H - 2) * (W - 2))
        dK = np.einsum("bohw,bcphw->ocp", dconv, patches).reshape(K.shape).astype(np.float32)
        dK = dK.astype(ml_dtypes.bfloat16).astype(np.float64)
        return -(log_softmax(z) * Y).sum() / B, dK, pooled.T @ dz
    K, V = [K0], [V0]
    for _ in range(5):
        _, dK, dV = loss_grad(K[-1], V[-1])
        K.append((K[-1] - np.float32(0.2) * dK).astype(np.float32)); V.append((V[-1] - np.float32(0.2) * dV).astype(np.float32))
    return dict(K=np.array(K), V=np.array(V), curve=np.array([loss_grad(a, b)[0] for a, b in zip(K, V)]),
                logits_bf=forward(K[-1], V[-1])[2].astype(ml_dtypes.bfloat16))


# 13 batch-hard triplet and supervised contrastive losses, their gradient by the projection
def contrast_inputs():
    rg = R(613); N = 12
    lab = np.repeat(np.arange(4), 3).astype(np.int32)
    X = (rg.standard_normal((4, 6))[lab] + 0.7 * rg.standard_normal((N, 6))).astype(np.float32)
    return dict(X=X, lab=lab, W=(0.5 * rg.standard_normal((6, 4))).astype(np.float32))
@case("triplet_supcon", inputs=contrast_inputs, tol=(2e-4, 2e-5), vk=True)
def _(X, lab, W):
    X = X.astype(np.float64); N = len(X)
    same = lab[:, None] == lab[None, :]; off = ~np.eye(N, dtype=bool)
    def embed(W):
        z = X @ W
        return z / np.sqrt((z * z).sum(1, keepdims=True) + 1e-8)
    def triplet(W):
        e = embed(W); dist = ((e[:, None] - e[None]) ** 2).sum(2)
        hp = np.array([dist[a][same[a] & off[a]][np.argmax(dist[a][same[a] & off[a]].real)] for a in range(N)])
        hn = np.array([dist[a][~same[a]][np.argmin(dist[a][~same[a]].real)] for a in range(N)])
        v = hp - hn + 0.3
        return np.where(v.real > 0, v, 0).sum() / N
    def supcon(W):
        e = embed(W); s = e @ e.T / 0.5
        m = np.array([s[a][off[a]].real.max() for a in range(N)])
        lse = m + np.log(np.array([np.exp(s[a][off[a]] - m[a]).sum() for a in range(N)]))
        per = np.array([-(s[a][same[a] & off[a]] - lse[a]).sum() / (same[a] & off[a]).sum() for a in range(N)])
        return per.sum() / N
    W = W.astype(np.float64)
    g = cs_grad(lambda w: triplet(w) + supcon(w), W); W1 = W - 0.1 * g
    return dict(t_loss=triplet(W), c_loss=supcon(W), gW=g, W1=W1, after=triplet(W1) + supcon(W1))


# 14 a pre-norm SwiGLU block over rest indices, its gradients and one SGD step
def swiglu_inputs():
    rg = R(614); f = lambda *s: rg.standard_normal(s).astype(np.float32)
    return dict(x=f(2, 5, 8), target=f(2, 5, 8), gain=1 + 0.1 * f(8), Wg=0.3 * f(8, 12), Wu=0.3 * f(8, 12), Wd=0.3 * f(12, 8))
@case("swiglu_rmsnorm_rest", inputs=swiglu_inputs, tol=(5e-4, 5e-5))
def _(x, target, gain, Wg, Wu, Wd):
    x, target = x.astype(np.float64), target.astype(np.float64)
    def loss(gain, Wg, Wu, Wd):
        h = x * gain / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
        a = h @ Wg; y = x + (a / (1 + np.exp(-a)) * (h @ Wu)) @ Wd
        return ((y - target) ** 2).sum() / 10
    P = [p.astype(np.float64) for p in (gain, Wg, Wu, Wd)]
    g = [cs_grad(lambda v: loss(*P[:k], v, *P[k + 1:]), P[k]) for k in range(4)]
    L0, L1 = loss(*P), loss(*[p - 0.05 * d for p, d in zip(P, g)])
    return dict(L0=L0, dgain=g[0], dWg=g[1], dWu=g[2], dWd=g[3], L1=L1, improved=np.bool_(L1 < L0))


# 15 three optimisers side by side in one state recurrence, chosen by a match
def optim_inputs():
    rg = R(615); X = rg.standard_normal((40, 3))
    return dict(X=X, yb=(X @ [1.0, -2.0, 0.5] + 0.3 * rg.standard_normal(40) > 0).astype(np.float64))
@case("optimizer_match", inputs=optim_inputs, tol=(1e-9, 1e-11))
def _(X, yb):
    N, E = len(X), 50
    loss = lambda w: (np.log1p(np.exp(X @ w)) - yb * (X @ w)).sum() / N + 0.005 * (w @ w)
    grad = lambda w: X.T @ (1 / (1 + np.exp(-(X @ w))) - yb) / N + 0.01 * w
    st = np.zeros((E, 3, 2, 3))
    for e in range(1, E):
        for o, lr in enumerate((0.5, 0.4, 0.05)):
            w, a = st[e - 1, o]; g = grad(w)
            if o == 0:
                m = 0.9 * a + g; st[e, o] = w - lr * m, m
            else:
                a = a + g * g if o == 1 else 0.9 * a + 0.1 * g * g
                st[e, o] = w - lr * g / (np.sqrt(a) + 1e-8), a
    fl = np.array([loss(st[-1, o, 0]) for o in range(3)])
    return dict(st=st, final_loss=fl, best=np.int32(fl.argmin()), order=np.int32([(fl < f).sum() for f in fl]))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
