"""Hold-out style programs (tests/programs/holdout/*.ein), written as users of the language would
write them and checked against NumPy computed here: numerical methods (Jacobi, Gauss-Seidel,
conjugate gradient, RK4, Newton shooting, Horner, Thomas, Simpson, bisection, power iteration,
Verlet), dynamic programs (knapsack, LCS with its walk back, Viterbi, Floyd-Warshall), statistics
(Welford, EWMA, histograms, quantiles by ranks, Kahan sums), network pieces (layer norm, masked
attention, embeddings, conv + pool + dense, cross entropy) with their derivatives, and integer,
bool, string, pattern and mixed-precision programs. Each case states its tolerance (`tol`, rtol
and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

import einc
from tests.programs import FOLDER

HOLDOUT = FOLDER / "holdout"
def registry(cases):
    """A decorator `@case(name, inputs=..., **options)` entering its NumPy reference in `cases`."""
    def case(name, inputs=lambda: {}, **kw):
        def deco(ref):
            cases[name] = dict(inputs=inputs, ref=ref, **kw)
            return ref
        return deco
    return case
CASES = {}
case = registry(CASES)
R = np.random.default_rng

def spd(n, seed, dt=np.float64):
    a = R(seed).standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dt)

def dd(n, seed):
    a = R(seed).standard_normal((n, n))
    return (a + np.diag(np.abs(a).sum(1) + 1.0))

# 1 Jacobi
@case("jacobi", inputs=lambda: dict(A=dd(6, 1), b=R(2).standard_normal(6)), tol=(1e-10, 1e-12))
def _(A, b):
    x = np.zeros(6); xs = [x]
    D = np.diag(A); Off = A - np.diag(D)
    for _ in range(39):
        x = (b - Off @ x) / D; xs.append(x)
    return dict(x=np.array(xs), sol=x, residual=np.max(np.abs(A @ x - b)))

# 2 Gauss-Seidel
@case("gauss_seidel", inputs=lambda: dict(A=dd(5, 3), b=R(4).standard_normal(5)), tol=(1e-10, 1e-12))
def _(A, b):
    n = 5; x = np.zeros(n); xs = [x.copy()]
    for _ in range(24):
        for i in range(n):
            x[i] = (b[i] - A[i, :i] @ x[:i] - A[i, i+1:] @ x[i+1:]) / A[i, i]
        xs.append(x.copy())
    return dict(x=np.array(xs), last=x)

# 3 Conjugate gradient
@case("conjugate_gradient", inputs=lambda: dict(A=spd(7, 5), b=R(6).standard_normal(7)), outputs=["answer", "alpha"], tol=(1e-9, 1e-11))
def _(A, b):
    x = np.zeros(7); r = b.copy(); p = b.copy(); al = []
    for k in range(4):
        Ap = A @ p; a = (r @ r) / (p @ Ap); al.append(a)
        x = x + a * p; rn = r - a * Ap; beta = (rn @ rn) / (r @ r); p = rn + beta * p; r = rn
    return dict(answer=x, alpha=np.array(al))

# 4 RK4 damped pendulum + derivative wrt damping
def pend_np(c, th0=1.0, om0=0.0, dt=0.01, n=300):
    def f(th, om): return om, -c * om - 9.81 * np.sin(th)
    th, om = th0, om0
    for _ in range(n - 1):
        k1 = f(th, om); k2 = f(th + dt/2*k1[0], om + dt/2*k1[1])
        k3 = f(th + dt/2*k2[0], om + dt/2*k2[1]); k4 = f(th + dt*k3[0], om + dt*k3[1])
        th, om = th + dt/6*(k1[0]+2*k2[0]+2*k3[0]+k4[0]), om + dt/6*(k1[1]+2*k2[1]+2*k3[1]+k4[1])
    return th, om
@case("rk4_pendulum", inputs=lambda: dict(c=np.float64(0.7)), outputs=["final_theta", "dtheta_dc"], tol=(1e-7, 1e-9))
def _(c):
    h = 1e-6
    return dict(final_theta=pend_np(c)[0], dtheta_dc=(pend_np(c + h)[0] - pend_np(c - h)[0]) / (2*h))

# 5 shooting with Newton, derivative through an inner recurrence
def shoot_np(s, n=50):
    h = 1.0 / n; y, v = 4.0, s
    for _ in range(n):
        y, v = y + h * v, v + h * 1.5 * y * y
    return y
@case("shooting_newton", outputs=["slope", "left"], tol=(1e-8, 1e-9))
def _():
    s = -10.0; hh = 1e-7
    for _ in range(7):
        F = shoot_np(s) - 1.0; d = (shoot_np(s + hh) - shoot_np(s - hh)) / (2 * hh); s = s - F / d
    return dict(slope=s, left=shoot_np(s) - 1.0)

# 6 Horner + derivative
@case("horner", inputs=lambda: dict(coef=np.float32([2, -1, 0.5, 3, -0.25]), x=np.float32([-1.5, -0.3, 0.0, 0.7, 1.2, 2.0])),
     outputs=["y", "dy"], tol=(1e-5, 1e-5), vk=True)
def _(coef, x):
    return dict(y=np.polyval(coef.astype(np.float64), x), dy=np.polyval(np.polyder(coef.astype(np.float64)), x))

# 7 cumulative product
@case("cumprod", inputs=lambda: dict(x=np.float32([1.1, 0.9, 1.3, -0.7, 1.05, 0.8, 1.2])), tol=(1e-5, 1e-6))
def _(x):
    x64 = x.astype(np.float64); c = np.cumprod(x64)
    return dict(c=c, c2=c, total=c[-1], grad=np.array([np.prod(np.delete(x64, i)) for i in range(len(x))]))

# 8 knapsack
@case("knapsack", inputs=lambda: dict(wt=np.int32([3, 4, 5, 9, 4, 2]), val=np.int32([3, 4, 4, 10, 4, 1])))
def _(wt, val):
    C = 15; n = len(wt); V = np.zeros((n + 1, C + 1), np.int32)
    for i in range(1, n + 1):
        for w in range(C + 1):
            V[i, w] = V[i-1, w] if wt[i-1] > w else max(V[i-1, w], V[i-1, w-wt[i-1]] + val[i-1])
    return dict(V=V, best=V[n, C])

# 9 LCS with reconstruction
@case("lcs", inputs=lambda: dict(a=np.int32([1, 3, 4, 1, 2, 1, 3]), b=np.int32([3, 4, 1, 2, 1, 3, 5, 1])), outputs=["length", "emitted"])
def _(a, b):
    M, N = len(a), len(b); L = np.zeros((M+1, N+1), np.int32)
    for i in range(1, M+1):
        for j in range(1, N+1):
            L[i, j] = L[i-1, j-1] + 1 if a[i-1] == b[j-1] else max(L[i-1, j], L[i, j-1])
    i, j = M, N; em = []
    for s in range(1, M + N + 1):
        if i == 0 or j == 0: em.append(-1); continue
        if a[i-1] == b[j-1]: i, j = i-1, j-1; em.append(a[i])
        elif L[i-1, j] >= L[i, j-1]: i -= 1; em.append(-1)
        else: j -= 1; em.append(-1)
    return dict(length=L[M, N], emitted=np.int32(em))

# 10 Viterbi in log space
def vit_inputs():
    rg = R(11); S, O, T = 3, 4, 9
    A = rg.random((S, S)) + 0.2; A /= A.sum(1, keepdims=True)
    B = rg.random((S, O)) + 0.2; B /= B.sum(1, keepdims=True)
    pi = np.array([0.5, 0.3, 0.2])
    return dict(logA=np.log(A).astype(np.float32), logB=np.log(B).astype(np.float32),
                logpi=np.log(pi).astype(np.float32), obs=rg.integers(0, O, T).astype(np.int32))
@case("viterbi", inputs=vit_inputs, outputs=["path", "best"], tol=(1e-5, 1e-5), vk=True)
def _(logA, logB, logpi, obs):
    S = 3; T = len(obs); d = np.zeros((T, S), np.float32); psi = np.zeros((T, S), np.int32)
    d[0] = logpi + logB[:, obs[0]]
    for t in range(1, T):
        sc = d[t-1][:, None] + logA
        psi[t] = sc.argmax(0); d[t] = sc.max(0) + logB[:, obs[t]]
    path = [int(d[-1].argmax())]
    for t in range(T - 1, 0, -1): path.append(psi[t, path[-1]])
    return dict(path=np.int32(path[::-1]), best=d[-1].max())

# 11 Floyd-Warshall
def fw_inputs():
    rg = R(12); V = 6
    W = rg.uniform(1, 10, (V, V)).astype(np.float32)
    W[rg.random((V, V)) < 0.5] = 1.0e6
    np.fill_diagonal(W, 0)
    return dict(W=W)
@case("floyd_warshall", inputs=fw_inputs, outputs=["dist", "reachable"], tol=(1e-6, 1e-4))
def _(W):
    D = W.copy(); V = len(W)
    for k in range(V):
        D = np.minimum(D, D[:, k:k+1] + D[k:k+1, :])
    return dict(dist=D, reachable=D < 1e5)

# 12 Welford
@case("welford", inputs=lambda: dict(x=R(13).standard_normal(40) * 3 + 1e4), outputs=["mean", "var", "final_sd"], tol=(1e-9, 1e-9))
def _(x):
    v = np.array([0.0] + [np.var(x[:t+1], ddof=1) for t in range(1, len(x))])
    return dict(mean=np.cumsum(x) / np.arange(1, len(x) + 1), var=v, final_sd=np.std(x, ddof=1))

# 13 EWMA with derivative wrt alpha
@case("ewma", inputs=lambda: dict(x=R(14).standard_normal(30).astype(np.float32), alpha=np.float32(0.3)), tol=(2e-4, 2e-5))
def _(x, alpha):
    x = x.astype(np.float64)
    def run(a):
        s = [float(x[0])]; v = [0.0]
        for t in range(1, len(x)):
            d = x[t] - s[-1]
            v.append((1 - a) * (v[-1] + a * d * d)); s.append(a * x[t] + (1 - a) * s[-1])
        return np.array(s), np.array(v)
    a0 = float(alpha); s, v = run(a0); h = 1e-6
    return dict(s=s, v=v, last=s[-1], dlast=(run(a0 + h)[0][-1] - run(a0 - h)[0][-1]) / (2 * h))

# 14 histogram via comparisons, bins from a comprehension
@case("histogram", inputs=lambda: dict(x=(R(15).standard_normal(500) * 1.2).astype(np.float32)), outputs=["counts", "outside", "mode_bin"], vk=True)
def _(x):
    edges = (np.float32(-3.0) + np.float32(0.5) * np.arange(13, dtype=np.float32)).astype(np.float32)
    c = np.array([np.sum((x >= edges[b]) & (x < edges[b+1])) for b in range(12)], np.int32)
    return dict(counts=c, outside=np.int32(len(x) - c.sum()), mode_bin=np.int32(np.argmax(c)))

# 15 quantiles by ranking
@case("quantiles", inputs=lambda: dict(x=np.round(R(16).standard_normal(21) * 4).astype(np.float32)), outputs=["sorted", "median", "q90"], tol=(1e-5, 1e-5))
def _(x):
    return dict(sorted=np.sort(x), median=np.median(x), q90=np.quantile(x.astype(np.float64), 0.9))

# 16 layer norm by hand vs std, gradients
@case("layer_norm", inputs=lambda: dict(X=R(17).standard_normal((3, 8)).astype(np.float32), g=R(18).uniform(0.5, 1.5, 8).astype(np.float32),
                          beta=R(19).standard_normal(8).astype(np.float32)), tol=(2e-4, 2e-4))
def _(X, g, beta):
    X = X.astype(np.float64); w = np.arange(8.0)
    def fwd(X, g):
        mu = X.mean(1, keepdims=True); var = X.var(1, keepdims=True)
        return (X - mu) / np.sqrt(var + 1e-5) * g + beta
    def loss(X, g): return (fwd(X, g) ** 2 * w).sum()
    Y = fwd(X, g); h = 1e-6
    dg = np.array([(loss(X, g + h*e) - loss(X, g - h*e)) / (2*h) for e in np.eye(8)])
    dX = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X); E[idx] = h; dX[idx] = (loss(X + E, g) - loss(X - E, g)) / (2*h)
    return dict(Y=Y, Ystd=Y, loss=loss(X, g), dg=dg, dX=dX)

# 17 causal attention with derivative wrt Q
@case("causal_attention", inputs=lambda: {k: R(20 + n).standard_normal((5, 4)).astype(np.float32) for n, k in enumerate("QKV")},
     outputs=["w", "out", "dQ"], tol=(2e-4, 2e-5), vk=True)
def _(Q, K, V):
    def fwd(Q):
        s = Q @ K.T.astype(np.float64) / 2.0
        s = np.where(np.tril(np.ones((5, 5))) > 0, s, -1e9)
        w = np.exp(s - s.max(1, keepdims=True)); w /= w.sum(1, keepdims=True)
        return w, w @ V
    Q = Q.astype(np.float64); w, o = fwd(Q); h = 1e-6; dQ = np.zeros_like(Q)
    for idx in np.ndindex(Q.shape):
        E = np.zeros_like(Q); E[idx] = h
        dQ[idx] = ((fwd(Q + E)[1] ** 2).sum() - (fwd(Q - E)[1] ** 2).sum()) / (2 * h)
    return dict(w=w, out=o, dQ=dQ)

# 18 embeddings, mean pooling, dense, gradient wrt table
@case("embedding_bag", inputs=lambda: dict(ids=np.int32([3, 1, 3, 0, 5, 3]), table=R(30).standard_normal((7, 4)).astype(np.float32),
                          Wd=R(31).standard_normal((4, 3)).astype(np.float32)), outputs=["logits", "dtable"], tol=(1e-4, 1e-5))
def _(ids, table, Wd):
    t64 = table.astype(np.float64); pooled = t64[ids].mean(0); logits = pooled @ Wd
    g_pooled = Wd @ (2 * logits); dt = np.zeros_like(t64)
    for i in ids: dt[i] += g_pooled / len(ids)
    return dict(logits=logits, dtable=dt)

# 19 conv + relu + maxpool + dense, gradient wrt kernel
@case("conv_pool_dense", inputs=lambda: dict(img=R(32).standard_normal((10, 10)).astype(np.float32), ker=R(33).standard_normal((3, 3)).astype(np.float32),
                          Wd=R(34).standard_normal((16, 2)).astype(np.float32)), outputs=["pool", "out", "dker"], tol=(1e-4, 1e-4), vk=True)
def _(img, ker, Wd):
    img = img.astype(np.float64)
    def fwd(ker):
        conv = np.array([[np.sum(img[i:i+3, j:j+3] * ker) for j in range(8)] for i in range(8)])
        act = np.maximum(conv, 0); pool = act.reshape(4, 2, 4, 2).max((1, 3))
        out = pool.reshape(16) @ Wd
        return pool, out, (out[0] - 1) ** 2 + out[1] ** 2
    pool, out, _l = fwd(ker.astype(np.float64)); h = 1e-5; dk = np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        E = np.zeros((3, 3)); E[idx] = h
        dk[idx] = (fwd(ker + E)[2] - fwd(ker - E)[2]) / (2 * h)
    return dict(pool=pool, out=out, dker=dk)

# 20 softmax cross-entropy and its gradient
@case("softmax_xent", inputs=lambda: dict(logits=(R(35).standard_normal((4, 5)) * 3).astype(np.float32), labels=np.int32([0, 4, 2, 2])),
     outputs=["loss", "grad"], tol=(1e-5, 1e-6), vk=True)
def _(logits, labels):
    z = logits.astype(np.float64); p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    loss = -np.mean(np.log(p[np.arange(4), labels])); g = p.copy(); g[np.arange(4), labels] -= 1
    return dict(loss=loss, grad=g / 4)

# 21 strings and bools at build time
@case("strings_bools", inputs=lambda: dict(x=np.float32([1.0, -2.0, 6.0, 3.0])), outputs=["palindrome", "vowels", "any_neg", "all_small", "flags"])
def _(x):
    return dict(palindrome=np.bool_(True), vowels=np.int32(5), any_neg=np.bool_(True), all_small=np.bool_(True),
                flags=(x > 0) & ~(x > 5), __stdout__=["racecar palindrome: true, 5 vowels and 4 words"])

# 22 integer programs: Collatz steps and Euclid's gcd as recurrences
@case("collatz_gcd", inputs=lambda: dict(n=np.int32([1, 6, 7, 27, 12, 19]), a=np.int32([12, 270, 17, 1071, 0, 99]), b=np.int32([18, 192, 5, 462, 7, 0])),
     outputs=["steps", "g", "peak"], vk=True)
def _(n, a, b):
    import math
    def col(k):
        s, p = 0, k
        for _ in range(120):
            if k == 1: break
            k = k // 2 if k % 2 == 0 else 3 * k + 1; s += 1; p = max(p, k)
        return s, p
    return dict(steps=np.int32([col(int(k))[0] for k in n]), peak=np.int32([col(int(k))[1] for k in n]),
                g=np.int32([math.gcd(int(p), int(q)) for p, q in zip(a, b)]))

# 23 patterns, closures, pipelines
@case("patterns_closures", inputs=lambda: dict(temps=np.int32([-20, -10, -9, 0, 1, 4, 7, 14, 15, 16, 18, 19, 40, -3])), vk=True)
def _(temps):
    def band(t):
        if t <= -10: return 0
        if -9 <= t <= 0: return 1
        if 1 <= t <= 15 and t % 2 == 0: return 2
        if 1 <= t <= 15: return 3
        if t in (16, 17, 18): return 4
        return 5
    # Einlang % keeps the dividend's sign: -3 % 2 == -1, so not even
    def code(t):
        if t > 0: return 1 if t % 2 == 0 else 2
        return 3
    return dict(bands=np.int32([band(t) for t in temps]), piped=(temps + 3) * 2, composed=temps + 2,
                pair_code=np.int32([code(int(t)) for t in temps]))

# 24 f16 / f64 / i64 mixes
@case("mixed_precision", inputs=lambda: dict(h=np.float16([0.5, 1.25, -3.0, 100.0, 0.001]), w=np.float64([1e-3, 2.5, 1e6, -4.0, 7.0]),
                          big=np.int64([1, 2**40, -5, 3 * 2**33, 0])), tol=(1e-3, 1e-6))
def _(h, w, big):
    with np.errstate(over="ignore"):     # 1e6 is inf in f16, as in the program
        back = w.astype(np.float32).astype(np.float16)
    return dict(wide=h.astype(np.float64) * w, total=np.sum(h.astype(np.float64) * w), halves=(h * h).astype(np.float32),
                acc=np.sum(h.astype(np.float32) ** 2), ids=big * 3 + np.arange(5), back=back,
                mean16=np.float16(h.astype(np.float32).mean()))

# 25 prints and asserts
@case("prints_asserts", inputs=lambda: dict(A=dd(4, 40), b=np.ones(4)), outputs=["out"], tol=(1e-8, 1e-10))
def _(A, b):
    x = np.linalg.solve(A, b)
    return dict(out=x, __stdout__=[f"residual below 1e-8: true; first component {x[0]:.6f}"])

# 26 named dims: time-series with a window, built with --dim and without
def named_inputs(): return dict(prices=(100 * np.exp(np.cumsum(R(41).standard_normal((30, 3)) * 0.02, 0))).astype(np.float32))
def named_ref(prices):
    p = prices.astype(np.float64); ma = np.array([p[t:t+5].mean(0) for t in range(26)])
    ret = np.vstack([np.zeros((1, 3)), p[1:] / p[:-1] - 1]); peak = np.maximum.accumulate(p, 0)
    return dict(ma=ma, ret=ret, peak=peak, drawdown=np.max(1 - p / peak), vol=np.sqrt((ret[1:] ** 2).sum(0) / 29))
CASES["named_dims_free"] = dict(file="named_dims", inputs=named_inputs, ref=named_ref, tol=(1e-4, 1e-5))
CASES["named_dims_fixed"] = dict(file="named_dims", inputs=named_inputs, ref=named_ref, tol=(1e-4, 1e-5), dims={"Days": 30, "Assets": 3})

# 27 bisection with fixed iterations (bool branches) on a vector of parameters
@case("bisection", inputs=lambda: dict(c=np.array([1.0, 8.0, 27.5, 100.0, 0.001])), outputs=["root"], tol=(1e-12, 1e-12))
def _(c):
    return dict(root=np.cbrt(c))

# 28 composite Simpson integration, derivative wrt a parameter
@case("simpson", inputs=lambda: dict(a=np.float64(0.8)), outputs=["integral", "dI"], tol=(1e-6, 1e-9))
def _(a):
    # exact integrals over [0, 2]; Simpson with 64 panels is good to ~1e-7 here
    import math
    def I(a): return (3 - math.exp(-2 * a) * (a * math.sin(6) + 3 * math.cos(6))) / (a * a + 9)
    h = 1e-6
    return dict(integral=I(a), dI=(I(a + h) - I(a - h)) / (2 * h))

# 29 power iteration with normalisation, Rayleigh quotient
@case("power_iteration", inputs=lambda: dict(A=spd(5, 50) + np.diag([20.0, 0, 0, 0, 0])), outputs=["lambda", "vec"], tol=(1e-8, 1e-8))
def _(A):
    e, V = np.linalg.eigh(A); v = V[:, -1] * np.sign(V[:, -1].sum())
    return dict(**{"lambda": e[-1]}, vec=v)

# 30 Thomas algorithm: forward sweep and back substitution (reversed index)
@case("thomas", inputs=lambda: dict(a=R(51).uniform(-1, 1, 8), b=R(52).uniform(4, 5, 8), c=R(53).uniform(-1, 1, 8), d=R(54).standard_normal(8)),
     outputs=["x", "dx0"], tol=(1e-10, 1e-12))
def _(a, b, c, d):
    n = 8; M = np.diag(b) + np.diag(a[1:], -1) + np.diag(c[:-1], 1)
    return dict(x=np.linalg.solve(M, d), dx0=np.linalg.inv(M)[0])

# 31 logistic regression trained by gradient descent in a recurrence
@case("logreg_training", inputs=lambda: (lambda X: dict(X=X, y=(X @ np.float32([1.5, -2.0, 0.5]) > 0).astype(np.float32)))(R(55).standard_normal((40, 3)).astype(np.float32)),
     outputs=["w", "final_loss"], tol=(1e-4, 1e-5), vk=True)
def _(X, y):
    X = X.astype(np.float64); w = np.zeros(3); ws = [w]
    def L(w):
        z = X @ w; return np.mean(np.log1p(np.exp(-z)) * y + np.log1p(np.exp(z)) * (1 - y))
    for _ in range(29):
        p = 1 / (1 + np.exp(-(X @ w))); g = X.T @ (p - y) / len(y); w = w - 0.5 * g; ws.append(w)
    return dict(w=np.array(ws), final_loss=L(w))

# 32 velocity Verlet orbit (two bodies reduced to one), energy check
@case("verlet_orbit", outputs=["drift", "end"], tol=(1e-9, 1e-12))
def _():
    dt = 0.001; q = np.array([1.0, 0.0]); p = np.array([0.0, 1.1]); E = []
    acc = lambda q: -q / np.sqrt(q @ q) ** 3
    en = lambda q, p: 0.5 * p @ p - 1 / np.sqrt(q @ q)
    E.append(en(q, p))
    for _ in range(4999):
        h = p + 0.5 * dt * acc(q); q = q + dt * h; p = h + 0.5 * dt * acc(q); E.append(en(q, p))
    return dict(drift=max(E) - min(E), end=q)

# 33 median-of-three filter and a centred moving average with clamped edges
@case("median_filter", inputs=lambda: dict(x=np.float32([1, 9, 2, 3, 8, 7, 0, 4, 5, 6])), tol=(1e-6, 1e-6))
def _(x):
    med = np.zeros(9, np.float32); med[1:] = [np.median(x[i-1:i+2]) for i in range(1, 9)]
    sm = np.array([np.mean([x[min(max(i + k - 1, 0), 9)] for k in range(3)]) for i in range(10)])
    return dict(med=med, smooth=sm)

# 34 matrix powers by a recurrence of matrices; trace; a Markov absorption probability
@case("matrix_power", inputs=lambda: dict(P=(lambda A: A / A.sum(1, keepdims=True))(R(56).random((4, 4)) + 0.1)), outputs=["P32", "tr"], tol=(1e-10, 1e-12))
def _(P):
    return dict(P32=np.linalg.matrix_power(P, 32), tr=np.array([np.trace(np.linalg.matrix_power(P, k)) for k in range(33)]))

# 35 std cholesky and solve_cholesky against numpy
@case("cholesky_solve", inputs=lambda: dict(A=spd(6, 57, np.float32), b=R(58).standard_normal(6).astype(np.float32)), tol=(2e-4, 2e-5))
def _(A, b):
    A = A.astype(np.float64)
    return dict(L=np.linalg.cholesky(A), x=np.linalg.solve(A, b), recon=A)

# 36 MLP with std gelu, mse loss, gradients of first layer
@case("mlp_gelu", inputs=lambda: dict(X=R(60).standard_normal((4, 5)).astype(np.float32), W1=R(61).standard_normal((5, 6)).astype(np.float32) * 0.5,
                          b1=R(62).standard_normal(6).astype(np.float32) * 0.1, W2=R(63).standard_normal((6, 2)).astype(np.float32),
                          Y=R(64).standard_normal((4, 2)).astype(np.float32)), outputs=["loss", "gW1", "gb1"], tol=(5e-4, 5e-5))
def _(X, W1, b1, W2, Y):
    from math import erf
    verf = np.vectorize(erf)
    g = lambda z: 0.5 * z * (1 + verf(z / np.sqrt(2)))
    def L(W1, b1):
        out = g(X @ W1 + b1) @ W2; return np.mean((out - Y) ** 2)
    W1 = W1.astype(np.float64); b1 = b1.astype(np.float64); h = 1e-6
    gW = np.zeros_like(W1); gb = np.zeros_like(b1)
    for idx in np.ndindex(W1.shape):
        E = np.zeros_like(W1); E[idx] = h; gW[idx] = (L(W1 + E, b1) - L(W1 - E, b1)) / (2 * h)
    for k in range(6):
        E = np.zeros(6); E[k] = h; gb[k] = (L(W1, b1 + E) - L(W1, b1 - E)) / (2 * h)
    return dict(loss=L(W1, b1), gW1=gW, gb1=gb)

# 37 sieve: primes by trial division with all[], counting and a prime-gap maximum
@case("primes", outputs=["is_prime", "count", "twin"], vk=True)
def _():
    ip = np.array([n >= 2 and all(n % d for d in range(2, n)) for n in range(60)])
    return dict(is_prime=ip, count=np.int32(ip.sum()), twin=np.int32(sum(ip[n] and ip[n + 2] for n in range(58))))

# 38 Kahan compensated summation in f32 against the naive running sum
@case("kahan", inputs=lambda: dict(x=np.concatenate([[np.float32(1e6)], np.full(3000, 0.1, np.float32)]).astype(np.float32)),
     outputs=["kahan", "plain"], tol=(0, 0))
def _(x):
    s = np.float32(x[0]); c = np.float32(0); n = np.float32(x[0])
    for v in x[1:]:
        y = np.float32(v - c); t = np.float32(s + y); c = np.float32(np.float32(t - s) - y); s = t; n = np.float32(n + v)
    return dict(kahan=s, plain=n)

# 39 integer division, remainder and std mod on negative numbers, i64 sums
@case("int_arith", inputs=lambda: dict(a=np.int32([7, -7, 7, -7, 0, 13, -1]), b=np.int32([2, 2, -2, -2, 5, -4, 3])))
def _(a, b):
    q = np.trunc(a / b).astype(np.int32); r = (a - q * b).astype(np.int32)
    return dict(q=q, r=r, m=np.mod(a, b).astype(np.int32), back=np.ones(7, bool),
                wide=np.int64(a.astype(np.int64).sum() * 100000000), p=(b ** 3).astype(np.int32))

# 40 std topk and argmax over rows, onehot accuracy
@case("topk_argmax", inputs=lambda: dict(scores=R(70).standard_normal((5, 6)).astype(np.float32), labels=np.int32([0, 1, 2, 3, 4])), outputs=["pred", "correct", "top"])
def _(scores, labels):
    pred = scores.argmax(1)
    order = np.argsort(-scores, 1, kind="stable")[:, :2]
    return {"pred": pred, "correct": np.int32((pred == labels).sum()), "top.0": np.take_along_axis(scores, order, 1), "top.1": order}

# 41 multi-head attention by hand with a padding mask, batch and heads as named dims
@case("mha_masked", inputs=lambda: dict(X=R(71).standard_normal((2, 4, 6)).astype(np.float32), Wq=R(72).standard_normal((6, 6)).astype(np.float32) * 0.4,
                          Wk=R(73).standard_normal((6, 6)).astype(np.float32) * 0.4, Wv=R(74).standard_normal((6, 6)).astype(np.float32),
                          valid=np.int32([4, 2])), outputs=["p", "o"], tol=(1e-4, 1e-5), vk=True)
def _(X, Wq, Wk, Wv, valid):
    X = X.astype(np.float64)
    sp = lambda W: (X @ W).reshape(2, 4, 2, 3).transpose(0, 2, 1, 3)
    q, k, v = sp(Wq), sp(Wk), sp(Wv)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(3)
    mask = np.arange(4)[None, None, None, :] < valid[:, None, None, None]
    s = np.where(mask, s, -1e9); p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    return dict(p=p, o=(p @ v).transpose(0, 2, 1, 3))


SIZED = "llvm-cpu, sized"     # built for the inputs' sizes (its named dims fixed), as einc.jit builds


def params(cases):
    """(name, target) pairs: every case on llvm-cpu, `vk` cases on vulkan-spirv too, `sized`
    ones on llvm-cpu built for their inputs' sizes too."""
    return [(name, "llvm-cpu") for name in cases] + [
        pytest.param(name, "vulkan-spirv", marks=pytest.mark.vulkan) for name, c in cases.items() if c.get("vk")] + [
        (name, SIZED) for name, c in cases.items() if c.get("sized")]


