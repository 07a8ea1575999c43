"""Hold-out programs, eighth round (statistics and classic machine learning): isotonic regression by
pool-adjacent-violators with a stack carried by a recurrence, AdaBoost with decision stumps, linear
discriminant analysis with a closed-form 3 x 3 inverse, PCA by power iteration with deflation,
t-SNE steps after a perplexity bisection, linear SVM by dual coordinate descent and kernel SVM by
SMO, kernel ridge regression through Cholesky with its marginal likelihood's derivative, EM for a
Bernoulli mixture, a linear-chain CRF's forward-backward and gradient, Mann-Whitney U /
Wasserstein / Kolmogorov-Smirnov from ranks, k-medoids swaps, Gaussian naive Bayes, ARIMA
forecasts, CRF Viterbi decoding, logistic regression by LCG minibatches with a held-out split, a bootstrap interval of a
correlation and ridge regression tuned by k-fold cross-validation, each checked against NumPy
computed here. Each case states its tolerance (`tol`, rtol and atol; integers and bools compare
exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 weighted isotonic regression (pool-adjacent-violators)
@case("isotonic_pava", inputs=lambda: dict(y=np.round(np.arange(14) * 0.3 + R(801).normal(0, 1.2, 14), 2),
                                          wt=R(802).uniform(0.5, 2.0, 14)),
      tol=(1e-12, 1e-12), outputs=["fit", "blocks", "sse", "level", "upto"])
def _(y, wt):
    N = len(y); st = []
    for v, w in zip(y, wt):
        st.append([v * w, w, 1.0])
        while len(st) >= 2 and st[-2][0] / st[-2][1] > st[-1][0] / st[-1][1]:
            b = st.pop(); st[-1] = [st[-1][c] + b[c] for c in range(3)]
    level = np.zeros(N); upto = np.zeros(N); fit = []
    for k, (s, w, c) in enumerate(st):
        level[k] = s / w; fit += [s / w] * int(c)
    cnt = np.zeros(N); cnt[:len(st)] = [b[2] for b in st]; upto = np.cumsum(cnt)
    fit = np.array(fit); sse = (wt * (y - fit) ** 2).sum()
    return dict(fit=fit, blocks=np.int32(len(st)), sse=sse, level=level, upto=upto,
                __stdout__=[f"{len(st)} blocks, weighted sse {sse:.6f}"])



# 2 AdaBoost with decision stumps over integer features
def ada_inputs():
    rg = R(803); N = 16
    X = rg.integers(0, 10, (N, 3)).astype(np.int32)
    y = np.where(X[:, 0] + X[:, 2] + rg.integers(-3, 4, N) > 9, 1, -1).astype(np.int32)
    return dict(X=X, y=y, w0=rg.uniform(0.5, 1.5, N))
@case("adaboost_stumps", inputs=ada_inputs, tol=(1e-11, 1e-13),
      outputs=["w", "err", "best", "alpha", "h", "F", "correct", "feature"])
def _(X, y, w0):
    N, D = X.shape; T = 6; K = D * N * 2
    w = [w0 / w0.sum()]; errs, best, alpha, hs = [], [], [], []
    def stump(x, thr, s):
        p = np.where(x <= thr, 1, -1); return p if s == 0 else -p
    for t in range(T):
        e = np.array([w[-1][stump(X[:, k // (N * 2)], X[(k // 2) % N, k // (N * 2)], k % 2) != y].sum() for k in range(K)])
        b = int(np.argmin(e)); em = max(e[b], 1e-12); a = 0.5 * np.log((1 - em) / em)
        h = stump(X[:, b // (N * 2)], X[(b // 2) % N, b // (N * 2)], b % 2)
        u = w[-1] * np.exp(-a * y * h); w.append(u / u.sum())
        errs.append(e); best.append(b); alpha.append(a); hs.append(h)
    alpha = np.array(alpha); hs = np.array(hs); F = np.cumsum(alpha[:, None] * hs, 0)
    correct = ((F > 0) == (y > 0)).sum(1).astype(np.int32)
    pad = lambda a: np.concatenate([np.zeros((1,) + a.shape[1:], a.dtype), a])
    return dict(w=np.array(w), err=pad(np.array(errs)), best=pad(np.int32(best)), alpha=pad(alpha), h=pad(hs.astype(np.int32)),
                F=pad(F), correct=pad(correct), feature=pad(np.int32(best) // (N * 2)),
                __stdout__=[f"train correct after 6 rounds: {correct[-1]} of {N}"])


# 3 linear discriminant analysis, three classes, closed-form 3x3 inverse
def lda_inputs():
    rg = R(804); means = np.array([[0, 0, 0], [2, 1, -1], [-1, 2, 1.5]])
    cov = np.array([[1, 0.4, 0.2], [0.4, 1, -0.3], [0.2, -0.3, 0.8]]); Lc = np.linalg.cholesky(cov)
    def draw(n):
        lab = rg.integers(0, 3, n); return means[lab] + rg.standard_normal((n, 3)) @ Lc.T, lab.astype(np.int32)
    X, label = draw(45); Xt, lt = draw(20)
    return dict(X=X, label=label, Xt=Xt, lt=lt)
@case("lda_three_class", inputs=lda_inputs, tol=(1e-10, 1e-12),
      outputs=["cnt", "mu", "Sw", "Si", "det", "coef", "bias", "score", "pred", "accuracy", "off"])
def _(X, label, Xt, lt):
    N = len(X); cnt = np.bincount(label, minlength=3).astype(float)
    mu = np.stack([X[label == c].mean(0) for c in range(3)])
    R_ = X - mu[label]; Sw = R_.T @ R_ / (N - 3); Si = np.linalg.inv(Sw)
    coef = mu @ Si.T; bias = -0.5 * (coef * mu).sum(1) + np.log(cnt / N)
    score = Xt @ coef.T + bias; pred = score.argmax(1).astype(np.int32); acc = (pred == lt).mean()
    return dict(cnt=cnt, mu=mu, Sw=Sw, Si=Si, det=np.linalg.det(Sw), coef=coef, bias=bias, score=score, pred=pred,
                accuracy=acc, off=0.0, __stdout__=[f"held-out accuracy {acc:.4f}"])


# 4 PCA by power iteration with deflation
def pca_inputs():
    rg = R(805); Z = rg.standard_normal((20, 5)) * np.array([3.0, 2.0, 1.2, 0.6, 0.3])
    Q, _ = np.linalg.qr(rg.standard_normal((5, 5)))
    return dict(X=Z @ Q.T + np.array([1.0, -2.0, 0.5, 0.0, 3.0]))
@case("pca_deflation", inputs=pca_inputs, tol=(1e-9, 1e-10), outputs=["mean", "Cv", "vec", "lam", "ratio", "scores", "ortho"])
def _(X):
    mean = X.mean(0); Xc = X - mean; Cv = Xc.T @ Xc / 19
    D = Cv.copy(); vec, lam = [], []
    for c in range(3):
        v = 1.0 + 0.1 * np.arange(5)
        for _ in range(79):
            w = D @ v; v = w / np.sqrt(w @ w)
        if v[np.argmax(np.abs(v))] < 0: v = -v
        l = v @ D @ v; vec.append(v); lam.append(l); D = D - l * np.outer(v, v)
    vec = np.array(vec); lam = np.array(lam); ratio = lam / np.trace(Cv)
    # the components agree with NumPy's eigendecomposition (to the power iteration's convergence)
    ev = np.linalg.eigvalsh(Cv)[::-1][:3]; assert np.allclose(lam, ev, rtol=1e-6)
    return dict(mean=mean, Cv=Cv, vec=vec, lam=lam, ratio=ratio, scores=Xc @ vec.T,
                ortho=np.abs(vec @ vec.T - np.eye(3)).max(),
                __stdout__=[f"explained {ratio[0]:.4f} {ratio[1]:.4f} {ratio[2]:.4f}"])


# 5 linear-chain CRF: forward-backward, marginals, NLL and its gradient two ways
def crf_inputs():
    rg = R(806); T, F, S = 9, 4, 3
    return dict(Xf=rg.standard_normal((T, F)), tags=rg.integers(0, S, T).astype(np.int32),
                W=rg.standard_normal((S, F)) * 0.7, A=rg.standard_normal((S, S)) * 0.5)
@case("crf_forward_backward", inputs=crf_inputs, tol=(1e-10, 1e-12),
      outputs=["E", "al", "br", "logZ", "gold", "nll", "P", "Q", "gW", "gA", "cW", "cA", "zcheck"])
def _(Xf, tags, W, A):
    from scipy.special import logsumexp as lse
    T = len(Xf); S = len(A); E = Xf @ W.T
    al = np.zeros((T, S)); al[0] = E[0]
    for t in range(1, T): al[t] = E[t] + lse(al[t - 1][:, None] + A, axis=0)
    br = np.zeros((T, S))
    for r in range(1, T): br[r] = lse(A + E[T - r] + br[r - 1], axis=1)
    logZ = lse(al[-1]); gold = E[np.arange(T), tags].sum() + A[tags[:-1], tags[1:]].sum()
    P = np.exp(al + br[::-1] - logZ)
    Q = np.zeros((T, S, S))
    for t in range(1, T): Q[t] = np.exp(al[t - 1][:, None] + A + E[t] + br[T - 1 - t] - logZ)
    onehot = np.eye(S)[tags]; cW = (P - onehot).T @ Xf
    obs = np.zeros((S, S)); np.add.at(obs, (tags[:-1], tags[1:]), 1.0); cA = Q[1:].sum(0) - obs
    return dict(E=E, al=al, br=br, logZ=logZ, gold=gold, nll=logZ - gold, P=P, Q=Q, gW=cW, gA=cA, cW=cW, cA=cA,
                zcheck=0.0, __stdout__=[f"nll {logZ - gold:.6f}"])



# 6 t-SNE: perplexity bisection per row, symmetric affinities, momentum steps, autodiff check
def tsne_inputs():
    rg = R(807); centers = np.array([[0, 0, 0, 0], [3, 3, 0, 0.0]])
    X = centers[np.arange(8) % 2] + rg.standard_normal((8, 4))
    return dict(X=X, Y0=rg.standard_normal((8, 2)) * 1e-1, perplexity=np.float64(3.0))
def tsne_kernel(Y):
    q = 1 / (1 + ((Y[:, None] - Y[None]) ** 2).sum(-1)); np.fill_diagonal(q, 0); return q
@case("tsne_steps", inputs=tsne_inputs, tol=(1e-8, 1e-10), outputs=["lb", "ub", "beta", "P", "L0", "gap0", "Y", "cost"])
def _(X, Y0, perplexity):
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1); target = np.log(perplexity)
    def entropy(i, b):
        p = np.exp(-b * D2[i]); p[i] = 0; z = p.sum(); return np.log(z) + b * (p * D2[i]).sum() / z
    lb = np.zeros((8, 50)); ub = np.zeros((8, 50)); lb[:, 0] = -12; ub[:, 0] = 6
    for i in range(8):
        for s in range(1, 50):
            m = 0.5 * (lb[i, s - 1] + ub[i, s - 1]); up = entropy(i, np.exp(m)) > target
            lb[i, s], ub[i, s] = (m, ub[i, s - 1]) if up else (lb[i, s - 1], m)
    beta = np.exp(0.5 * (lb[:, -1] + ub[:, -1]))
    Pc = np.exp(-beta[:, None] * D2); np.fill_diagonal(Pc, 0); Pc /= Pc.sum(1, keepdims=True); P = (Pc + Pc.T) / 16
    off = ~np.eye(8, dtype=bool)
    def kl(Y):
        q = tsne_kernel(Y); Z = q.sum(); return (P[off] * np.log(P[off] * Z / q[off])).sum()
    def grad(Y):
        q = tsne_kernel(Y); Z = q.sum(); return 4 * (((P - q / Z) * q)[:, :, None] * (Y[:, None] - Y[None])).sum(1)
    Y = [Y0]; V = np.zeros_like(Y0)
    for _ in range(1, 30):
        V = 0.5 * V - 4.0 * grad(Y[-1]); Y.append(Y[-1] + V)
    cost = np.array([kl(y) for y in Y]); assert cost[-1] < cost[0]
    return dict(lb=lb, ub=ub, beta=beta, P=P, L0=kl(Y0), gap0=0.0, Y=np.array(Y), cost=cost,
                __stdout__=[f"KL {cost[0]:.5f} -> {cost[-1]:.5f}"])


# 7 linear SVM by dual coordinate descent with clipping
def svm_inputs():
    rg = R(808); D = 3
    wt = np.array([1.5, -1.0, 0.5])
    def draw(n):
        X = rg.standard_normal((n, D)); y = np.sign(X @ wt + 0.4 * rg.standard_normal(n)); return X, y
    X, y = draw(24); Xt, yt = draw(30)
    return dict(X=X, y=y, Xt=Xt, yt=yt, C=np.float64(0.8))
@case("svm_dual_cd", inputs=svm_inputs, tol=(1e-10, 1e-12),
      outputs=["Q", "dual", "prim", "wf", "kind", "on_margin", "bounded", "test_acc"])
def _(X, y, Xt, yt, C):
    N, D = X.shape; E = 8; Q = (X * X).sum(1); a = np.zeros(N); w = np.zeros(D); dual, prim = [], []
    for e in range(E):
        for i in range(N):
            g = y[i] * (w @ X[i]) - 1; new = min(max(a[i] - g / Q[i], 0.0), C)
            w = w + (new - a[i]) * y[i] * X[i]; a[i] = new
        dual.append(a.sum() - 0.5 * w @ w)
        prim.append(0.5 * w @ w + C * np.maximum(0, 1 - y * (X @ w)).sum())
    kind = np.where(a == 0, 0, np.where(a == C, 2, 1)).astype(np.int32)
    om, bd = int((kind == 1).sum()), int((kind == 2).sum())
    return dict(Q=Q, dual=np.array([0.0] + dual), prim=np.array([0.0] + prim), wf=w, kind=kind, on_margin=np.int32(om),
                bounded=np.int32(bd), test_acc=((yt * (Xt @ w)) > 0).mean(),
                __stdout__=[f"{om} on the margin, {bd} at C"])


# 8 kernel ridge regression through Cholesky, LOO residuals, d(log marginal likelihood)/d(ell)
def krr_inputs():
    rg = R(809); X = rg.uniform(-2, 2, (12, 2)); y = np.sin(X[:, 0]) * np.cos(0.5 * X[:, 1]) + 0.1 * rg.standard_normal(12)
    return dict(X=X, y=y, Xs=rg.uniform(-2, 2, (5, 2)), ell=np.float64(0.9), lam=np.float64(0.05))
@case("kernel_ridge_chol", inputs=krr_inputs, tol=(1e-9, 1e-11),
      outputs=["K", "L", "alpha", "pred", "Linv", "Kinv_diag", "loo", "logml", "dlogml", "dlam", "dX", "rmse_loo"])
def _(X, y, Xs, ell, lam):
    N = len(X); sq = lambda A, B: ((A[:, None] - B[None]) ** 2).sum(-1)
    Kr = np.exp(-0.5 * sq(X, X) / ell ** 2); K = Kr + lam * np.eye(N)
    L = np.linalg.cholesky(K); alpha = np.linalg.solve(K, y); Ki = np.linalg.inv(K)
    pred = np.exp(-0.5 * sq(Xs, X) / ell ** 2) @ alpha; loo = alpha / np.diag(Ki)
    logml = -0.5 * y @ alpha - np.log(np.diag(L)).sum() - 0.5 * N * np.log(2 * np.pi)
    dK = Kr * sq(X, X) / ell ** 3; G = 0.5 * (np.outer(alpha, alpha) - Ki)     # d logml / d K
    dX = -2 / ell ** 2 * ((G * Kr)[:, :, None] * (X[:, None] - X[None])).sum(1)
    return dict(K=K, L=L, alpha=alpha, pred=pred, Linv=np.linalg.inv(L).T, Kinv_diag=np.diag(Ki), loo=loo, logml=logml,
                dlogml=(G * dK).sum(), dlam=np.trace(G), dX=dX, rmse_loo=np.sqrt((loo ** 2).mean()),
                __stdout__=[f"log marginal likelihood {logml:.6f}, loo rmse {np.sqrt((loo ** 2).mean()):.5f}"])


# 9 EM for a Bernoulli mixture (MAP with Beta(2, 2)), log-space responsibilities
def bmm_inputs():
    rg = R(810); protos = np.array([[0.9, 0.9, 0.8, 0.1, 0.1, 0.2, 0.5], [0.1, 0.2, 0.1, 0.9, 0.8, 0.9, 0.5],
                                    [0.8, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9]])
    z = rg.integers(0, 3, 40); B = (rg.random((40, 7)) < protos[z]).astype(np.uint8)
    return dict(B=B, mu0=rg.uniform(0.3, 0.7, (3, 7)))
@case("bernoulli_mixture_em", inputs=bmm_inputs, tol=(1e-10, 1e-12),
      outputs=["pi", "mu", "ll", "r", "objective", "label", "sizes"])
def _(B, mu0):
    from scipy.special import logsumexp
    I = 12; N = len(B); pi = [np.full(3, 1 / 3)]; mu = [mu0]; lls, rs, obj = [], [], []
    Bf = B.astype(float)
    for s in range(I):
        lj = np.log(pi[-1]) + Bf @ np.log(mu[-1]).T + (1 - Bf) @ np.log(1 - mu[-1]).T
        ll = logsumexp(lj, axis=1); r = np.exp(lj - ll[:, None]); Nk = r.sum(0)
        obj.append(ll.sum() + (np.log(mu[-1]) + np.log(1 - mu[-1])).sum())
        pi.append(Nk / N); mu.append((r.T @ Bf + 1) / (Nk[:, None] + 2)); lls.append(ll); rs.append(r)
    pad = lambda a: np.concatenate([np.zeros((1,) + a.shape[1:]), a])
    label = rs[-1].argmax(1).astype(np.int32); obj = np.array(obj)
    return dict(pi=np.array(pi), mu=np.array(mu), ll=pad(np.array(lls)), r=pad(np.array(rs)), objective=pad(obj),
                label=label, sizes=np.bincount(label, minlength=3).astype(np.int64),
                __stdout__=[f"objective {obj[0]:.4f} -> {obj[-1]:.4f}"])



# 10 Mann-Whitney U with midranks and tie correction, 1-d Wasserstein, Kolmogorov-Smirnov
@case("mann_whitney_wasserstein", inputs=lambda: dict(a=np.round(R(811).normal(0, 1, 13), 1), b=np.round(R(812).normal(0.6, 1.3, 17), 1)),
      tol=(1e-12, 1e-12), outputs=["pool", "rank", "tie", "R1", "U1", "U2", "sigma", "z", "ord", "sorted", "Fa", "Fb", "w1", "ks"])
def _(a, b):
    from scipy import stats
    NA, NB = len(a), len(b); NP = NA + NB; pool = np.concatenate([a, b])
    rank = stats.rankdata(pool); tie = (pool[:, None] == pool[None]).sum(1)
    R1 = rank[:NA].sum(); U1 = R1 - NA * (NA + 1) / 2
    sigma = np.sqrt(NA * NB / 12 * ((NP + 1) - (tie ** 2 - 1).sum() / (NP * (NP - 1))))
    z = (U1 - NA * NB / 2) / sigma
    assert np.isclose(U1, stats.mannwhitneyu(a, b).statistic)
    ordr = np.argsort(pool, kind="stable"); ord_ = np.empty(NP, np.int32); ord_[ordr] = np.arange(NP)
    srt = pool[ordr]; Fa = (a[None] <= srt[:, None]).mean(1); Fb = (b[None] <= srt[:, None]).mean(1)
    w1 = (np.abs(Fa - Fb)[:-1] * np.diff(srt)).sum(); assert np.isclose(w1, stats.wasserstein_distance(a, b))
    ks = np.abs(Fa - Fb).max(); assert np.isclose(ks, stats.ks_2samp(a, b).statistic)
    return dict(pool=pool, rank=rank, tie=tie.astype(np.int64), R1=R1, U1=U1, U2=NA * NB - U1, sigma=sigma, z=z, ord=ord_,
                sorted=srt, Fa=Fa, Fb=Fb, w1=w1, ks=ks, __stdout__=[f"U = {U1}, z = {z:.4f}, W1 = {w1:.4f}, D = {ks:.4f}"])


# 11 k-medoids (PAM) swap rounds
def kmed_inputs():
    rg = R(813); c = np.array([[0, 0], [5, 1], [2, 6.0]])
    return dict(P=(c[np.arange(14) % 3] + rg.standard_normal((14, 2))).astype(np.float32), m0=np.int32([0, 1, 4]))
@case("kmedoids_swap", inputs=kmed_inputs, tol=(1e-5, 1e-5), vk=True,
      outputs=["Dm", "med", "trial", "cur", "pick", "better", "final_cost", "label", "sizes", "biggest"])
def _(P, m0):
    Dm = np.abs(P[:, None] - P[None]).sum(-1, dtype=np.float64); cost = lambda m: Dm[:, m].min(1).sum()
    med = [m0.copy()]; trial, cur, pick, better = [], [], [], []
    for r in range(5):
        tr = []
        for q in range(42):
            m = med[-1].copy(); m[q // 14] = q % 14; tr.append(cost(m))
        tr = np.array(tr); pk = int(np.argmin(tr)); c0 = cost(med[-1]); bt = tr[pk] < c0 - 1e-4
        m = med[-1].copy()
        if bt: m[pk // 14] = pk % 14
        med.append(m); trial.append(tr); cur.append(c0); pick.append(pk); better.append(bt)
    label = Dm[:, med[-1]].argmin(1).astype(np.int32); sizes = np.bincount(label, minlength=3).astype(np.int32)
    pad = lambda a, z=0: np.concatenate([np.full((1,) + np.shape(a)[1:], z, np.asarray(a).dtype), a])
    return dict(Dm=Dm, med=np.array(med, np.int32), trial=pad(np.array(trial)), cur=pad(np.array(cur)), pick=pad(np.int32(pick)),
                better=pad(np.array(better), False), final_cost=cost(med[-1]), label=label, sizes=sizes,
                biggest=np.int32(np.argmax(sizes)), __stdout__=[f"cost {cur[0]:.3f} -> {cost(med[-1]):.3f}"])


# 12 Gaussian naive Bayes in f32 with a variance floor and log-sum-exp posteriors
def gnb_inputs():
    rg = R(814); mu = np.array([[0, 0, 0, 0], [1.5, -1, 0.5, 2], [-1, 1.5, 2, -0.5]]); sd = np.array([1.0, 0.7, 1.3])
    def draw(n):
        k = rg.integers(0, 3, n); return (mu[k] + sd[k, None] * rg.standard_normal((n, 4))).astype(np.float32), k.astype(np.int32)
    X, lab = draw(60); Xt, lt = draw(25)
    return dict(X=X, lab=lab, Xt=Xt, lt=lt)
@case("gaussian_nb", inputs=gnb_inputs, tol=(2e-5, 2e-5), vk=True,
      outputs=["count", "mu", "eps", "var", "jll", "logpost", "pred", "accuracy", "confusion"])
def _(X, lab, Xt, lt):
    X64, Xt64 = X.astype(np.float64), Xt.astype(np.float64); N = len(X)
    count = np.bincount(lab, minlength=3).astype(float)
    mu = np.stack([X64[lab == k].mean(0) for k in range(3)]); eps = 1e-2 * X64.var(0).max()
    var = np.stack([X64[lab == k].var(0) for k in range(3)]) + eps
    jll = np.log(count / N) - 0.5 * (np.log(2 * np.pi * var)[None] + (Xt64[:, None] - mu[None]) ** 2 / var[None]).sum(-1)
    from scipy.special import logsumexp
    pred = jll.argmax(1).astype(np.int32); acc = (pred == lt).mean()
    conf = np.zeros((3, 3), np.int32); np.add.at(conf, (lt, pred), 1)
    return dict(count=count, mu=mu, eps=eps, var=var, jll=jll, logpost=jll - logsumexp(jll, axis=1, keepdims=True), pred=pred,
                accuracy=acc, confusion=conf, __stdout__=[f"accuracy {acc:.3f}"])


# 13 ARIMA(2, 1, 1): CSS by recurrence, gradient steps by autodiff, forecasts and standard errors
def arima_inputs():
    rg = R(815); T = 60; eps = rg.standard_normal(T + 2) * 0.5; d = np.zeros(T + 2)
    for t in range(2, T + 2):
        d[t] = 0.5 * d[t - 1] - 0.3 * d[t - 2] + eps[t] + 0.4 * eps[t - 1]
    return dict(y=10 + np.cumsum(d[2:]), par0=np.array([0.1, 0.0, 0.0]))
def arima_css(p, dy):
    e = np.zeros(len(dy), np.asarray(p).dtype)
    for t in range(2, len(dy)):
        e[t] = dy[t] - p[0] * dy[t - 1] - p[1] * dy[t - 2] - p[2] * e[t - 1]
    return (e[2:] ** 2).sum(), e
@case("arima_forecast", inputs=arima_inputs, tol=(1e-8, 1e-10),
      outputs=["dy", "par", "loss", "e", "sigma2", "fd", "level", "psi", "cpsi", "se"])
def _(y, par0):
    T = len(y); H = 6; dy = np.diff(y); par = [par0]; h = 1e-30
    for _ in range(39):
        p = par[-1]
        g = np.array([arima_css(p + 1j * h * np.eye(3)[i], dy)[0].imag / h for i in range(3)])
        par.append(p - 0.002 * g)
    p = par[-1]; loss, e = arima_css(p, dy); sigma2 = loss / (T - 3)
    fd = [dy[T - 3], dy[T - 2]]
    for k in range(2, H + 2):
        fd.append(p[0] * fd[-1] + p[1] * fd[-2] + (p[2] * e[T - 2] if k == 2 else 0))
    fd = np.array(fd); level = y[-1] + np.cumsum(fd[2:])
    psi = [1.0, p[0] + p[2]]
    for j in range(2, H): psi.append(p[0] * psi[-1] + p[1] * psi[-2])
    cpsi = np.cumsum(psi); se = np.sqrt(sigma2 * np.cumsum(cpsi ** 2))
    return dict(dy=dy, par=np.array(par), loss=loss, e=e, sigma2=sigma2, fd=fd, level=level, psi=np.array(psi), cpsi=cpsi,
                se=se, __stdout__=[f"css {loss:.5f}, next {level[0]:.4f} +- {se[0]:.4f}"])



# 14 logistic regression: LCG minibatches, @loss / @w with an L2 penalty, held-out accuracy and log-loss
def logreg_inputs():
    rg = R(816); N, F = 40, 3; X = rg.standard_normal((N, F))
    y = (X @ np.array([1.2, -0.8, 0.5]) + 0.3 + 0.6 * rg.standard_normal(N) > 0).astype(np.int32)
    return dict(X=X, y=y, seed=np.int64(12345))
@case("logreg_minibatch_holdout", inputs=logreg_inputs, tol=(1e-10, 1e-12),
      outputs=["state", "pick", "w", "held_acc", "held_loss", "best_step"])
def _(X, y, seed):
    N, F = X.shape; NT = N - N // 4; B, S = 8, 60; st = [int(seed)]
    for _ in range(S * B):
        st.append((1664525 * st[-1] + 1013904223) % 4294967296)
    pick = np.int32([(s // 65536) % NT for s in st[1:]]); w = [np.zeros(F + 1)]
    for s in range(S):
        b = pick[s * B:(s + 1) * B]; v = w[-1]; z = v[F] + X[b] @ v[:F]
        r = (1 / (1 + np.exp(-z)) - y[b]) / B
        g = np.concatenate([X[b].T @ r + 0.02 * v[:F], [r.sum()]]); w.append(v - 0.5 * g)
    w = np.array(w); z = w[:, F:] + w[:, :F] @ X[NT:].T
    acc = ((z > 0) == (y[NT:] == 1)).mean(1); loss = (np.log1p(np.exp(z)) - y[NT:] * z).mean(1)
    return dict(state=np.int64(st), pick=pick, w=w, held_acc=acc, held_loss=loss, best_step=np.int32(np.argmax(acc)),
                __stdout__=[f"held-out accuracy {acc[-1]:.3f}, log-loss {loss[0]:.4f} -> {loss[-1]:.4f}"])


# 15 bootstrap percentile interval of Pearson's r with a Park-Miller LCG
def boot_inputs():
    rg = R(817); x = rg.standard_normal(25); return dict(x=x, y=0.6 * x + 0.8 * rg.standard_normal(25), seed=np.int64(2024))
@case("bootstrap_corr_ci", inputs=boot_inputs, tol=(1e-11, 1e-12), outputs=["idx", "r_hat", "rb", "ord", "sorted", "ci", "bias", "corrected"])
def _(x, y, seed):
    N = len(x); B = 200; st = [int(seed)]
    for _ in range(B * N):
        st.append(16807 * st[-1] % 2147483647)
    idx = np.int32([s % N for s in st[1:]]); r_hat = np.corrcoef(x, y)[0, 1]
    I = idx.reshape(B, N); rb = np.array([np.corrcoef(x[i], y[i])[0, 1] for i in I])
    o = np.argsort(rb, kind="stable"); ord_ = np.empty(B, np.int32); ord_[o] = np.arange(B)
    ci = np.percentile(rb, [2.5, 97.5]); bias = rb.mean() - r_hat
    return {"idx": idx, "r_hat": r_hat, "rb": rb, "ord": ord_, "sorted": rb[o], "ci.0": ci[0], "ci.1": ci[1], "bias": bias,
            "corrected": r_hat - bias, "__stdout__": [f"r = {r_hat:.4f}, 95% interval [{ci[0]:.4f}, {ci[1]:.4f}]"]}



# 16 ridge regression with the penalty chosen by 5-fold cross-validation (closures, a pipeline, solve)
def ridge_inputs():
    rg = R(818); X = rg.standard_normal((23, 3)) * np.array([1.0, 3.0, 0.2]) + np.array([0.0, 5.0, -1.0])
    y = X @ np.array([0.8, -0.3, 2.0]) + 0.7 * rg.standard_normal(23)
    return dict(X=X, y=y, grid=np.array([0.01, 0.3, 1.0, 3.0, 10.0, 30.0]))
@case("ridge_kfold_cv", inputs=ridge_inputs, tol=(1e-10, 1e-12), outputs=["Z", "scores", "best", "w_all", "fitted", "r2"])
def _(X, y, grid):
    N = len(X); Z = (X - X.mean(0)) / X.std(0); ybar = y.mean(); n = np.arange(N)
    def fit(lam, fold):
        keep = n % 5 != fold; A = Z[keep].T @ Z[keep] + lam * np.eye(3)
        return np.linalg.solve(A, Z[keep].T @ (y[keep] - ybar))
    scores = np.array([sum(((y - ybar - Z @ fit(l, k))[n % 5 == k] ** 2).sum() for k in range(5)) / N for l in grid])
    best = int(np.argmin(scores)); w = fit(grid[best], -1); fitted = ybar + Z @ w
    r2 = 1 - ((y - fitted) ** 2).sum() / ((y - ybar) ** 2).sum()
    return dict(Z=Z, scores=scores, best=np.int32(best), w_all=w, fitted=fitted, r2=r2,
                __stdout__=[f"best penalty {grid[best]}, cv mse {scores[best]:.5f}, r2 {r2:.4f}"])



# 17 kernel SVM by SMO: partner of largest |E_i - E_j|, alpha_j clipped to [L, H], Platt's threshold
def smo_inputs():
    rg = R(819); X = rg.standard_normal((14, 2)); y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 + 0.3 * rg.standard_normal(14) > 1.2, 1.0, -1.0)
    return dict(X=X, y=y, C=np.float64(2.0), gamma=np.float64(0.8))
@case("svm_smo_rbf", inputs=smo_inputs, tol=(1e-9, 1e-11), outputs=["K", "E", "partner", "alpha", "b", "decision", "train_acc", "support"])
def _(X, y, C, gamma):
    N = len(X); S = 4 * N; K = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    al = [np.zeros(N)]; b = [0.0]; Es, partner = [np.zeros(N)], [0]
    for s in range(1, S + 1):
        a = al[-1].copy(); E = (a * y) @ K + b[-1] - y; i = (s - 1) % N
        score = np.abs(E[i] - E); score[i] = -1; j = int(np.argmax(score))
        ai, aj = a[i], a[j]
        lo, hi = (max(0, aj - ai), min(C, C + aj - ai)) if y[i] != y[j] else (max(0, ai + aj - C), min(C, ai + aj))
        eta = 2 * K[i, j] - K[i, i] - K[j, j]
        aj2 = min(max(aj - y[j] * (E[i] - E[j]) / eta, lo), hi) if eta < 0 and hi > lo else aj
        ai2 = ai + y[i] * y[j] * (aj - aj2)
        b1 = b[-1] - E[i] - y[i] * (ai2 - ai) * K[i, i] - y[j] * (aj2 - aj) * K[i, j]
        b2 = b[-1] - E[j] - y[i] * (ai2 - ai) * K[i, j] - y[j] * (aj2 - aj) * K[j, j]
        b3 = b1 if 0 < ai2 < C else b2 if 0 < aj2 < C else 0.5 * (b1 + b2)
        a[i], a[j] = ai2, aj2; al.append(a); b.append(b3); Es.append(E); partner.append(j)
    af = al[-1]; dec = (af * y) @ K + b[-1]; acc = (dec * y > 0).mean(); sv = int((af > 1e-12).sum())
    return dict(K=K, E=np.array(Es), partner=np.int32(partner), alpha=np.array(al), b=np.array(b), decision=dec, train_acc=acc,
                support=np.int32(sv), __stdout__=[f"train accuracy {acc:.3f}, {sv} support vectors"])



# 18 linear-chain CRF Viterbi decoding in f32: back-pointers in i16, the path walked back
def vit_inputs():
    rg = R(820); T, F, S = 11, 4, 3
    return dict(Xf=rg.standard_normal((T, F)).astype(np.float32), W=(rg.standard_normal((S, F)) * 0.8).astype(np.float32),
                A=(rg.standard_normal((S, S)) * 0.6).astype(np.float32), gold=rg.integers(0, S, T).astype(np.int32))
@case("crf_viterbi_decode", inputs=vit_inputs, tol=(1e-5, 1e-5),
      outputs=["E", "V", "back", "path", "score", "gold_score", "per_tag", "ends", "accuracy"])
def _(Xf, W, A, gold):
    X64, W64, A64 = (a.astype(np.float64) for a in (Xf, W, A)); T, S = len(Xf), len(A)
    E = X64 @ W64.T; V = np.zeros((T, S)); back = np.zeros((T, S), np.int16); V[0] = E[0]
    for t in range(1, T):
        sc = V[t - 1][:, None] + A64; back[t] = sc.argmax(0); V[t] = sc.max(0) + E[t]
    path = [int(V[-1].argmax())]
    for t in range(T - 1, 0, -1): path.append(int(back[t, path[-1]]))
    path = np.int32(path[::-1]); score = V[-1].max()
    gs = E[np.arange(T), gold].sum() + A64[gold[:-1], gold[1:]].sum(); acc = (path == gold).mean()
    ends = {(True, True): 0, (True, False): 1, (False, True): 2}.get((path[0] == 0, path[-1] == 0), 3)
    return dict(E=E, V=V, back=back, path=path, score=score, gold_score=gs, per_tag=np.bincount(path, minlength=S).astype(np.int32),
                ends=np.int32(ends), accuracy=acc, __stdout__=[f"accuracy {acc:.3f}"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
