"""Hold-out programs, seventh round (probabilistic programming and statistics): Hamiltonian Monte
Carlo with @ of the log density inside the leapfrog recurrence and a counter-based u64 hash for its
randomness, Metropolis-within-Gibbs, variational inference by the reparameterisation trick trained
as a recurrence, a Bayesian linear regression posterior through a Cholesky factor written by hand,
a hierarchical model's MAP by gradient ascent, Kaplan-Meier and Nelson-Aalen with ties, bootstrap
and permutation tests, an ARMA-GARCH likelihood and its gradient, importance sampling with
log-sum-exp weights, a Laplace approximation (a Hessian as @ of a gradient) and EM for a hidden
Markov model in log space, each checked against NumPy computed here. Each case states its tolerance
(`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
M64 = (1 << 64) - 1


def hash64(c, seed):
    """The programs' counter-based u64 hash: a splitmix finaliser with xors as shift-adds."""
    a = ((c + seed) * 0x9E3779B97F4A7C15) & M64
    b = ((a + (a >> 30)) * 0xBF58476D1CE4E5B9) & M64
    d = ((b + (b >> 27)) * 0x94D049BB133111EB) & M64
    return (d + (d >> 31)) & M64


def unif64(c, seed):
    return ((hash64(c, seed) >> 11) + 0.5) / 2.0 ** 53


# 1 HMC with @U inside the leapfrog recurrence
@case("hmc_leapfrog", inputs=lambda: dict(q0=np.array([1.5, -1.0]), Prec=np.array([[1.0, 0.6], [0.6, 1.5]]),
                                          seed=np.uint64(12345)), tol=(1e-9, 1e-11))