def sizes_of(path, case, inputs) -> dict:
    """The named dims fixed to the sizes `inputs` have, beside the case's own `dims`."""
    from einc.driver import check_program
    from einc.specialize import input_signature, size_signature
    signature = input_signature(check_program(str(path), outputs=case.get("outputs"), dims=case.get("dims"))[1])
    shapes = {spec.name: np.shape(inputs[spec.name]) for spec in signature.inputs}
    return {**(case.get("dims") or {}), **size_signature(signature, shapes)}


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)


def check_case(case, name, target, capfd):
    """Builds holdout/<name>.ein for `target` (SIZED: llvm-cpu, for the inputs' sizes), runs it on the
    case's inputs and compares every output its reference names (stdout lines too) at the case's
    tolerance. A case with `file` naming a program beside its own modules (`mod`) is compiled from
    that file."""
    path = HOLDOUT / f"{case.get('file', name)}.ein"
    source = path if path.parent != HOLDOUT else path.read_text(encoding="utf-8")
    inputs = case["inputs"]()
    dims = sizes_of(path, case, inputs) if target == SIZED else case.get("dims")
    artifact = einc.compile(source, target="llvm-cpu" if target == SIZED else target, dims=dims,
                            outputs=case.get("outputs"))
    out = einc.load(artifact.vmfb, device="vulkan" if target == "vulkan-spirv" else None)(**inputs)
    printed = capfd.readouterr().out
    rtol, atol = case.get("tol", (1e-5, 1e-6))
    for key, want in case["ref"](**inputs).items():
        if key == "__stdout__":
            assert all(line in printed for line in want), printed
            continue
        got, want = np.asarray(out[key]), np.asarray(want)
        assert got.shape == want.shape, key
        if got.dtype.kind in "biu" or want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=key)
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, err_msg=key)
