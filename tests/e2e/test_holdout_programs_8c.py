"""Hold-out programs, eighth round (statistics and classic machine learning): isotonic regression by
pool-adjacent-violators with a stack carried by a recurrence, each checked against NumPy computed
here. Each case states its tolerance (`tol`, rtol and atol; integers and bools compare exactly);
`vk` cases run on vulkan-spirv too."""
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


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
