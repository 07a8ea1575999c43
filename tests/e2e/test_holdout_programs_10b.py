"""Hold-out programs, tenth round (learning and optimization loops whose steps compute tensors):
k-means rounds as blocks with assignment tensors, EM for a diagonal Gaussian mixture, logistic
regression with an inner backtracking line search, Newton-CG, alternating least squares with small
solves per step, Oja/Sanger PCA, policy iteration with an inner evaluation loop, label propagation,
projected gradient with an inner bisection, Pegasos, a neural ODE trained through RK4 and a Sinkhorn
barycenter, each checked against NumPy computed here. Every case is `sized` (also built for its
inputs' sizes, the form that runs a step's tensors in one dispatch). Each case states its tolerance
(`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32


# 1 Lloyd's k-means, each round a block computing the assignments, counts and sums
def km_inputs(N=40, D=3, K=4, seed=1001):
    rg = R(seed); cen = rg.standard_normal((K, D)) * 3
    X = cen[rg.integers(0, K, N)] + rg.standard_normal((N, D)) * 0.7
    return dict(X=X, C0=X[:K].copy())
def km_np(X, C):
    d = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    return d.argmin(1), d.min(1).sum()
@case("kmeans_block_step", sized=True, inputs=km_inputs, outputs=["C", "inertia", "labels", "sizes", "centres"], tol=(1e-10, 1e-12))
def _(X, C0):
    K = len(C0); Cs = [C0]
    for r in range(7):
        lab, _ = km_np(X, Cs[-1]); C = Cs[-1].copy()
        for k in range(K):
            if (lab == k).any(): C[k] = X[lab == k].mean(0)
        Cs.append(C)
    inertia = np.array([km_np(X, C)[1] for C in Cs]); lab = km_np(X, Cs[-1])[0]
    return dict(C=np.array(Cs), inertia=inertia, labels=lab.astype(np.int32), sizes=np.bincount(lab, minlength=K).astype(np.int32),
                centres=Cs[-1], __stdout__=["inertia"])


# 2 EM for a diagonal Gaussian mixture, the responsibilities a tensor of each step
def gmm_inputs(N=36, D=2, K=3, seed=1002):
    rg = R(seed); cen = np.array([[-3.0, 0.0], [2.0, 2.0], [1.0, -3.0]])
    X = cen[rg.integers(0, K, N)] + rg.standard_normal((N, D)) * rg.uniform(0.5, 1.2, D)
    return dict(X=X, mu0=X[[0, 1, 2]].copy())
def gmm_resp(X, w, mu, var):
    lp = np.log(w)[None] - 0.5 * (np.log(2 * np.pi * var)[None] + (X[:, None] - mu[None]) ** 2 / var[None]).sum(-1)
    m = lp.max(1); s = np.exp(lp - m[:, None]).sum(1)
    return np.exp(lp - m[:, None]) / s[:, None], (m + np.log(s)).sum()
@case("gmm_diag_em", sized=True, inputs=gmm_inputs, outputs=["w", "mu", "var", "loglik", "rises", "hard"], tol=(1e-9, 1e-11))
def _(X, mu0):
    N, D = X.shape; K = len(mu0); w, mu, var = [np.full(K, 1 / K)], [mu0], [np.ones((K, D))]
    for t in range(9):
        g, _ = gmm_resp(X, w[-1], mu[-1], var[-1]); nk = g.sum(0)
        m = g.T @ X / nk[:, None]
        v = np.maximum((g[:, :, None] * (X[:, None] - m[None]) ** 2).sum(0) / nk[:, None], 1e-3)
        w.append(nk / N); mu.append(m); var.append(v)
    ll = np.array([gmm_resp(X, a, b, c)[1] for a, b, c in zip(w, mu, var)])
    G = gmm_resp(X, w[-1], mu[-1], var[-1])[0]
    return dict(w=np.array(w), mu=np.array(mu), var=np.array(var), loglik=ll, rises=bool(np.all(np.diff(ll) >= -1e-9)),
                hard=G.argmax(1).astype(np.int32), __stdout__=[f"loglik {ll[-1]:.6f}"])


# 3 logistic regression with an inner backtracking line search
def lr_inputs(N=40, D=3, seed=1003):
    rg = R(seed); X = rg.standard_normal((N, D)); X[:, 0] = 1.0
    y = np.where(X @ np.array([0.3, 2.0, -1.0]) + 0.5 * rg.standard_normal(N) > 0, 1.0, -1.0)
    return dict(X=X, y=y)
def lr_loss(X, y, w, lam=0.05):
    return np.logaddexp(0, -y * (X @ w)).mean() + 0.5 * lam * w @ w
def lr_grad(X, y, w, lam=0.05):
    z = -y * (X @ w); return (X * (-y * (1 / (1 + np.exp(-z))))[:, None]).mean(0) + lam * w
@case("logreg_backtrack", sized=True, inputs=lr_inputs, outputs=["w", "losses", "steps", "acc"], tol=(1e-9, 1e-11))
def _(X, y):
    w = [np.zeros(X.shape[1])]; steps = []
    for t in range(11):
        g = lr_grad(X, y, w[-1]); f0 = lr_loss(X, y, w[-1]); a = 1.0
        for i in range(11):
            if not lr_loss(X, y, w[-1] - a * g) <= f0 - 0.5 * a * (g @ g): a *= 0.5
        steps.append(a); w.append(w[-1] - a * g)
    w = np.array(w)
    return dict(w=w, losses=np.array([lr_loss(X, y, v) for v in w]), steps=np.array(steps), acc=np.int32((y * (X @ w[-1]) > 0).sum()))


# 4 Newton-CG: five CG iterations on Hessian-vector products inside each Newton step
def ncg_inputs(N=30, D=4, seed=1004):
    rg = R(seed); X = rg.standard_normal((N, D)); X[:, 0] = 1.0
    return dict(X=X, y=(X @ np.array([0.5, 1.5, -2.0, 0.7]) + rg.standard_normal(N) > 0).astype(np.float64))
@case("newton_cg", sized=True, inputs=ncg_inputs, outputs=["w", "gnorm", "loss"], tol=(1e-8, 1e-10))
def _(X, y):
    N, D = X.shape; lam = 0.1; sig = lambda z: 1 / (1 + np.exp(-z))
    grad = lambda w: X.T @ (sig(X @ w) - y) / N + lam * w
    hv = lambda w, v: X.T @ (sig(X @ w) * (1 - sig(X @ w)) * (X @ v)) / N + lam * v
    w = [np.zeros(D)]
    for t in range(5):
        b = -grad(w[-1]); x = np.zeros(D); r = b.copy(); p = b.copy()
        for i in range(5):
            Hp = hv(w[-1], p); a = (r @ r) / (p @ Hp); x = x + a * p; rn = r - a * Hp
            p = rn + (rn @ rn) / (r @ r) * p; r = rn
        w.append(w[-1] + x)
    w = np.array(w); wl = w[-1]
    loss = np.log1p(np.exp(-(2 * y - 1) * (X @ wl))).mean() + 0.5 * lam * wl @ wl
    return dict(w=w, gnorm=np.array([np.linalg.norm(grad(v)) for v in w]), loss=loss)


# 5 matrix completion by alternating least squares, a 3x3 solve per row in each sweep
def als_inputs(M=9, N=7, seed=1005):
    rg = R(seed); Rm = rg.standard_normal((M, 3)) @ rg.standard_normal((3, N)) + 0.05 * rg.standard_normal((M, N))
    mask = (rg.random((M, N)) < 0.7).astype(np.float64); mask[:, 0] = 1; mask[0, :] = 1
    return dict(Rm=Rm, mask=mask, V0=rg.standard_normal((N, 3)) * 0.5)
@case("als_completion", sized=True, inputs=als_inputs, outputs=["U", "V", "err", "P", "observed"], tol=(1e-8, 1e-10))
def _(Rm, mask, V0):
    lam = 0.1
    def rows(F, Y, W):
        return np.array([np.linalg.solve((F * W[i][:, None]).T @ F + lam * np.eye(3), (F * (W[i] * Y[i])[:, None]).sum(0)) for i in range(len(Y))])
    V = [V0]; U = []
    for s in range(6):
        U.append(rows(V[s], Rm, mask))
        if s < 5: V.append(rows(U[s], Rm.T, mask.T))
    U, V = np.array(U), np.array(V)
    err = np.array([(mask * (Rm - U[s] @ V[s].T) ** 2).sum() for s in range(6)])
    return dict(U=U, V=V, err=err, P=U[-1] @ V[-1].T, observed=mask.sum(), __stdout__=[f"rmse {(err[-1] / mask.sum()) ** 0.5:.5f}"])


# 6 Sanger's rule (two-component Oja) streaming over samples for three epochs
def sanger_inputs(T=30, D=4, seed=1006):
    rg = R(seed); A = rg.standard_normal((D, D)) * np.array([2.0, 1.0, 0.4, 0.2])
    X = rg.standard_normal((T, D)) @ A.T
    return dict(X=X.astype(f32), W0=(rg.standard_normal((2, D)) * 0.3).astype(f32))
@case("sanger_pca", sized=True, inputs=sanger_inputs, outputs=["W", "Wf", "Cov", "rayleigh", "gram", "norms"], tol=(2e-4, 2e-5), vk=True)
def _(X, W0):
    T, D = X.shape; W = [W0.astype(np.float64)]; Xd = X.astype(np.float64)
    for s in range(3 * T):
        x = Xd[s % T]; P = W[-1]; yv = P @ x
        W.append(P + 0.01 * (np.outer(yv, x) - np.tril(np.outer(yv, yv)) @ P))
    W = np.array(W); Wf = W[-1]; Cov = Xd.T @ Xd / T
    return dict(W=W, Wf=Wf, Cov=Cov, rayleigh=np.einsum("ca,ab,cb->c", Wf, Cov, Wf) / (Wf ** 2).sum(1), gram=Wf @ Wf.T,
                norms=(W ** 2).sum(-1))


# 7 policy iteration with an inner loop of Bellman sweeps evaluating each policy
def mdp_inputs(S=6, A=3, seed=1007):
    rg = R(seed); P = rg.random((A, S, S)) ** 3; P /= P.sum(-1, keepdims=True)
    return dict(P=P, Rw=rg.standard_normal((S, A)))
@case("policy_eval_inner", sized=True, inputs=mdp_inputs, outputs=["V", "pol", "changed", "Qf", "gap", "codes"], tol=(1e-10, 1e-12))
def _(P, Rw):
    A, S, _ = P.shape; g = 0.9; pol = [np.zeros(S, int)]; V = [np.zeros(S)]
    q = lambda V: Rw + g * np.einsum("asu,u->sa", P, V)
    for k in range(5):
        v = V[-1]; pk = pol[-1]
        for i in range(40):
            v = Rw[np.arange(S), pk] + g * (P[pk, np.arange(S)] @ v)
        V.append(v); pol.append(q(v).argmax(1))
    pol = np.array(pol, np.int32); ch = (pol[1:] != pol[:-1]).sum(1).astype(np.int32); Qf = q(V[-1])
    return dict(V=np.array(V), pol=pol, changed=np.r_[0, ch].astype(np.int32), Qf=Qf, gap=(Qf.max(1) - V[-1]).max(),
                codes=np.array([{0: 10, 1: 20}.get(a, 30 + a) for a in pol[-1]], np.int32), __stdout__=[f"changes {ch[0]} {ch[-1]}"])


# 8 label propagation with clamped seeds
def lp_inputs(N=14, seed=1008):
    rg = R(seed); pos = rg.standard_normal((N, 2)) + np.repeat(np.array([[0, 0], [4, 0], [2, 3]]), [5, 5, 4], 0)
    W = np.exp(-((pos[:, None] - pos[None]) ** 2).sum(-1) / 2.0); np.fill_diagonal(W, 0)
    lab = np.full(N, -1, np.int32); lab[[0, 5, 10]] = [0, 1, 2]; lab[7] = 1
    return dict(W=W.astype(f32), seed_label=lab)
@case("label_propagation", sized=True, inputs=lp_inputs, outputs=["Y0", "F", "pred", "mass", "change", "unlabeled"], tol=(1e-5, 1e-6), vk=True)
def _(W, seed_label):
    Y0 = (seed_label[:, None] == np.arange(3)).astype(f32); Pm = W / W.sum(1, keepdims=True); F = [Y0]
    for t in range(24):
        F.append(np.where(seed_label[:, None] >= 0, Y0, Pm @ F[-1]))
    F = np.array(F)
    return dict(Y0=Y0, F=F, pred=F[-1].argmax(1).astype(np.int32), mass=F.sum((1, 2)), change=np.r_[0, np.abs(np.diff(F, axis=0)).max((1, 2))],
                unlabeled=np.int32((seed_label < 0).sum()))


# 9 projected gradient onto a capped simplex, each projection an inner bisection
def pgd_inputs(M=12, D=6, seed=1009):
    rg = R(seed); A = rg.standard_normal((M, D)); return dict(A=A, b=A @ np.array([0.4, 0.3, 0.2, 0.1, 0.0, 0.0]) + 0.1 * rg.standard_normal(M))
def cap_proj(v, cap=0.4):
    lo, hi = v.min() - 1.0, v.max()
    for i in range(50):
        mid = 0.5 * (lo + hi)
        if np.clip(v - mid, 0, cap).sum() > 1.0: lo = mid
        else: hi = mid
    return np.clip(v - 0.5 * (lo + hi), 0, cap)
@case("pgd_box_simplex", sized=True, inputs=pgd_inputs, outputs=["x", "obj", "feasible", "total", "L"], tol=(1e-9, 1e-11))
def _(A, b):
    D = A.shape[1]; L = (A * A).sum(); x = [np.full(D, 1 / D)]
    for t in range(29):
        x.append(cap_proj(x[-1] - A.T @ (A @ x[-1] - b) / L))
    x = np.array(x)
    return dict(x=x, obj=0.5 * ((x @ A.T - b) ** 2).sum(1), feasible=bool(np.all((x[-1] >= 0) & (x[-1] <= 0.4 + 1e-12))), total=x[-1].sum(), L=L)


# 10 Pegasos and a perceptron over the same sample order
def peg_inputs(N=25, D=3, seed=1010):
    rg = R(seed); X = rg.standard_normal((N, D)).astype(f32); X[:, -1] = 1
    return dict(X=X, y=np.where(X @ f32([1.5, -1.0, 0.3]) > 0, 1, -1).astype(f32))
@case("pegasos_svm", sized=True, inputs=peg_inputs, outputs=["w", "p", "wrong", "mistakes", "hinge", "train_acc"], tol=(2e-4, 2e-5))
def _(X, y):
    N, D = X.shape; lam = 0.1; w = [np.zeros(D)]; p = [np.zeros(D)]; wrong = [False]
    Xd, yd = X.astype(np.float64), y.astype(np.float64)
    for t in range(1, 121):
        i = 7 * t % N; eta = 1 / (lam * t); m = yd[i] * w[-1] @ Xd[i]
        h = (1 - eta * lam) * w[-1] + (eta * yd[i] * Xd[i] if m < 1 else 0)
        n = np.linalg.norm(h); w.append(h * (1 / (n * np.sqrt(lam)) if n * np.sqrt(lam) > 1 else 1.0))
        wr = yd[i] * p[-1] @ Xd[i] <= 0; wrong.append(wr); p.append(p[-1] + (yd[i] * Xd[i] if wr else 0))
    w = np.array(w)
    return dict(w=w, p=np.array(p), wrong=np.array(wrong), mistakes=np.int64(sum(wrong)),
                hinge=np.maximum(0, 1 - yd * (Xd @ w[-1])).mean(), train_acc=np.int32((yd * (Xd @ w[-1]) > 0).sum()))


# 11 a neural ODE trained through RK4, the loss differentiated through the integration
def node_inputs(B=5, seed=1011):
    rg = R(seed); x0 = rg.standard_normal((B, 2))
    return dict(x0=x0, target=x0 @ np.array([[0.8, -0.4], [0.4, 0.8]]) + 0.2, theta0=rg.standard_normal(6) * 0.3)
def node_loss(th, x0, target, h=0.125):
    f = lambda x: np.tanh(x @ th[:4].reshape(2, 2).T + th[4:])
    z = x0
    for s in range(8):
        k1 = f(z); k2 = f(z + 0.5 * h * k1); k3 = f(z + 0.5 * h * k2); k4 = f(z + h * k3)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return ((z - target) ** 2).sum() / len(x0), z
@case("neural_ode_rk4", sized=True, inputs=node_inputs, outputs=["theta", "losses", "final_end"], tol=(1e-7, 1e-9))
def _(x0, target, theta0):
    th = [theta0]; e = 1e-6; L = lambda t: node_loss(t, x0, target)[0]
    for k in range(11):
        g = np.array([(L(th[-1] + e * d) - L(th[-1] - e * d)) / (2 * e) for d in np.eye(6)])
        th.append(th[-1] - 0.5 * g)
    th = np.array(th)
    return dict(theta=th, losses=np.array([L(t) for t in th]), final_end=node_loss(th[-1], x0, target)[1])


# 12 a Sinkhorn barycenter: gradient steps on softmax logits through 30 Sinkhorn iterations
def bary_inputs(G=10):
    g = np.arange(G); a1 = np.exp(-(g - 2.0) ** 2 / 2); a2 = np.exp(-(g - 7.0) ** 2 / 3)
    return dict(a1=a1 / a1.sum(), a2=a2 / a2.sum())
def ot_np(p, q, G, eps=0.05):
    g = np.arange(G); C = ((g[:, None] - g[None]) / G) ** 2; K = np.exp(-C / eps); u = np.ones(G)
    for k in range(30):
        v = q / (K.T @ u); u = p / (K @ v)
    return (u[:, None] * K * v[None] * C).sum()
@case("sinkhorn_barycenter", sized=True, inputs=bary_inputs, outputs=["z", "cost", "bary", "mean_pos"], tol=(1e-6, 1e-9))
def _(a1, a2):
    G = len(a1); sm = lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    F = lambda z: ot_np(sm(z), a1, G) + ot_np(sm(z), a2, G); z = [np.zeros(G)]; e = 1e-6
    for t in range(9):
        g = np.array([(F(z[-1] + e * d) - F(z[-1] - e * d)) / (2 * e) for d in np.eye(G)])
        z.append(z[-1] - 2.0 * g)
    z = np.array(z); b = sm(z[-1])
    return dict(z=z, cost=np.array([F(v) for v in z]), bary=b, mean_pos=(b * np.arange(G)).sum())


# 13 bilevel: per-feature ridge weights tuned through 15 unrolled inner gradient steps
def bilevel_inputs(Nt=20, Nv=12, D=3, seed=1013):
    rg = R(seed); wt = np.array([1.0, -0.5, 0.0])
    Xt, Xv = rg.standard_normal((Nt, D)), rg.standard_normal((Nv, D))
    return dict(Xt=Xt, yt=Xt @ wt + 0.8 * rg.standard_normal(Nt), Xv=Xv, yv=Xv @ wt + 0.1 * rg.standard_normal(Nv))
def bilevel_np(h, Xt, yt, Xv, yv):
    w = np.zeros(Xt.shape[1])
    for k in range(15):
        w = w - 0.1 * (Xt.T @ (Xt @ w - yt) / len(yt) + np.exp(h) * w)
    return ((Xv @ w - yv) ** 2).sum() / (2 * len(yv)), w
@case("bilevel_feature_reg", sized=True, inputs=bilevel_inputs, outputs=["h", "val", "w_final", "lam"], tol=(1e-7, 1e-9))
def _(Xt, yt, Xv, yv):
    F = lambda h: bilevel_np(h, Xt, yt, Xv, yv)[0]; h = [np.zeros(Xt.shape[1])]; e = 1e-6
    for t in range(7):
        g = np.array([(F(h[-1] + e * d) - F(h[-1] - e * d)) / (2 * e) for d in np.eye(len(h[-1]))])
        h.append(h[-1] - 5.0 * g)
    h = np.array(h); val = np.array([F(v) for v in h])
    return dict(h=h, val=val, w_final=bilevel_np(h[-1], Xt, yt, Xv, yv)[1], lam=np.exp(h[-1]),
                __stdout__=[f"validation {val[0]:.5f} -> {val[-1]:.5f}"])


# 14 KL-divergence NMF, each update's ratio V / (W H) a tensor of its step
def klnmf_inputs(M=8, N=6, seed=1014):
    rg = R(seed); V = rg.random((M, 2)) @ rg.random((2, N)) + 0.1
    return dict(V=V.astype(f32), W0=rg.uniform(0.5, 1.5, (M, 2)).astype(f32), H0=rg.uniform(0.5, 1.5, (2, N)).astype(f32))
@case("kl_nmf_blocks", sized=True, inputs=klnmf_inputs, outputs=["W", "H", "div", "decreasing"], tol=(2e-4, 1e-5), vk=True)
def _(V, W0, H0):
    V = V.astype(np.float64); W, H = [W0.astype(np.float64)], [H0.astype(np.float64)]
    for k in range(29):
        Q = V / (W[-1] @ H[-1]); H.append(H[-1] * (W[-1].T @ Q) / W[-1].sum(0)[:, None])
        Q = V / (W[-1] @ H[-1]); W.append(W[-1] * (Q @ H[-1].T) / H[-1].sum(1)[None, :])
    div = np.array([(V * np.log(V / (w @ h)) - V + w @ h).sum() for w, h in zip(W, H)])
    return dict(W=np.array(W), H=np.array(H), div=div, decreasing=bool(np.all(div[1:] <= div[:-1] * 1.0001)))


# 15 mini-batch k-means with per-centre rates from integer counts
def mbk_inputs(N=30, D=2, seed=1015):
    rg = R(seed); cen = np.array([[0.0, 0.0], [4.0, 1.0], [1.0, 4.0]])
    X = (cen[rg.integers(0, 3, N)] + 0.6 * rg.standard_normal((N, D))).astype(f32)
    return dict(X=X, C0=X[[0, 1, 2]].copy())
@case("minibatch_kmeans", sized=True, inputs=mbk_inputs, outputs=["C", "cnt", "lab", "inertia", "final_labels"], tol=(2e-5, 2e-6))
def _(X, C0):
    N = len(X); Xd = X.astype(np.float64)
    near = lambda C, x: int(((x - C) ** 2).sum(-1).argmin())
    C, cnt, lab = [C0.astype(np.float64)], [np.zeros(3, np.int32)], [np.zeros(4, np.int32)]
    for t in range(1, 21):
        idx = (4 * t + np.arange(4)) % N; l = np.array([near(C[-1], Xd[i]) for i in idx], np.int32)
        hits = np.bincount(l, minlength=3); c = cnt[-1] + hits
        rate = np.where(hits > 0, 1.0 / np.maximum(c, 1), 0.0)
        mean = np.array([Xd[idx][l == k].sum(0) for k in range(3)])
        C.append(C[-1] + rate[:, None] * (mean - hits[:, None] * C[-1])); cnt.append(c.astype(np.int32)); lab.append(l)
    Cf = C[-1]; d = ((Xd[:, None] - Cf[None]) ** 2).sum(-1)
    return dict(C=np.array(C), cnt=np.array(cnt), lab=np.array(lab), inertia=d.min(1).sum(), final_labels=d.argmin(1).astype(np.int32))


# 16 a multiclass averaged perceptron, the step's scores and a bool tensor of rivals
def perc_inputs(N=24, D=4, seed=1016):
    rg = R(seed); X = rg.standard_normal((N, D)).astype(f32); X[:, -1] = 1
    return dict(X=X, y=np.argmax(X @ rg.standard_normal((D, 3)).astype(f32), 1).astype(np.int32))
@case("averaged_perceptron", sized=True, inputs=perc_inputs, outputs=["W", "miss", "S", "avg", "pred", "correct"], tol=(1e-5, 1e-5))
def _(X, y):
    N, D = X.shape; W = [np.zeros((3, D), f32)]; S = [np.zeros((3, D), f32)]; miss = [0]
    for t in range(1, 4 * N + 1):
        i = (t - 1) % N; sc = W[-1] @ X[i]; yi = y[i]
        p = int(np.argmax(sc)) if any(c != yi and sc[c] >= sc[yi] for c in range(3)) else yi
        w = W[-1].copy()
        if p != yi: w[yi] += X[i]; w[p] -= X[i]
        miss.append(miss[-1] + int(np.any(w[yi] != W[-1][yi]))); W.append(w); S.append(S[-1] + w)
    avg = S[-1] / f32(4 * N); pred = np.argmax(X @ avg.T, 1).astype(np.int32)
    return dict(W=np.array(W), miss=np.int16(miss), S=np.array(S), avg=avg, pred=pred, correct=np.int32((pred == y).sum()))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
