"""Hold-out programs, second round (tests/programs/holdout/*.ein), written as users of the language
would write them and checked against NumPy computed here: signal processing (FIR and biquad IIR
filters, autocorrelation, DFT and Goertzel), resampling and Monte Carlo with integer LCGs, grid
and particle physics, finance recurrences, dynamic programs on sequences and graphs, and
numerical methods by hand. Each case states its tolerance (`tol`, rtol and atol; integers and
bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry, spd

CASES = {}
case = registry(CASES)


def fd(f, x, h=1e-6):
    """Central difference of the scalar or array function f at the scalar x."""
    return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)


# 1 windowed-sinc FIR filter
@case("fir_filter", inputs=lambda: dict(x=R(101).standard_normal(40).astype(np.float32)), tol=(1e-4, 1e-5), vk=True)
def _(x):
    M = 15; k = np.arange(M); c = (M - 1) / 2
    ham = 0.54 - 0.46 * np.cos(2 * np.pi * k / (M - 1))
    ideal = np.where(k == c, 0.4, np.sin(2 * np.pi * 0.2 * (k - c)) / (np.pi * np.where(k == c, 1, k - c)))
    taps = ham * ideal / np.sum(ham * ideal)
    y = np.convolve(x.astype(np.float64), taps)[:len(x)]
    return dict(taps=taps, y=y, dc_gain=taps.sum(), energy=(y ** 2).sum())


# 2 biquad low-pass, gradients wrt the input and the Q factor
def biquad_np(x, f0, q):
    w0 = 2 * np.pi * f0; al = np.sin(w0) / (2 * q); cw = np.cos(w0); a0 = 1 + al
    b = np.array([(1 - cw) / 2, 1 - cw, (1 - cw) / 2]) / a0; a1, a2 = -2 * cw / a0, (1 - al) / a0
    y = np.zeros(len(x)); xp = np.concatenate([[0.0, 0.0], x]); yp = [0.0, 0.0]
    for n in range(len(x)):
        y[n] = b[0] * xp[n + 2] + b[1] * xp[n + 1] + b[2] * xp[n] - a1 * yp[-1] - a2 * yp[-2]; yp.append(y[n])
    return y
@case("iir_biquad", inputs=lambda: dict(x=R(102).standard_normal(50), f0=np.float64(0.1), q=np.float64(0.9)),
      outputs=["y", "energy", "dE_dx", "dE_dq"], tol=(1e-7, 1e-9))
def _(x, f0, q):
    y = biquad_np(x, f0, q); N = len(x)
    h = biquad_np(np.eye(N)[0], f0, q)                   # impulse response: y = H x, H Toeplitz
    H = np.array([[h[n - m] if n >= m else 0.0 for m in range(N)] for n in range(N)])
    return dict(y=y, energy=(y ** 2).sum(), dE_dx=2 * H.T @ y, dE_dq=fd(lambda q: (biquad_np(x, f0, q) ** 2).sum(), q))


# 3 autocorrelation and a Yule-Walker AR(2) fit
def ar2_series():
    e = R(103).standard_normal(300); x = np.zeros(300)
    for t in range(2, 300): x[t] = 0.6 * x[t - 1] - 0.3 * x[t - 2] + e[t]
    return dict(x=x + 2.0)
@case("autocorr_ar2", inputs=ar2_series, outputs=["rho", "phi", "sigma2"], tol=(1e-9, 1e-11))
def _(x):
    N = len(x); d = x - x.mean()
    acov = np.array([d[:N - l] @ d[l:] / N for l in range(7)]); rho = acov / acov[0]
    phi = np.linalg.solve([[1, rho[1]], [rho[1], 1]], rho[1:3])
    return dict(rho=rho, phi=phi, sigma2=acov[0] * (1 - phi @ rho[1:3]))


# 4 Hann-windowed DFT as sums
def tones():
    n = np.arange(64)
    return dict(x=(np.sin(2 * np.pi * 5 * n / 64) + 0.5 * np.sin(2 * np.pi * 12 * n / 64) + 0.1 * R(104).standard_normal(64)).astype(np.float32))
@case("dft_spectrum", inputs=tones, outputs=["power", "peak", "energy_time", "energy_freq"], tol=(1e-4, 2e-4), vk=True)
def _(x):
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(64) / 64); xw = x.astype(np.float64) * w
    X = np.fft.fft(xw); P = np.abs(X[:33]) ** 2; et = (xw ** 2).sum()
    return dict(power=P, peak=np.int32(np.argmax(P)), energy_time=et, energy_freq=et)


# 5 Goertzel on several bins
@case("goertzel", inputs=lambda: dict(x=tones()["x"].astype(np.float64), bins=np.int32([0, 3, 5, 12, 20])), outputs=["power"], tol=(1e-9, 1e-8))
def _(x, bins):
    return dict(power=np.abs(np.fft.fft(x)[bins]) ** 2)


# 6 bootstrap with an integer LCG
@case("bootstrap_lcg", inputs=lambda: dict(x=R(106).standard_normal(20) * 2 + 5, seed=np.int64(987654321)),
      outputs=["pick", "boot_mean", "se"], tol=(1e-12, 1e-12))
def _(x, seed):
    N = len(x); s = int(seed); picks = []
    for _ in range(50 * N):
        s = (1103515245 * s + 12345) % 2147483648; picks.append(s % N)
    picks = np.int32(picks); bm = x[picks].reshape(50, N).mean(1)
    return dict(pick=picks, boot_mean=bm, se=bm.std(ddof=1))


# 7 Metropolis sweeps over a periodic Ising chain
@case("ising_chain", inputs=lambda: dict(spins0=np.where(R(107).random(16) < 0.5, -1, 1).astype(np.int32), beta=np.float64(0.6)),
      outputs=["s", "magnet", "energy"])
def _(spins0, beta):
    N = len(spins0); T = 30; st = 2024; us = []
    for _ in range(T * N):
        st = (1103515245 * st + 12345) % 2147483648; us.append(st / 2147483648.0)
    s = spins0.astype(np.int64).copy(); hist = [s.copy()]
    for t in range(T):
        for i in range(N):
            dE = 2 * s[i] * (s[i - 1] + s[(i + 1) % N])
            if dE <= 0 or us[t * N + i] < np.exp(-beta * dE): s[i] = -s[i]
        hist.append(s.copy())
    S = np.int32(hist)
    return dict(s=S, magnet=S.sum(1), energy=-(S * np.roll(S, -1, 1)).sum(1))


# 8 Poisson by Jacobi iterations
@case("poisson_jacobi", inputs=lambda: dict(f=R(108).uniform(0, 4, (12, 12))), outputs=["sol", "resid"], tol=(1e-10, 1e-12))
def _(f):
    G = 12; h = 1 / (G - 1); u = np.zeros((G, G))
    for _ in range(59):
        v = np.zeros((G, G))
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h * h * f[1:-1, 1:-1]); u = v
    r = np.abs((4 * u[1:-1, 1:-1] - u[:-2, 1:-1] - u[2:, 1:-1] - u[1:-1, :-2] - u[1:-1, 2:]) / h ** 2 - f[1:-1, 1:-1]).max()
    return dict(sol=u, resid=r)


# 9 leapfrog N-body
def nbody_inputs():
    return dict(m=R(109).uniform(0.5, 2, 4), x0=R(110).standard_normal((4, 3)), v0=R(111).standard_normal((4, 3)) * 0.3)
@case("nbody_leapfrog", inputs=nbody_inputs, outputs=["e_start", "e_end", "x_end"], tol=(1e-10, 1e-12))
def _(m, x0, v0):
    def acc(x):
        d = x[None, :, :] - x[:, None, :]; r2 = (d ** 2).sum(-1)
        return (m[None, :, None] * d / (r2 + 0.01)[:, :, None] ** 1.5).sum(1)
    def en(x, v):
        r = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1) + 0.01); iu = np.triu_indices(4, 1)
        return 0.5 * (m[:, None] * v * v).sum() - (np.outer(m, m) / r)[iu].sum()
    x, v = x0.copy(), v0.copy(); a = acc(x)
    for _ in range(100):
        x = x + 0.01 * (v + 0.005 * a); an = acc(x); v = v + 0.005 * (a + an); a = an
    return dict(e_start=en(x0, v0), e_end=en(x, v), x_end=x)


# 10 spring chain, symplectic Euler, derivative wrt stiffness
def chain_np(q0, k):
    M = len(q0); q = q0.copy(); p = np.zeros(M)
    L = k * (np.diag(-2 * np.ones(M)) + np.diag(np.ones(M - 1), 1) + np.diag(np.ones(M - 1), -1))
    for _ in range(200):
        p = p + 0.02 * L @ q; q = q + 0.02 * p
    return q
@case("spring_chain", inputs=lambda: dict(q0=R(112).standard_normal(6) * 0.1, k=np.float64(3.0)), outputs=["q_end", "dq_dk"], tol=(1e-7, 1e-9))
def _(q0, k):
    return dict(q_end=chain_np(q0, k), dq_dk=fd(lambda k: chain_np(q0, k), k))


# 11 American put on a binomial tree, greeks by @
def american_put(S0, K, r, sigma, T, n=64):
    dt = T / n; u = np.exp(sigma * np.sqrt(dt)); d = 1 / u; p = (np.exp(r * dt) - d) / (u - d); disc = np.exp(-r * dt)
    j = np.arange(n + 1); V = np.maximum(K - S0 * u ** j * d ** (n - j), 0)
    for m in range(1, n + 1):
        j = np.arange(n + 1 - m)
        V = np.maximum(disc * (p * V[1:] + (1 - p) * V[:-1]), np.maximum(K - S0 * u ** j * d ** (n - m - j), 0))
    return V[0]
@case("binomial_american", inputs=lambda: dict(S0=np.float64(95.0), K=np.float64(100.0), r=np.float64(0.05), sigma=np.float64(0.25), T=np.float64(1.0)),
      outputs=["price", "delta", "vega"], tol=(1e-6, 1e-8))
def _(S0, K, r, sigma, T):
    return dict(price=american_put(S0, K, r, sigma, T), delta=fd(lambda s: american_put(s, K, r, sigma, T), S0),
                vega=fd(lambda v: american_put(S0, K, r, v, T), sigma))


# 12 GARCH(1,1) likelihood and gradient
def garch_nll(ret, om, al, be):
    s2 = [np.mean(ret ** 2)]
    for t in range(1, len(ret)): s2.append(om + al * ret[t - 1] ** 2 + be * s2[-1])
    s2 = np.array(s2)
    return 0.5 * np.sum(np.log(2 * np.pi) + np.log(s2) + ret ** 2 / s2)
@case("garch", inputs=lambda: dict(ret=R(113).standard_normal(80) * 0.02, omega=np.float64(2e-5), alpha=np.float64(0.08), beta=np.float64(0.9)),
      outputs=["nll", "grad"], tol=(1e-6, 1e-6))
def _(ret, omega, alpha, beta):
    return dict(nll=garch_nll(ret, omega, alpha, beta), grad=np.array([
        fd(lambda o: garch_nll(ret, o, alpha, beta), omega, 1e-9), fd(lambda a: garch_nll(ret, omega, a, beta), alpha),
        fd(lambda b: garch_nll(ret, omega, alpha, b), beta)]))


# 13 classical Gram-Schmidt QR
@case("qr_gram_schmidt", inputs=lambda: dict(A=R(114).standard_normal((7, 4))), outputs=["Q", "Rm", "orthonormal"], tol=(1e-10, 1e-12))
def _(A):
    Q, Rr = np.linalg.qr(A); s = np.sign(np.diag(Rr))
    return dict(Q=Q * s, Rm=Rr * s[:, None], orthonormal=np.bool_(True))


# 14 Cholesky by hand, log-determinant and a solve
@case("cholesky_by_hand", inputs=lambda: dict(A=spd(6, 115), b=R(116).standard_normal(6)), outputs=["L", "logdet", "x"], tol=(1e-10, 1e-12))
def _(A, b):
    return dict(L=np.linalg.cholesky(A), logdet=np.linalg.slogdet(A)[1], x=np.linalg.solve(A, b))


# 15 Kepler's equation by Newton, derivative wrt eccentricity
@case("kepler_newton", inputs=lambda: dict(Mean=np.linspace(0.1, 6.0, 9), e=np.float64(0.3)), outputs=["ecc", "dE_de"], tol=(1e-10, 1e-12))
def _(Mean, e):
    E = Mean.copy()
    for _ in range(50): E = E - (E - e * np.sin(E) - Mean) / (1 - e * np.cos(E))
    return dict(ecc=E, dE_de=np.sin(E) / (1 - e * np.cos(E)))


# 16 Bellman-Ford with negative edges and an unreachable vertex
def bf_inputs():
    edges = [(0, 1, 4.0), (0, 2, 5.0), (1, 2, -3.0), (2, 3, 2.5), (3, 1, 1.5), (1, 4, 6.0), (3, 4, -1.0), (4, 5, 2.0), (2, 5, 9.0), (6, 0, 1.0)]
    s, d, w = zip(*edges)
    return dict(src=np.int32(s), dst=np.int32(d), w=np.float32(w))
@case("bellman_ford", inputs=bf_inputs, outputs=["shortest", "reachable", "improvable"], tol=(1e-6, 1e-6), vk=True)
def _(src, dst, w):
    D = np.full(7, np.float32(1e9)); D[0] = 0
    for _ in range(6):
        N = D.copy()
        for s, d, ww in zip(src, dst, w): N[d] = min(N[d], np.float32(D[s] + ww))
        D = N
    return dict(shortest=D, reachable=D < 5e8, improvable=np.bool_(any(D[s] + ww < D[d] for s, d, ww in zip(src, dst, w))))


# 17 Levenshtein distance
@case("edit_distance", inputs=lambda: dict(a=np.int32([3, 1, 4, 1, 5, 9, 2, 6]), b=np.int32([3, 4, 1, 5, 9, 9, 2, 7, 6])), outputs=["D", "dist", "similarity"])
def _(a, b):
    M, N = len(a), len(b); D = np.zeros((M + 1, N + 1), np.int32); D[:, 0] = np.arange(M + 1); D[0] = np.arange(N + 1)
    for i in range(1, M + 1):
        for j in range(1, N + 1):
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    return dict(D=D, dist=D[M, N], similarity=np.float32(1 - D[M, N] / max(M, N)))


# 18 longest increasing subsequence; coin change counts
@case("lis_coins", inputs=lambda: dict(a=np.int32([5, 2, 8, 6, 3, 6, 9, 7, 1, 10, 4, 11]), coins=np.int32([1, 2, 5, 10, 3])), outputs=["lis", "longest", "ways", "total"])
def _(a, coins):
    L = [1] * len(a)
    for i in range(1, len(a)): L[i] = 1 + max([L[j] for j in range(i) if a[j] < a[i]], default=0)
    W = np.zeros((len(coins) + 1, 41), np.int64); W[0, 0] = 1
    for c in range(1, len(coins) + 1):
        for v in range(41): W[c, v] = W[c - 1, v] + (W[c, v - coins[c - 1]] if v >= coins[c - 1] else 0)
    return dict(lis=np.int32(L), longest=np.int32(max(L)), ways=W, total=W[-1, -1])


# 19 tanh MLP trained by gradient descent inside a recurrence
def mlp_inputs():
    X = np.linspace(-2, 2, 16).astype(np.float32); rg = R(119)
    return dict(X=X, Y=(np.sin(1.5 * X) + 0.05 * rg.standard_normal(16)).astype(np.float32), theta0=(rg.standard_normal(25) * 0.5).astype(np.float32))
@case("mlp_train", sized=True, inputs=mlp_inputs, outputs=["history", "final_theta"], tol=(2e-4, 2e-5))
def _(X, Y, theta0):
    X = X.astype(np.float64); Y = Y.astype(np.float64); th = theta0.astype(np.float64); H = 8; hist = []
    for e in range(40):
        W1, b1, W2, b2 = th[:H], th[H:2 * H], th[2 * H:3 * H], th[3 * H]
        h = np.tanh(np.outer(X, W1) + b1); out = h @ W2 + b2; err = out - Y; hist.append(np.mean(err ** 2))
        if e == 39: break
        g_out = 2 * err / len(X); g_h = np.outer(g_out, W2) * (1 - h ** 2)
        g = np.concatenate([g_h.T @ X, g_h.sum(0), h.T @ g_out, [g_out.sum()]]); th = th - 0.1 * g
    return dict(history=np.array(hist), final_theta=th)


# 20 standard-library CNN
def cnn_inputs():
    rg = R(120)
    return dict(img=rg.standard_normal((2, 1, 8, 8)).astype(np.float32), K=rg.standard_normal((3, 1, 3, 3)).astype(np.float32),
                Kb=rg.standard_normal(3).astype(np.float32) * 0.1, Wd=(rg.standard_normal((48, 4)) * 0.3).astype(np.float32),
                bd=rg.standard_normal(4).astype(np.float32) * 0.1)
@case("std_cnn", inputs=cnn_inputs, outputs=["pooled", "probs"], tol=(1e-4, 1e-5), vk=True)
def _(img, K, Kb, Wd, bd):
    x = np.pad(img.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.array([[[[np.sum(x[n, 0, i:i + 3, j:j + 3] * K[c, 0]) + Kb[c] for j in range(8)] for i in range(8)] for c in range(3)] for n in range(2)])
    pooled = np.maximum(conv, 0).reshape(2, 3, 4, 2, 4, 2).max((3, 5))
    z = pooled.reshape(2, 48) @ Wd + bd; p = np.exp(z - z.max(1, keepdims=True))
    return dict(pooled=pooled, probs=p / p.sum(1, keepdims=True))


# 21 Rabin-Karp with i64 rolling hashes
def rk_inputs():
    text = R(121).integers(0, 3, 60).astype(np.int32); pat = np.int32([1, 2, 0, 1])
    text[[5, 30, 55]] = 1; text[[6, 31, 56]] = 2; text[[7, 32]] = 0; text[[8, 33]] = 1
    return dict(text=text, pat=pat)
@case("rabin_karp", inputs=rk_inputs, outputs=["window", "hit", "count", "first"])
def _(text, pat):
    q, base, P, N = 1000000007, 131, len(pat), len(text)
    def h(s):
        v = 0
        for t in s: v = (v * base + int(t)) % q
        return v
    win = np.int64([h(text[i:i + P]) for i in range(N - P + 1)])
    hit = np.array([np.array_equal(text[i:i + P], pat) for i in range(N - P + 1)])
    return dict(window=win, hit=hit, count=np.int32(hit.sum()), first=np.int32(np.argmax(hit) if hit.any() else N))


# 22 complex arithmetic with tuples
def mandel_inputs():
    rg = R(122); r = rg.uniform(0, 0.24, 10); a = rg.uniform(0, 2 * np.pi, 10)
    return dict(c_re=r * np.cos(a), c_im=r * np.sin(a))
@case("complex_tuples", inputs=mandel_inputs, outputs=["zr", "zi", "lo", "hi", "spread", "quadrant"], tol=(1e-12, 1e-14))
def _(c_re, c_im):
    c = c_re + 1j * c_im; z = np.zeros(10, complex); zs = [z]
    for _ in range(11): z = z * z + c; zs.append(z)
    Z = np.array(zs); a2 = np.abs(z) ** 2
    quad = np.where(z.real >= 0, np.where(z.imag >= 0, 1, 4), np.where(z.imag >= 0, 2, 3)).astype(np.int32)
    return dict(zr=Z.real, zi=Z.imag, lo=a2.min(), hi=a2.max(), spread=a2.max() - a2.min(), quadrant=quad)


# 23 f16 dense layer accumulated in f32
def f16_inputs():
    rg = R(123)
    return dict(x=rg.standard_normal((3, 16)).astype(np.float16), W=(rg.standard_normal((16, 5)) * 0.3).astype(np.float16),
                b=(rg.standard_normal(5) * 0.1).astype(np.float16))
@case("f16_dense", inputs=f16_inputs, outputs=["act", "rownorm"], tol=(2e-3, 1e-3))
def _(x, W, b):
    acc = x.astype(np.float64) @ W.astype(np.float64) + b.astype(np.float64)
    act = np.where(acc > 0, acc, 0.01 * acc).astype(np.float16)
    return dict(act=act, rownorm=np.sqrt((act.astype(np.float64) ** 2).sum(1)))


# 24 state machine by match on tuples
@case("token_machine", inputs=lambda: dict(tokens=np.int32([1, 0, 0, 2, 0, 0, 0, 2, 0, 0])), outputs=["st", "accepted", "visits"])
def _(tokens):
    def nxt(s, t):
        table = {(0, 1): 1, (0, 0): 2, (1, 0): 2, (2, 0): 2, (2, 2): 3, (3, 0): 2}
        return table.get((s, t), 4)
    st = [0]
    for t in tokens: st.append(nxt(st[-1], int(t)))
    st = np.int32(st)
    return dict(st=st, accepted=np.bool_(st[-1] == 2), visits=np.int32([(st == s).sum() for s in range(5)]))
CASES["token_machine_rejects"] = dict(file="token_machine", inputs=lambda: dict(tokens=np.int32([0, 0, 2, 2, 0, 1, 0])),
                                      outputs=["st", "accepted", "visits"], ref=CASES["token_machine"]["ref"])


# 25 lambdas, pipelines, a function taking a function
@case("closures_pipeline", inputs=lambda: dict(x=(R(125).standard_normal(12) * 1.5).astype(np.float32)), outputs=["y", "z", "p", "smooth"], tol=(1e-5, 1e-6), vk=True)
def _(x):
    x = x.astype(np.float64); y = np.clip(x - x.mean(), -1.5, 1.5); z = np.tanh(np.tanh(y))
    p = np.exp(z - z.max()); p /= p.sum()
    # smooth[i in 1..N - 1] has N - 1 points, the first (i = 0) defined by no clause: 0
    return dict(y=y, z=z, p=p, smooth=np.concatenate([[0.0], np.convolve(z, [0.25, 0.25, 0.5], "valid")]))


# 26 build-time comprehensions indexing run-time data
@case("comprehension_picks", inputs=lambda: dict(x=R(126).standard_normal(30).astype(np.float32)), outputs=["picked", "pair_sum", "at_squares", "n_primes"], tol=(1e-6, 1e-6))
def _(x):
    primes = [p for p in range(2, 30) if all(p % d for d in range(2, p))]
    pairs = [(a, b) for a in range(4) for b in range(4) if a < b]
    return dict(picked=x[primes], pair_sum=np.array([x[a] + x[b] for a, b in pairs]), at_squares=x[[k * k for k in range(6)]].sum(),
                n_primes=np.int32(len(primes)))


# 27 Heron's method with a formatted run-time print
@case("newton_print", inputs=lambda: dict(a=np.float64(7.0)), outputs=["root", "err"], tol=(1e-14, 1e-14))
def _(a):
    xs = [a]
    for _ in range(7): xs.append(0.5 * (xs[-1] + a / xs[-1]))
    return dict(root=xs[-1], err=np.array(xs) - xs[-1], __stdout__=[f"sqrt(7.0) = {np.sqrt(7.0):.10f} after 7 steps"])


# 28 module paths and imports
@case("modules_std", inputs=lambda: dict(p=R(128).uniform(0.05, 0.95, 7).astype(np.float32)), outputs=["back", "ls", "biggest", "t", "root2"], tol=(1e-5, 1e-6))
def _(p):
    p64 = p.astype(np.float64); ls = p64 - np.log(np.exp(p64).sum())
    return dict(back=p64, ls=ls, biggest=np.int32(np.argmax(p)), t=np.array([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]), root2=np.sqrt(2))


# 29 decimal digits and popcounts; i32 arithmetic wraps (2147483647 reversed)
@case("digits", inputs=lambda: dict(n=np.int32([0, 7, 121, 1230, 98789, 2147483647, 1000000000, 44])), outputs=["digit_sum", "ndig", "reversed", "palindrome", "popcount"])
def _(n):
    s = [str(int(v)) for v in n]
    return dict(digit_sum=np.int32([sum(map(int, t)) for t in s]), ndig=np.int32([len(t) for t in s]),
                reversed=np.int64([int(t[::-1]) for t in s]).astype(np.int32), palindrome=np.array([t == t[::-1] for t in s]),
                popcount=np.int32([bin(int(v)).count("1") for v in n]))


# 30 std::numerics
def numerics_inputs():
    rg = R(130); P = rg.random((5, 5)) + 0.1; xs = np.linspace(0, 3, 9)
    return dict(r=rg.standard_normal(5), P=P / P.sum(1, keepdims=True), A=np.array([[3.0, 1.0], [1.0, 2.0]]), b=np.array([1.0, -1.0]),
                xs=xs, ys=2.5 * xs - 1 + 0.1 * rg.standard_normal(9))
@case("std_numerics", inputs=numerics_inputs, tol=(1e-10, 1e-12))
def _(r, P, A, b, xs, ys):
    V = np.zeros(5)
    for _ in range(200): V = r + 0.9 * P @ V
    u = [1.0]
    for _ in range(20):
        k1 = -0.5 * u[-1]; k2 = -0.5 * (u[-1] + 0.05 * k1); k3 = -0.5 * (u[-1] + 0.05 * k2); k4 = -0.5 * (u[-1] + 0.1 * k3)
        u.append(u[-1] + 0.1 / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    L = [np.array([1.0, 0.0])]
    for _ in range(100): L.append(L[-1] + 0.01 * np.array([[0, 1], [-1, 0.0]]) @ L[-1])
    x = np.zeros(2)
    for _ in range(100): x = x - 0.1 * (A @ x - b)
    return dict(V=V, res=np.abs(r + 0.9 * P @ V - V).max(), decay=np.array(u), lin=np.array(L), xmin=x, fit=np.polyfit(xs, ys, 1))


# 31 HMM forward algorithm and the gradient of the log-likelihood
def hmm_inputs():
    rg = R(131); A = rg.random((3, 3)) + 0.2; B = rg.random((3, 4)) + 0.2
    return dict(logA=np.log(A / A.sum(1, keepdims=True)), logB=np.log(B / B.sum(1, keepdims=True)),
                logpi=np.log([0.5, 0.3, 0.2]), obs=rg.integers(0, 4, 8).astype(np.int32))
def hmm_ll(logA, logB, logpi, obs):
    a = np.exp(logpi) * np.exp(logB[:, obs[0]])
    for o in obs[1:]: a = (a @ np.exp(logA)) * np.exp(logB[:, o])
    return np.log(a.sum())
@case("hmm_forward", inputs=hmm_inputs, outputs=["loglik", "gA", "gpi"], tol=(1e-7, 1e-9))
def _(logA, logB, logpi, obs):
    gA = np.zeros((3, 3)); gp = np.zeros(3)
    for idx in np.ndindex(3, 3):
        gA[idx] = fd(lambda h: hmm_ll(logA + h * (np.arange(9).reshape(3, 3) == idx[0] * 3 + idx[1]), logB, logpi, obs), 0.0)
    for k in range(3):
        gp[k] = fd(lambda h: hmm_ll(logA, logB, logpi + h * (np.arange(3) == k), obs), 0.0)
    return dict(loglik=hmm_ll(logA, logB, logpi, obs), gA=gA, gpi=gp)


# 32 k-means rounds
def km_inputs():
    rg = R(132); centres = np.array([[0, 0], [4, 4], [0, 5.0]])
    X = np.concatenate([c + rg.standard_normal((8, 2)) * 0.7 for c in centres])
    return dict(X=X, C0=X[[0, 1, 2]].copy())
@case("kmeans", inputs=km_inputs, outputs=["C", "assign", "inertia"], tol=(1e-12, 1e-12))
def _(X, C0):
    C = C0.copy(); Cs = [C]; As = []; In = []
    for _ in range(6):
        d2 = ((X[:, None, :] - C[None]) ** 2).sum(-1); a = d2.argmin(1); As.append(a); In.append(d2.min(1).sum())
        C = np.array([X[a == k].mean(0) if (a == k).any() else C[k] for k in range(3)]); Cs.append(C)
    return dict(C=np.array(Cs), assign=np.int32(As), inertia=np.array(In))


# 33 PageRank with dangling pages
def pr_inputs():
    adj = np.zeros((6, 6), np.int32)
    for i, j in [(0, 1), (0, 2), (1, 2), (2, 0), (3, 2), (3, 4), (4, 3), (4, 5), (1, 5)]: adj[i, j] = 1
    return dict(adj=adj)               # page 5 has no out-links
@case("pagerank", inputs=pr_inputs, outputs=["rank", "total", "top"], tol=(1e-5, 1e-6), vk=True)
def _(adj):
    V = 6; out = adj.sum(1); M = np.where(out[:, None] > 0, adj / np.maximum(out, 1)[:, None], 1 / V); p = np.full(V, 1 / V)
    for _ in range(39): p = 0.15 / V + 0.85 * p @ M
    return dict(rank=p, total=p.sum(), top=np.int32(np.argmax(p)))


# 34 Romberg table
@case("romberg", outputs=["Rt", "best"], tol=(1e-12, 1e-14))
def _():
    from math import erf, pi, sqrt
    f = lambda x: np.exp(-x * x); T = np.zeros((6, 6))
    for k in range(6):
        n = 2 ** k; T[k, 0] = (0.5 * (f(0.0) + f(1.0)) + f(np.arange(1, n) / n).sum()) / n
        for j in range(1, k + 1): T[k, j] = (4 ** j * T[k, j - 1] - T[k - 1, j - 1]) / (4 ** j - 1)
    assert abs(T[5, 5] - sqrt(pi) / 2 * erf(1)) < 1e-12      # the reference itself is Romberg's limit
    return dict(Rt=T, best=T[5, 5])


# 35 Clenshaw's recurrence for Chebyshev series, Jacobian in x
@case("clenshaw", inputs=lambda: dict(c=R(135).standard_normal(9), x=np.linspace(-0.95, 0.9, 7)), outputs=["y", "dydx"], tol=(1e-11, 1e-12))
def _(c, x):
    from numpy.polynomial import chebyshev as ch
    return dict(y=ch.chebval(x, c), dydx=np.diag(ch.chebval(x, ch.chebder(c))))


# 36 odd-even transposition sort
@case("odd_even_sort", inputs=lambda: dict(x=R(136).standard_normal(11).astype(np.float32)), outputs=["s", "sorted", "rank"], tol=(0, 0), vk=True)
def _(x):
    s = x.copy(); hist = [s.copy()]; N = len(x)
    for t in range(1, N + 1):
        n = s.copy()
        for i in range(N):
            if (i + t) % 2 == 0 and i + 1 < N: n[i] = min(s[i], s[i + 1])
            elif (i + t) % 2 == 1 and i > 0: n[i] = max(s[i], s[i - 1])
        s = n; hist.append(s.copy())
    return dict(s=np.array(hist), sorted=np.sort(x), rank=np.int32(np.argsort(np.argsort(x))))


# 37 rule 30
@case("rule30", inputs=lambda: dict(init=np.arange(41) == 20), outputs=["cell", "centre", "alive"])
def _(init):
    c = init.copy(); hist = [c]
    for _ in range(19):
        l = np.concatenate([[False], c[:-1]]); r = np.concatenate([c[1:], [False]]); c = l ^ (c | r); hist.append(c)
    H = np.array(hist)
    return dict(cell=H, centre=H[:, 20], alive=np.int32(H.sum(1)))


# 38 Pascal and Catalan in i64
@case("pascal_catalan", outputs=["C", "cat", "check", "row_sum"])
def _():
    from math import comb
    C = np.int64([[comb(n, k) for k in range(30)] for n in range(30)])
    cat = np.int64([comb(2 * n, n) // (n + 1) for n in range(20)])
    return dict(C=C, cat=cat, check=np.bool_(True), row_sum=np.int64([2 ** n for n in range(30)]))


# 39 Holt's linear smoothing, gradient of the squared errors
def holt_np(y, a, g):
    l, b, F = y[0], y[1] - y[0], []
    for t in range(1, len(y)):
        F.append(l + b); ln = a * y[t] + (1 - a) * (l + b); b = g * (ln - l) + (1 - g) * b; l = ln
    return np.array(F), l, b
@case("holt_linear", inputs=lambda: dict(y=10 + 0.3 * np.arange(25) + R(139).standard_normal(25), a=np.float64(0.4), g=np.float64(0.2)),
      outputs=["forecast", "sse", "grad", "ahead"], tol=(1e-7, 1e-9))
def _(y, a, g):
    F, l, b = holt_np(y, a, g); sse = lambda a, g: ((y[1:] - holt_np(y, a, g)[0]) ** 2).sum()
    return dict(forecast=np.concatenate([[0.0], F]), sse=sse(a, g), grad=np.array([fd(lambda v: sse(v, g), a), fd(lambda v: sse(a, v), g)]),
                ahead=l + np.arange(1, 6) * b)


# 40 Adam on Rosenbrock
@case("adam_rosenbrock", inputs=lambda: dict(x0=np.array([-1.2, 1.0])), outputs=["x", "fvals"], tol=(1e-9, 1e-11))
def _(x0):
    x = x0.copy(); m = np.zeros(2); v = np.zeros(2); xs = [x]
    f = lambda x: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    for t in range(1, 301):
        g = np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])
        m = 0.9 * m + 0.1 * g; v = 0.999 * v + 0.001 * g * g
        x = x - 0.02 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8); xs.append(x)
    return dict(x=np.array(xs), fvals=np.array([f(x) for x in xs]))


# 41 Game of Life on a torus
def life_inputs():
    b = np.zeros((10, 12), np.int32); b[1, 2] = b[2, 3] = b[3, 1] = b[3, 2] = b[3, 3] = 1      # a glider
    b[6:9, 8] = 1                                                                              # a blinker
    return dict(board=b)
@case("game_of_life", inputs=life_inputs, outputs=["cell", "population"], vk=True)
def _(board):
    c = board.copy(); hist = [c]
    for _ in range(11):
        n = sum(np.roll(np.roll(c, di, 0), dj, 1) for di in (-1, 0, 1) for dj in (-1, 0, 1)) - c
        c = ((n == 3) | ((n == 2) & (c == 1))).astype(np.int32); hist.append(c)
    H = np.array(hist)
    return dict(cell=H, population=np.int32(H.sum((1, 2))))


# 42 Gaussian-process regression with std::ml linear algebra
def gp_inputs():
    rg = R(142); X = np.sort(rg.uniform(0, 5, 8))
    return dict(Xtr=X, ytr=np.sin(X) + 0.05 * rg.standard_normal(8), Xte=np.linspace(0, 5, 5), ell=np.float64(1.1), noise=np.float64(0.01))
@case("gp_regression", inputs=gp_inputs, outputs=["mean", "var", "lml"], tol=(1e-8, 1e-10))
def _(Xtr, ytr, Xte, ell, noise):
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None]) ** 2 / ell ** 2)
    K = k(Xtr, Xtr) + noise * np.eye(8); Ks = k(Xte, Xtr); Ki = np.linalg.inv(K)
    return dict(mean=Ks @ Ki @ ytr, var=1 - np.einsum("mi,ij,mj->m", Ks, Ki, Ks),
                lml=-0.5 * ytr @ Ki @ ytr - 0.5 * np.linalg.slogdet(K)[1] - 4 * np.log(2 * np.pi))


# 43 heat equation on a rod, derivative wrt the diffusivity
def rod_np(u0, kappa):
    u = u0.copy(); c = kappa * 0.001 / 0.05 ** 2; hist = [u]
    for _ in range(119):
        v = np.zeros_like(u); v[1:-1] = u[1:-1] + c * (u[:-2] - 2 * u[1:-1] + u[2:]); u = v; hist.append(u)
    return np.array(hist)
@case("heat_rod", inputs=lambda: dict(u0=np.sin(np.pi * np.linspace(0, 1, 21)) + 0.3 * np.sin(3 * np.pi * np.linspace(0, 1, 21)), kappa=np.float64(0.8)),
      outputs=["mid", "dmid", "profile"], tol=(1e-8, 1e-10))
def _(u0, kappa):
    return dict(mid=rod_np(u0, kappa)[-1, 10], dmid=fd(lambda k: rod_np(u0, k)[-1, 10], kappa), profile=rod_np(u0, kappa)[-1])


# 44 Lotka-Volterra by Adams-Bashforth 2, sensitivity wrt the parameters
def lv_np(p, y0, h=0.01, S=400):
    f = lambda y: np.array([p[0] * y[0] - p[1] * y[0] * y[1], p[3] * y[0] * y[1] - p[2] * y[1]])
    ys = [y0, y0 + h * f(y0)]
    for _ in range(2, S + 1): ys.append(ys[-1] + h * (1.5 * f(ys[-1]) - 0.5 * f(ys[-2])))
    return np.array(ys)
@case("lotka_volterra_ab2", inputs=lambda: dict(p=np.array([1.1, 0.4, 0.4, 0.1]), y0=np.array([10.0, 5.0])), outputs=["prey_end", "dprey_dp"], tol=(1e-7, 1e-9))
def _(p, y0):
    return dict(prey_end=lv_np(p, y0)[-1, 0], dprey_dp=np.array([fd(lambda v: lv_np(p + v * (np.arange(4) == k), y0)[-1, 0], 0.0) for k in range(4)]))


# 45 cubic least squares through std::ml::solve
@case("polyfit_solve", inputs=lambda: (lambda x: dict(x=x, y=1 - 2 * x + 0.5 * x ** 3 + 0.1 * R(145).standard_normal(15)))(np.linspace(-2, 2, 15)),
      outputs=["coef", "fitted", "r2"], tol=(1e-9, 1e-11))
def _(x, y):
    c = np.polyfit(x, y, 3)[::-1]; f = np.polyval(c[::-1], x)
    return dict(coef=c, fitted=f, r2=1 - ((y - f) ** 2).sum() / ((y - y.mean()) ** 2).sum())


# 46 smooth maximum and its gradient
@case("smooth_max", inputs=lambda: dict(z=(R(146).standard_normal((3, 6)) * 2).astype(np.float32)), outputs=["lse", "grad", "gap"], tol=(1e-5, 1e-6), vk=True)
def _(z):
    z = z.astype(np.float64); m = z.max(1, keepdims=True); e = np.exp((z - m) / 0.5)
    lse = 0.5 * np.log(e.sum(1)) + m[:, 0]
    return dict(lse=lse, grad=e / e.sum(1, keepdims=True), gap=lse - m[:, 0])


# 47 batch normalisation in training mode with gradients
@case("batchnorm_train", inputs=lambda: dict(X=R(147).standard_normal((6, 4)).astype(np.float32), gamma=R(148).uniform(0.5, 1.5, 4).astype(np.float32),
                              beta=R(149).standard_normal(4).astype(np.float32), W=R(150).uniform(0, 1, (6, 4)).astype(np.float32)),
      outputs=["Y", "dX", "dgamma", "dbeta"], tol=(2e-4, 2e-4))
def _(X, gamma, beta, W):
    X = X.astype(np.float64); g = gamma.astype(np.float64); b = beta.astype(np.float64); W = W.astype(np.float64)
    def fwd(X, g, b):
        mu = X.mean(0); v = X.var(0); return g * (X - mu) / np.sqrt(v + 1e-5) + b
    L = lambda X, g, b: (W * fwd(X, g, b) ** 2).sum()
    dX = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X); E[idx] = 1; dX[idx] = fd(lambda h: L(X + h * E, g, b), 0.0)
    eye = np.eye(4)
    return dict(Y=fwd(X, g, b), dX=dX, dgamma=np.array([fd(lambda h: L(X, g + h * eye[c], b), 0.0) for c in range(4)]),
                dbeta=np.array([fd(lambda h: L(X, g, b + h * eye[c]), 0.0) for c in range(4)]))


# 48 Monte Carlo call price with an LCG and Box-Muller
@case("gbm_monte_carlo", inputs=lambda: dict(S0=np.float64(100.0), K=np.float64(105.0), r=np.float64(0.03), sigma=np.float64(0.2), T=np.float64(0.5), seed=np.int64(42)),
      outputs=["z", "price", "stderr"], tol=(1e-10, 1e-12))
def _(S0, K, r, sigma, T, seed):
    s = int(seed); u = []
    for _ in range(800):
        s = (1103515245 * s + 12345) % 2147483648; u.append((s + 0.5) / 2147483648.0)
    u = np.array(u); z = np.sqrt(-2 * np.log(u[0::2])) * np.cos(2 * np.pi * u[1::2])
    pay = np.exp(-r * T) * np.maximum(S0 * np.exp((r - 0.5 * sigma ** 2) * T + sigma * np.sqrt(T) * z) - K, 0)
    return dict(z=z, price=pay.mean(), stderr=pay.std(ddof=1) / np.sqrt(400))


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