def _(q0, Prec, seed):
    T, L, eps, s = 40, 6, 0.25, int(seed)
    U = lambda q: 0.5 * q @ Prec @ q + 0.05 * np.sum(q ** 4)
    gU = lambda q: Prec @ q + 0.2 * q ** 3
    normal = lambda c: np.sqrt(-2 * np.log(unif64(2 * c, s))) * np.cos(2 * np.pi * unif64(2 * c + 1, s))
    qs = [q0]
    for t in range(1, T):
        q = qs[-1]; p = np.array([normal(3 * t), normal(3 * t + 1)])
        x = q.copy(); m = p - 0.5 * eps * gU(q)
        for l in range(1, L + 1):
            x = x + eps * m; m = m - (0.5 * eps if l == L else eps) * gU(x)
        dH = U(x) + 0.5 * m @ m - U(q) - 0.5 * p @ p
        qs.append(x if np.log(unif64(6 * t + 5, s)) < -dH else q)
    qs = np.array(qs)
    acc = int((qs[1:, 0] != qs[:-1, 0]).sum())
    return dict(q=qs, accepted=np.int32(acc), mean=qs[T // 2:].mean(0), energy=np.array([U(v) for v in qs]),
                __stdout__=[f"accepted {acc} of {T - 1}"])

# 2 Metropolis-within-Gibbs on a hierarchical normal model
def mwg_inputs():
    rg = R(702)
    return dict(ybar=np.array([28., 8, -3, 7, -1, 1, 18, 12]), se=np.array([15., 10, 16, 11, 9, 11, 10, 18]),
                init=np.concatenate([np.zeros(8), [5.0, 1.5]]), seed=np.int64(97531))
@case("mwg_hierarchical", inputs=mwg_inputs, tol=(1e-9, 1e-10))
def _(ybar, se, init, seed):
    J = len(ybar); K = J + 2; S = 30
    def logpost(z):
        mu, lt = z[J], z[J + 1]; tau = np.exp(lt)
        return np.sum(-0.5 * ((ybar - z[:J]) / se) ** 2 - 0.5 * ((z[:J] - mu) / tau) ** 2 - lt) - 0.5 * mu * mu / 100 + lt
    st = [int(seed)]
    for _ in range(2 * S * K + 1):
        st.append(st[-1] * 48271 % 2147483647)
    u01 = lambda r: st[r] / 2147483647.0
    width = np.where(np.arange(K) < J, 2.0, 0.8)
    z = np.zeros((S, K, K)); z[0] = init; cur = init.copy(); moves = np.zeros(K, np.int32)
    for t in range(1, S):
        for k in range(K):
            r = 2 * (t * K + k); prop = cur.copy(); prop[k] += width[k] * (u01(r) - 0.5)
            if np.log(u01(r + 1)) < logpost(prop) - logpost(cur):
                cur = prop; moves[k] += 1
            z[t, k] = cur
    chain = z[:, K - 1]
    return dict(z=z.reshape(S * K, K), chain=chain, moves=moves, post_mean=chain[S // 3:].mean(0), lp=np.array([logpost(c) for c in chain]))

# 3 Bayesian linear regression: posterior by a hand Cholesky, evidence and its derivative
def blr_inputs():
    rg = R(703); X = np.column_stack([np.ones(30), rg.standard_normal((30, 3))])
    return dict(X=X, y=X @ np.array([0.5, -1.0, 2.0, 0.3]) + 0.2 * rg.standard_normal(30),
                Xnew=np.column_stack([np.ones(4), rg.standard_normal((4, 3))]), log_alpha=np.float64(0.3))
def blr_np(X, y, Xnew, la, beta=25.0):
    N, D = X.shape; al = np.exp(la); A = beta * X.T @ X + al * np.eye(D); Lc = np.linalg.cholesky(A)
    m = np.linalg.solve(A, beta * X.T @ y)
    ev = 0.5 * D * la + 0.5 * N * np.log(beta) - 0.5 * beta * np.sum((y - X @ m) ** 2) - 0.5 * al * m @ m \
        - np.sum(np.log(np.diag(Lc))) - 0.5 * N * np.log(2 * np.pi)
    return A, Lc, m, ev
@case("blr_evidence", inputs=blr_inputs, tol=(1e-8, 1e-10))
def _(X, y, Xnew, log_alpha):
    A, Lc, m, ev = blr_np(X, y, Xnew, log_alpha); h = 1e-5
    d = (blr_np(X, y, Xnew, log_alpha + h)[3] - blr_np(X, y, Xnew, log_alpha - h)[3]) / (2 * h)
    return dict(A=A, L=Lc, w_mean=m, pred=Xnew @ m, pred_var=1 / 25.0 + np.einsum("mi,ij,mj->m", Xnew, np.linalg.inv(A), Xnew),
                log_evidence=ev, dlogev=d, logdetA=np.linalg.slogdet(A)[1])

# 4 Kaplan-Meier and Nelson-Aalen with ties
def km_inputs():
    rg = R(704); t = np.round(rg.exponential(5.0, 24)).clip(1, None)
    return dict(time=t, status=(rg.random(24) < 0.7).astype(np.int32))
@case("km_nelson_aalen", inputs=km_inputs, tol=(1e-10, 1e-12))
def _(time, status):
    order = np.lexsort((np.arange(len(time)), -status, time)); ts, ev = time[order], status[order]
    tk = np.unique(ts); n = np.array([(time >= t).sum() for t in tk]); dk = np.array([status[time == t].sum() for t in tk])
    S = np.cumprod(1 - dk / n); H = np.cumsum(dk / n)
    gw = np.cumsum(np.where(n > dk, dk / np.maximum(n * (n - dk), 1), 0.0))
    return dict(rank=np.argsort(order).astype(np.int32), order=order.astype(np.int32), ts=ts, t_k=tk, n_risk=n.astype(np.int32),
                d_k=dk.astype(np.int32), S=S, H=H, gw=gw, se_S=S * np.sqrt(gw),
                median=tk[S <= 0.5].min() if (S <= 0.5).any() else 1e30, breslow=np.exp(-H))

# 5 permutation test and percentile bootstrap with a u32 hash
def key32(c, seed):
    M = 0xFFFFFFFF; h = (seed + c * 0x9E3779B9) & M
    x = (h * 0x85EBCA6B) & M; y = ((x + (x >> 13)) * 0xC2B2AE35) & M
    return (y + (y >> 16)) & M
def perm_inputs():
    rg = R(705)
    return dict(a=(rg.standard_normal(9) + 0.8).astype(np.float32), b=rg.standard_normal(12).astype(np.float32), seed=np.uint32(2024))
@case("perm_bootstrap", inputs=perm_inputs, outputs=["observed", "prank", "perm_stat", "extreme", "p_value", "boot", "ci"],
      tol=(1e-5, 1e-5), vk=True)
def _(a, b, seed):
    P, B, na, nb = 200, 160, len(a), len(b); nt = na + nb; s = int(seed); f = np.float32
    pooled = np.concatenate([a, b]); obs = a.mean(dtype=f) - b.mean(dtype=f)
    prank = np.zeros((P, nt), np.int32); st = np.zeros(P, f)
    for p in range(P):
        k = np.array([key32(p * nt + j, s) for j in range(nt)]); prank[p] = np.argsort(np.lexsort((np.arange(nt), k)))
        st[p] = pooled[prank[p] < na].sum(dtype=f) / f(na) - pooled[prank[p] >= na].sum(dtype=f) / f(nb)
    ext = int((np.abs(st) >= np.abs(obs)).sum())
    boot = np.array([a[[key32(100000 + r * nt + i, s) % na for i in range(na)]].sum(dtype=f) / f(na)
                     - b[[key32(100000 + r * nt + na + j, s) % nb for j in range(nb)]].sum(dtype=f) / f(nb) for r in range(B)], f)
    sb = boot[np.lexsort((np.arange(B), boot))]
    return dict(observed=obs, prank=prank, perm_stat=st, extreme=np.int32(ext), p_value=np.float32((ext + 1) / (P + 1)),
                boot=boot, ci=np.array([sb[B // 40], sb[B - 1 - B // 40]]))

# 6 Laplace approximation for Poisson regression: Newton with a Hessian from @ of @
def lap_inputs():
    rg = R(706); X = np.column_stack([np.ones(25), rg.standard_normal((25, 2)) * 0.5])
    return dict(X=X, cnt=rg.poisson(np.exp(X @ np.array([0.7, 0.4, -0.6]))).astype(np.float64))
@case("laplace_poisson", inputs=lap_inputs, tol=(1e-8, 1e-10))
def _(X, cnt):
    from math import lgamma
    lp = lambda w: cnt @ (X @ w) - np.exp(X @ w).sum() - w @ w / 8
    g = lambda w: X.T @ (cnt - np.exp(X @ w)) - w / 4
    H = lambda w: -(X.T * np.exp(X @ w)) @ X - np.eye(3) / 4
    ws = [np.zeros(3)]
    for _ in range(7):
        ws.append(ws[-1] - np.linalg.solve(H(ws[-1]), g(ws[-1])))
    m = ws[-1]; Lc = np.linalg.cholesky(-H(m))
    ev = lp(m) - 1.5 * np.log(8 * np.pi) + 1.5 * np.log(2 * np.pi) - np.log(np.diag(Lc)).sum() - sum(lgamma(c + 1) for c in cnt)
    return dict(w=np.array(ws), mode=m, Hn=-H(m), L=Lc, log_evidence=ev, Linv=np.linalg.inv(Lc).T,
                post_sd=np.sqrt(np.diag(np.linalg.inv(-H(m)))))

# 7 full-rank Gaussian VI with Adam as recurrences
@case("vi_adam_fullrank", inputs=lambda: dict(eps=R(707).standard_normal((16, 2)), lr=np.float64(0.05)), tol=(1e-8, 1e-10))
def _(eps, lr):
    It, b1, b2, E = 120, 0.9, 0.999, len(eps)
    def f_and_g(th):
        c0, c1 = np.exp(th[2]), np.exp(th[4])
        z0 = th[0] + c0 * eps[:, 0]; z1 = th[1] + th[3] * eps[:, 0] + c1 * eps[:, 1]
        r = z1 - 0.3 * z0 ** 2; lp = -0.25 * z0 ** 2 - r ** 2
        dz0 = -0.5 * z0 + 2 * r * 0.6 * z0; dz1 = -2 * r            # d logp / dz
        g = -np.array([dz0.sum(), dz1.sum(), (dz0 * c0 * eps[:, 0]).sum(), (dz1 * eps[:, 0]).sum(), (dz1 * c1 * eps[:, 1]).sum()]) / E
        return -lp.sum() / E - th[2] - th[4], g - np.array([0, 0, 1, 0, 1.0])
    th = np.zeros(5); ths, gs, m1s, m2s = [th], [], [], []
    m1 = m2 = np.zeros(5)
    for t in range(It):
        g = f_and_g(ths[t])[1]; gs.append(g)
        m1 = b1 * m1 + (1 - b1) * g; m2 = b2 * m2 + (1 - b2) * g ** 2; m1s.append(m1); m2s.append(m2)
        if t + 1 < It:
            ths.append(ths[t] - lr * (m1 / (1 - b1 ** (t + 1))) / (np.sqrt(m2 / (1 - b2 ** (t + 1))) + 1e-8))
    th = np.array(ths); loss = np.array([f_and_g(v)[0] for v in th]); C = np.array([[np.exp(th[-1, 2]), 0], [th[-1, 3], np.exp(th[-1, 4])]])
    return dict(th=th, g=np.array(gs), m1=np.array(m1s), m2=np.array(m2s), loss=loss, cov=C @ C.T,
                __stdout__=[f"final negative ELBO {loss[-1]:.4f}"])

# 8 ARMA(1,1)-GJR-GARCH(1,1) likelihood, gradient by @, adaptive gradient ascent
def agm_inputs():
    rg = R(708); T = 80; r = np.zeros(T); e = 0.0; v = 0.5
    for t in range(1, T):
        v = 0.05 + (0.1 + 0.1 * (e < 0)) * e * e + 0.8 * v; ep = np.sqrt(v) * rg.standard_normal()
        r[t] = 0.1 + 0.5 * r[t - 1] + ep + 0.2 * e; e = ep
    return dict(r=r, th0=np.array([0.0, 0.5, 0.0, np.log(0.1), 0.0, 0.0]))
def agm_ll(th, r):
    sg = lambda x: 1 / (1 + np.exp(-x))
    c, phi, tma, om, al, ga = th[0], 0.9 * (2 * sg(th[1]) - 1), th[2], np.exp(th[3]), 0.3 * sg(th[4]), 0.3 * sg(th[5])
    T = len(r); e = np.zeros(T, th.dtype); v = np.zeros(T, th.dtype); e[0] = r[0] - c; v[0] = np.mean(r ** 2)
    for t in range(1, T):
        e[t] = r[t] - c - phi * r[t - 1] - tma * e[t - 1]
        v[t] = om + (al + (ga if e[t - 1].real < 0 else 0)) * e[t - 1] ** 2 + 0.6 * v[t - 1]
    return -0.5 * np.sum(np.log(2 * np.pi) + np.log(v) + e ** 2 / v)
def agm_grad(th, r, h=1e-30):      # complex step: exact to rounding
    return np.array([agm_ll(th + 1j * h * d, r).imag / h for d in np.eye(6)])
@case("arma_garch_mle", inputs=agm_inputs, outputs=["th", "lr", "ll", "g_final"], tol=(1e-8, 1e-9))
def _(r, th0):
    ths, lrs = [th0], [0.002]
    for t in range(1, 25):
        cand = ths[-1] + lrs[-1] * agm_grad(ths[-1], r)
        ok = agm_ll(cand, r).real >= agm_ll(ths[-1], r).real
        ths.append(cand if ok else ths[-1]); lrs.append(lrs[-1] * (1.2 if ok else 0.5))
    th = np.array(ths)
    return dict(th=th, lr=np.array(lrs), ll=np.array([agm_ll(v, r).real for v in th]), g_final=agm_grad(th[-1], r))

# 9 EM for a 2-state Gaussian HMM in log space
def hmm_inputs():
    rg = R(709); T = 60; s = [0]
    for _ in range(T - 1):
        s.append(s[-1] if rg.random() < 0.85 else 1 - s[-1])
    return dict(y=np.array([-1.0, 1.5])[s] + 0.8 * rg.standard_normal(T), init=np.array([0.5, 0.7, 0.7, -0.5, 0.5]))
@case("hmm_em_log", inputs=hmm_inputs, outputs=["P", "loglik", "final_params"], tol=(1e-9, 1e-11))
def _(y, init):
    from scipy.special import logsumexp
    T, sig = len(y), 0.8; P = [np.concatenate([init, [0.0]])]
    for _ in range(1, 12):
        th = P[-1]; lA = np.log(np.array([[th[1], 1 - th[1]], [1 - th[2], th[2]]]))
        lE = -0.5 * ((y[:, None] - th[None, 3:5]) / sig) ** 2 - np.log(sig) - 0.5 * np.log(2 * np.pi)
        fa = np.zeros((T, 2)); bw = np.zeros((T, 2)); fa[0] = np.log([th[0], 1 - th[0]]) + lE[0]
        for t in range(1, T):
            fa[t] = logsumexp(fa[t - 1][:, None] + lA, axis=0) + lE[t]
        for t in range(T - 2, -1, -1):
            bw[t] = logsumexp(lA + lE[t + 1][None] + bw[t + 1][None], axis=1)
        ll = logsumexp(fa[-1]); g = np.exp(fa + bw - ll)
        xi = np.exp(fa[:-1, :, None] + lA[None] + lE[1:, None, :] + bw[1:, None, :] - ll)
        stay = np.array([xi[:, i, i].sum() / xi[:, i].sum() for i in range(2)])
        mu = (g * y[:, None]).sum(0) / g.sum(0)
        P.append(np.array([0.001 + 0.998 * g[0, 0], stay[0], stay[1], mu[0], mu[1], ll]))
    P = np.array(P)
    return dict(P=P, loglik=P[1:, 5], final_params=P[-1, :5])

# 10 importance sampling with a defensive mixture proposal and log-sum-exp weights
def is_inputs():
    rg = R(710); X = rg.standard_normal((40, 2)).astype(np.float32)
    yl = (rg.random(40) < 1 / (1 + np.exp(-(X @ np.array([1.2, -0.8]))))).astype(np.float32)
    return dict(X=X, yl=yl, zs=rg.standard_normal((256, 2)).astype(np.float32), us=rg.random(256).astype(np.float32),
                centre=np.float32([1.0, -0.6]))
@case("importance_lse", inputs=is_inputs, tol=(2e-4, 2e-5), vk=True)
def _(X, yl, zs, us, centre):
    from scipy.special import logsumexp
    X, yl, zs = X.astype(np.float64), yl.astype(np.float64), zs.astype(np.float64); c = centre.astype(np.float64)
    comp = (us >= 0.3).astype(np.int32); sc = np.where(comp == 0, 2.0, 0.5)
    d = c + sc[:, None] * zs
    lnorm = lambda s: -0.5 * (((d - c) / s) ** 2).sum(1) - 2 * np.log(s) - np.log(2 * np.pi)
    lq = np.log(0.3 * np.exp(lnorm(2.0)) + 0.7 * np.exp(lnorm(0.5)))
    lp = -0.5 * (d ** 2).sum(1) / 4 - np.log(8 * np.pi)
    ll = -np.logaddexp(0, -((2 * yl - 1)[None] * (d @ X.T))).sum(1)
    lw = lp + ll - lq; lse = logsumexp(lw); wn = np.exp(lw - lse); m = wn @ d
    return dict(comp=comp, draw=d, log_w=lw, lse=lse, wn=wn, post_mean=m, post_cov=(wn[:, None] * (d - m)).T @ (d - m),
                ess=1 / (wn ** 2).sum(), log_evidence=lse - np.log(len(us)), n_wide=np.int32((comp == 0).sum()))

# 11 hierarchical Poisson MAP by momentum ascent, Laplace at the MAP (LDL^T of -H)
def hml_inputs():
    rg = R(712); b = rg.normal(1.0, 0.7, 6)
    return dict(y=rg.poisson(np.exp(b)[:, None], (6, 5)).astype(np.float64))
@case("hier_map_laplace", inputs=hml_inputs, outputs=["p", "map", "gmax", "Hn", "Dg", "logdet", "rate"], tol=(1e-8, 1e-10))
def _(y):
    G, Rr = y.shape; K = G + 2; ys = y.sum(1)
    def grad(p):
        b, mu, lt = p[:G], p[G], p[G + 1]; tau2 = np.exp(2 * lt); z = b - mu
        return np.concatenate([ys - Rr * np.exp(b) - z / tau2, [z.sum() / tau2 - mu / 10],
                               [(z ** 2).sum() / tau2 - G - (lt + 1)]])
    def hess(p):
        b, mu, lt = p[:G], p[G], p[G + 1]; tau2 = np.exp(2 * lt); z = b - mu; H = np.zeros((K, K))
        H[np.arange(G), np.arange(G)] = -Rr * np.exp(b) - 1 / tau2
        H[:G, G] = H[G, :G] = 1 / tau2; H[:G, G + 1] = H[G + 1, :G] = 2 * z / tau2
        H[G, G] = -G / tau2 - 0.1; H[G, G + 1] = H[G + 1, G] = -2 * z.sum() / tau2; H[G + 1, G + 1] = -2 * (z ** 2).sum() / tau2 - 1
        return H
    p = np.zeros(K); v = np.zeros(K); ps = [p]
    for _ in range(1, 150):
        v = 0.8 * v + 0.01 * grad(p); p = p + v; ps.append(p)
    Hn = -hess(p); Lc = np.linalg.cholesky(Hn)
    return dict(p=np.array(ps), map=p, gmax=np.abs(grad(p)).max(), Hn=Hn, Dg=np.diag(Lc) ** 2, logdet=np.linalg.slogdet(Hn)[1],
                rate=np.exp(p[:G]), __stdout__=[f"MAP mu {p[G]:.3f}, tau {np.exp(p[G + 1]):.3f}"])

# 12 Cox model with Breslow ties: Newton with score and information by @
def cox_inputs():
    rg = R(713); Z = np.column_stack([rg.standard_normal(30), (rg.random(30) < 0.5).astype(float)])
    t = np.ceil(rg.exponential(1 / np.exp(Z @ np.array([0.6, -0.5]))) * 4)
    return dict(time=t, status=(rg.random(30) < 0.75).astype(np.int32), Z=Z)
@case("cox_breslow_newton", inputs=cox_inputs, tol=(1e-9, 1e-11))
def _(time, status, Z):
    R_ = (time[None, :] >= time[:, None]).astype(float)       # R_[i, j]: j at risk at time i
    ev = status == 1
    def pll(b):
        e = Z @ b; return np.sum((e - np.log(R_ @ np.exp(e)))[ev])
    def score_info(b):
        w = np.exp(Z @ b); g = np.zeros(2); I = np.zeros((2, 2))
        for i in np.flatnonzero(ev):
            s0 = R_[i] @ w; s1 = (R_[i] * w) @ Z; s2 = (Z.T * (R_[i] * w)) @ Z
            g += Z[i] - s1 / s0; I += s2 / s0 - np.outer(s1, s1) / s0 ** 2
        return g, I
    bs = [np.zeros(2)]
    for _ in range(6):
        g, I = score_info(bs[-1]); bs.append(bs[-1] + np.linalg.solve(I, g))
    b = bs[-1]; I = score_info(b)[1]; se = np.sqrt(np.diag(np.linalg.inv(I))); risk = np.exp(Z @ b)
    H0 = np.array([sum(1 / (R_[j] @ risk) for j in np.flatnonzero(ev) if time[j] <= time[i]) for i in range(len(time))])
    return dict(beta=np.array(bs), bhat=b, I_hat=I, se=se, wald=b / se, risk=risk, H0=H0, loglik=np.array([pll(np.zeros(2)), pll(b)]))

# 13 Gibbs for Bayesian linear regression with a Marsaglia-Tsang gamma step
def gblr_inputs():
    rg = R(714); X = np.column_stack([np.ones(20), rg.standard_normal((20, 2))])
    return dict(X=X, y=X @ np.array([1.0, -0.5, 0.8]) + 0.3 * rg.standard_normal(20), seed=np.uint64(777))
@case("gibbs_blr_gamma", inputs=gblr_inputs, tol=(1e-9, 1e-10))
def _(X, y, seed):
    s = int(seed); S, C = 50, 8; N, D = X.shape
    u = lambda c: unif64(c, s); nrm = lambda c: np.sqrt(-2 * np.log(u(2 * c))) * np.cos(2 * np.pi * u(2 * c + 1))
    taus, ws = [1.0], []
    for t in range(S):
        if t:
            a, rate = 1 + 0.5 * N, 1 + 0.5 * np.sum((y - X @ ws[-1]) ** 2)
            dd = a - 1 / 3; cc = 1 / np.sqrt(9 * dd); first = C
            for k in range(C):
                x = nrm(t * 64 + 48 + k); v = (1 + cc * x) ** 3
                if v > 0 and np.log(u(t * 64 + 32 + 2 * k)) < 0.5 * x * x + dd - dd * v + dd * np.log(v):
                    first = k; break
            taus.append(dd * (1 + cc * nrm(t * 64 + 48 + first)) ** 3 / rate)
        tau = taus[-1]; A = tau * X.T @ X + np.eye(D); Lc = np.linalg.cholesky(A)
        f = np.linalg.solve(Lc, tau * X.T @ y); z = np.array([nrm(t * 64 + r) for r in range(D)])
        ws.append(np.linalg.solve(Lc.T, f + z))
    w, tau = np.array(ws), np.array(taus)
    return dict(tau=tau, w=w, w_mean=w[S // 5:].mean(0), sigma_mean=np.mean(1 / np.sqrt(tau[S // 5:])))

# 14 slice sampling with stepping out and shrinkage, several chains, a closure for the density
@case("slice_sampler", sized=True, inputs=lambda: dict(x0=np.array([-2.0, 0.0, 1.0, 4.0]), mix=np.array([-1.0, 2.5, 0.4])),
      tol=(1e-10, 1e-12))
def _(x0, mix):
    m1, m2, p1 = (float(v) for v in mix); C = len(x0); T, M, K, w = 40, 4, 12, 1.5; U = 4 + K
    f = lambda v: np.log(p1 * np.exp(-0.5 * (v - m1) ** 2) + (1 - p1) * np.exp(-0.5 * ((v - m2) / 0.5) ** 2) / 0.5)
    st = np.zeros((T * U + 1, C), np.int64); st[0] = 1000 + 7919 * np.arange(C)
    for r in range(1, T * U + 1):
        st[r] = st[r - 1] * 48271 % 2147483647
    xs = np.zeros((T, C)); xs[0] = x0
    for t in range(1, T):
        for c in range(C):
            x = xs[t - 1, c]; u = st[(t - 1) * U + 1:(t - 1) * U + 1 + U, c] / 2147483647.0
            y = f(x) + np.log(u[0]); lo = x - w * u[1]; hi = lo + w
            for _ in range(M):
                lo = lo - w if f(lo) > y else lo
            for _ in range(M):
                hi = hi + w if f(hi) > y else hi
            new = x
            for k in range(K):
                p = lo + u[2 + k] * (hi - lo)
                if f(p) > y:
                    new = p; break
                lo, hi = (p, hi) if p < x else (lo, p)
            xs[t, c] = new
    return dict(x=xs, moved=(xs[1:] != xs[:-1]).sum(0).astype(np.int32), summary=np.array([xs.mean(), xs.max() - xs.min()]),
                upper_share=(xs[T // 2:] > 0.5 * (m1 + m2)).mean())

# 15 EM for Poisson mixtures over batch axes `..b`, log space, labels by a match
def pm_inputs():
    rg = R(715); z = rg.random((2, 3, 40)) < 0.4
    return dict(cnt=np.where(z, rg.poisson(2.0, (2, 3, 40)), rg.poisson(9.0, (2, 3, 40))).astype(np.int32))
@case("poisson_mix_em", inputs=pm_inputs, outputs=["mean_cnt", "par", "resp", "loglik", "label"], tol=(1e-9, 1e-11))
def _(cnt):
    from math import lgamma
    from scipy.special import logsumexp
    It = 15; c = cnt.astype(np.float64); n = cnt.shape[-1]; lf = np.vectorize(lambda v: lgamma(v + 1))(c)
    m = c.mean(-1); par = [np.stack([np.full(m.shape, 0.5), 0.5 * m, 1.5 * m], -1)]; resps = []; lls = []
    for e in range(It):
        p = par[-1]
        l0 = np.log(p[..., 0:1]) + c * np.log(p[..., 1:2]) - p[..., 1:2] - lf
        l1 = np.log(1 - p[..., 0:1]) + c * np.log(p[..., 2:3]) - p[..., 2:3] - lf
        tot = logsumexp(np.stack([l0, l1]), 0); r = np.exp(l0 - tot); resps.append(r); lls.append(tot.sum(-1))
        if e + 1 < It:
            s0 = r.sum(-1)
            par.append(np.stack([s0 / n, (r * c).sum(-1) / s0, ((1 - r) * c).sum(-1) / (n - s0)], -1))
    r = resps[-1]
    return dict(mean_cnt=m, par=np.array(par), resp=np.array(resps), loglik=np.array(lls),
                label=np.where(r > 0.9, 0, np.where(r < 0.1, 1, -1)).astype(np.int32))

# 16 IWAE bound, softplus with a custom derivative rule, trained by gradient ascent
@case("iwae_custom_lse", inputs=lambda: dict(x=R(716).normal(0, np.sqrt(1.25), 20), eps=R(717).standard_normal((20, 8))),
      tol=(1e-9, 1e-11))
def _(x, eps):
    from scipy.special import expit, logsumexp, softmax
    N, K = eps.shape; It, lr = 60, 0.05
    def bound_grad(th):
        sg = np.logaddexp(0, th[2]); z = th[0] * x[:, None] + th[1] + sg * eps
        lw = -0.5 * z ** 2 - 0.5 * ((x[:, None] - z) / 0.5) ** 2 - np.log(0.5) - np.log(2 * np.pi) + 0.5 * eps ** 2 + np.log(sg) + 0.5 * np.log(2 * np.pi)
        w = softmax(lw, 1); dz = -z + 4 * (x[:, None] - z)
        g = np.array([(w * dz * x[:, None]).sum(), (w * dz).sum(), (w * (dz * eps + 1 / sg)).sum() * expit(th[2])]) / N
        return (logsumexp(lw, 1) - np.log(K)).mean(), g
    ths = [np.zeros(3)]
    for _ in range(1, It):
        ths.append(ths[-1] + lr * bound_grad(ths[-1])[1])
    tr = np.array([bound_grad(t)[0] for t in ths]); ex = np.mean(-0.5 * x ** 2 / 1.25 - 0.5 * np.log(2 * np.pi * 1.25))
    return dict(th=np.array(ths), trace=tr, exact=ex, __stdout__=[f"bound {tr[-1]:.4f} vs exact {ex:.4f}"])

@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
