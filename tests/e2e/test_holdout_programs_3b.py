"""Hold-out programs, third round (numerics, statistics, finance, images), written as users of the
language would write them and checked against NumPy computed here: LU with partial pivoting, a
natural cubic spline, a Kalman filter with its RTS smoother and one in D dimensions solving in
each step, EM for a Gaussian mixture, kernel density estimates through a stable logsumexp, ARMA
simulation from an integer LCG, Chebyshev approximation, Black-Scholes greeks (over a strike x
maturity surface too), implied volatilities by Newton and a trinomial American option by @,
Newton's method in 2-d with its Jacobian by @, and image filters (Sobel, separable Gaussian blur,
bilinear resize) over named H and W. Each case states its tolerance (`tol`, rtol and atol; integers and bools compare
exactly); `vk` cases run on vulkan-spirv too."""
import math

import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


def fd(f, x, h=1e-6):
    """Central difference of the scalar or array function f at the scalar x."""
    return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)


# 1 LU with partial pivoting and a solve
def lu_np(A):
    n = len(A); W = A.copy(); perm = np.arange(n); piv = []
    for c in range(n - 1):
        p = c + int(np.argmax(np.abs(W[c:, c]))); piv.append(p)
        W[[c, p]] = W[[p, c]]; perm[[c, p]] = perm[[p, c]]
        W[c + 1:, c] /= W[c, c]
        W[c + 1:, c + 1:] -= np.outer(W[c + 1:, c], W[c, c + 1:])
    return W, perm, np.int32(piv)
@case("lu_partial_pivot", inputs=lambda: dict(A=R(301).standard_normal((6, 6)), b=R(302).standard_normal(6)),
      outputs=["L", "U", "order", "p", "x", "det", "dxdb", "ddet"], tol=(1e-9, 1e-11))
def _(A, b):
    W, perm, piv = lu_np(A); inv = np.linalg.inv(A); det = np.linalg.det(A)
    return dict(L=np.tril(W, -1) + np.eye(6), U=np.triu(W), order=perm.astype(np.int32), p=piv,
                x=np.linalg.solve(A, b), det=det, dxdb=inv, ddet=det * inv.T)


# 2 natural cubic spline
def spline_np(xs, ys, q):
    n = len(xs); h = np.diff(xs); M = np.linalg.solve(*spline_system(xs, ys))
    k = np.clip(np.searchsorted(xs, q, side="right") - 1, 0, n - 2)
    x0, x1, hk = xs[k], xs[k + 1], h[k]
    s = M[k] * (x1 - q) ** 3 / (6 * hk) + M[k + 1] * (q - x0) ** 3 / (6 * hk) \
        + (ys[k] / hk - M[k] * hk / 6) * (x1 - q) + (ys[k + 1] / hk - M[k + 1] * hk / 6) * (q - x0)
    ds = -M[k] * (x1 - q) ** 2 / (2 * hk) + M[k + 1] * (q - x0) ** 2 / (2 * hk) \
        - (ys[k] / hk - M[k] * hk / 6) + (ys[k + 1] / hk - M[k + 1] * hk / 6)
    return s, ds
def spline_inputs():
    xs = np.cumsum(R(303).uniform(0.3, 1.2, 9)); q = np.sort(R(304).uniform(xs[0], xs[-1], 13))
    return dict(xs=xs, ys=np.sin(xs) + 0.1 * R(305).standard_normal(9), q=q)
@case("spline_natural", inputs=spline_inputs, outputs=["M", "s", "slope", "dsdy", "dknots"], tol=(1e-9, 1e-9))
def _(xs, ys, q):
    s, ds = spline_np(xs, ys, q); n = len(xs)
    return dict(M=np.linalg.solve(*spline_system(xs, ys)), s=s, slope=ds,
                dsdy=np.stack([spline_np(xs, e, q)[0] for e in np.eye(n)], 1),
                dknots=np.array([fd(lambda h: spline_np(xs + h * e, ys, q)[0].sum(), 0.0) for e in np.eye(n)]))
def spline_system(xs, ys):
    n = len(xs); h = np.diff(xs); T = np.zeros((n, n)); rhs = np.zeros(n)
    T[0, 0] = T[-1, -1] = 1.0
    for i in range(1, n - 1):
        T[i, i - 1:i + 2] = h[i - 1], 2 * (h[i - 1] + h[i]), h[i]
        rhs[i] = 6 * ((ys[i + 1] - ys[i]) / h[i] - (ys[i] - ys[i - 1]) / h[i - 1])
    return T, rhs


# 3 Kalman filter and RTS smoother
def kalman_np(y, q, r):
    T = len(y); F = np.array([[1.0, 1.0], [0.0, 1.0]]); Qn = q * np.array([[1 / 3, 1 / 2], [1 / 2, 1.0]])
    m = np.zeros((T, 2)); P = np.zeros((T, 2, 2)); mp = np.zeros((T, 2)); Pp = np.zeros((T, 2, 2)); ll = 0.0
    for t in range(T):
        if t == 0:
            mp[0] = [y[0], 0.0]; Pp[0] = np.diag([r, 10.0])
        else:
            mp[t] = F @ m[t - 1]; Pp[t] = F @ P[t - 1] @ F.T + Qn
        S = Pp[t, 0, 0] + r; v = y[t] - mp[t, 0]; K = Pp[t, :, 0] / S
        m[t] = mp[t] + K * v; P[t] = Pp[t] - np.outer(K, Pp[t, 0])
        if t > 0:
            ll += -0.5 * (np.log(2 * np.pi * S) + v * v / S)
    ms = m.copy(); Ps = P.copy()
    for t in range(T - 2, -1, -1):
        G = P[t] @ F.T @ np.linalg.inv(Pp[t + 1])
        ms[t] = m[t] + G @ (ms[t + 1] - mp[t + 1]); Ps[t] = P[t] + G @ (Ps[t + 1] - Pp[t + 1]) @ G.T
    return m, ms, Ps[:, 0, 0], ll
def track():
    rg = R(306); v = 0.5 + np.cumsum(0.1 * rg.standard_normal(30)); x = np.cumsum(v)
    return dict(y=x + rg.standard_normal(30), q=np.float64(0.02), r=np.float64(1.0))
@case("rts_smoother", inputs=track, outputs=["m", "smooth", "smooth_var", "loglik", "dll_dq", "dvar_dq"], tol=(1e-8, 1e-8))
def _(y, q, r):
    m, ms, pv, ll = kalman_np(y, q, r)
    return dict(m=m, smooth=ms, smooth_var=pv, loglik=ll, dll_dq=fd(lambda q: kalman_np(y, q, r)[3], q, 1e-7),
                dvar_dq=fd(lambda q: kalman_np(y, q, r)[2], q, 1e-7))



# 4 EM for a 1-d Gaussian mixture
def mixture():
    rg = R(307)
    return dict(x=np.concatenate([rg.normal(-2.0, 0.7, 40), rg.normal(1.5, 1.2, 60)]), mu0=np.array([-0.5, 0.5]))
def em_np(x, mu0):
    K = len(mu0); N = len(x); w = np.full(K, 1 / K); mu = mu0.copy(); var = ((x[:, None] - mu0) ** 2).mean(0)
    ll = []; vs = [var]
    for _ in range(8):
        lp = np.log(w) - 0.5 * (np.log(2 * np.pi * var) + (x[:, None] - mu) ** 2 / var)
        top = lp.max(1, keepdims=True); lse = top[:, 0] + np.log(np.exp(lp - top).sum(1)); ll.append(lse.sum())
        g = np.exp(lp - lse[:, None]); nk = g.sum(0)
        w = nk / N; mu = (g * x[:, None]).sum(0) / nk; var = (g * (x[:, None] - mu) ** 2).sum(0) / nk; vs.append(var)
    return dict(loglik=np.array(ll), final_mu=mu, final_w=w, var=np.array(vs),
                __stdout__=[f"means {mu[0]:.4f} {mu[1]:.4f}"])
@case("gmm_em", inputs=mixture, outputs=["loglik", "final_mu", "final_w", "var", "dlast_dmu0"], tol=(1e-6, 1e-9))
def _(x, mu0):
    out = em_np(x, mu0)
    out["dlast_dmu0"] = np.array([fd(lambda h: em_np(x, mu0 + h * e)["loglik"][-1], 0.0) for e in np.eye(len(mu0))])
    return out


# 5 kernel density estimates through a stable logsumexp
def kde_inputs():
    rg = R(308)
    return dict(xs=np.concatenate([rg.normal(0, 1, 30), rg.normal(4, 0.5, 20)]).astype(np.float32),
                grid=np.linspace(-3, 6, 25).astype(np.float32))
@case("kde_logsumexp", inputs=kde_inputs, outputs=["h", "logp", "score", "mode", "loo"], tol=(2e-4, 2e-4), vk=True)
def _(xs, grid):
    x = xs.astype(np.float64); g = grid.astype(np.float64); N = len(x)
    h = 1.06 * x.std(ddof=1) * N ** -0.2
    def logp(g):
        z = -0.5 * ((g[:, None] - x) / h) ** 2
        return np.log(np.exp(z).sum(1)) - np.log(N * h * np.sqrt(2 * np.pi))
    lp = logp(g); d = (g[:, None] - x) / h; wts = np.exp(-0.5 * d ** 2)
    score = (wts * (-d / h)).sum(1) / wts.sum(1)
    loo = []
    for s in (0.5, 1.0, 2.0):
        hs = h * s; k = np.exp(-0.5 * ((x[:, None] - x) / hs) ** 2); np.fill_diagonal(k, 0)
        loo.append(np.sum(np.log(k.sum(1)) - np.log((N - 1) * hs * np.sqrt(2 * np.pi))))
    return dict(h=h, logp=lp, score=score, mode=grid[np.argmax(lp)], loo=np.array(loo))


# 6 ARMA(2, 1) from Park-Miller noise
@case("arma_lcg", inputs=lambda: dict(phi=np.array([0.5, -0.3]), theta=np.float64(0.4), seed=np.int64(20261130)),
      outputs=["e", "x", "psi", "acf", "var_theory"], tol=(1e-9, 1e-10))
def _(phi, theta, seed):
    T = 300; s = int(seed); u = []
    for _ in range(12 * T):
        s = 16807 * s % 2147483647; u.append(s / 2147483647.0)
    e = np.array(u).reshape(T, 12).sum(1) - 6.0; x = np.zeros(T)
    for t in range(T):
        x[t] = e[t] + (phi[0] * x[t - 1] + theta * e[t - 1] if t >= 1 else 0) + (phi[1] * x[t - 2] if t >= 2 else 0)
    psi = np.zeros(40); imp = np.zeros(40); imp[0] = 1.0   # the impulse response, by running the filter
    for j in range(40):
        psi[j] = imp[j] + (phi[0] * psi[j - 1] + theta * imp[j - 1] if j >= 1 else 0) + (phi[1] * psi[j - 2] if j >= 2 else 0)
    d = x - x.mean(); acov = np.array([d[:T - l] @ d[l:] / T for l in range(7)])
    return dict(e=e, x=x, psi=psi, acf=acov / acov[0], var_theory=(psi ** 2).sum())


# 7 Chebyshev approximation
def cheb_f(v):
    return np.exp(-v) * np.sin(3 * v) + v * v / 4
@case("chebyshev_approx", inputs=lambda: dict(a=np.float64(-1.0), b=np.float64(2.5), t=np.linspace(-1.0, 2.5, 17)),
      outputs=["c", "approx", "slope", "worst", "tail"], tol=(1e-9, 1e-11))
def _(a, b, t):
    n = 14; cheb = np.polynomial.chebyshev
    coef = cheb.chebinterpolate(lambda u: cheb_f(0.5 * (b - a) * u + 0.5 * (b + a)), n - 1)
    u = (2 * t - a - b) / (b - a); approx = cheb.chebval(u, coef)
    return dict(c=coef, approx=approx, slope=cheb.chebval(u, cheb.chebder(coef)) * 2 / (b - a),
                worst=np.abs(approx - cheb_f(t)).max(), tail=np.abs(coef[-3:]).max())


# 8 Black-Scholes greeks
def ncdf(z):
    return 0.5 * (1 + np.vectorize(math.erf)(z / np.sqrt(2)))
@case("black_scholes_greeks", inputs=lambda: dict(S=np.float64(100.0), sigma=np.float64(0.25), r=np.float64(0.03), T=np.float64(0.75),
                                                 strikes=np.array([80.0, 95.0, 100.0, 110.0, 130.0])),
      outputs=["price", "put", "delta", "gamma", "vega", "rho", "theta"], tol=(1e-9, 1e-10))
def _(S, sigma, r, T, strikes):
    K = strikes; sq = np.sqrt(T); d1 = (np.log(S / K) + (r + sigma ** 2 / 2) * T) / (sigma * sq); d2 = d1 - sigma * sq
    pdf = np.exp(-d1 ** 2 / 2) / np.sqrt(2 * np.pi); c = S * ncdf(d1) - K * np.exp(-r * T) * ncdf(d2)
    return dict(price=c, put=c - S + K * np.exp(-r * T), delta=ncdf(d1), gamma=pdf / (S * sigma * sq), vega=S * pdf * sq,
                rho=K * T * np.exp(-r * T) * ncdf(d2), theta=-S * pdf * sigma / (2 * sq) - r * K * np.exp(-r * T) * ncdf(d2))


# 9 trinomial American option
def trinomial_np(S0, K, r, q, sigma, T, kind, n=40):
    dt = T / n; up = np.exp(sigma * np.sqrt(2 * dt)); a = np.exp((r - q) * dt / 2); b = np.exp(sigma * np.sqrt(dt / 2))
    pu = ((a - 1 / b) / (b - 1 / b)) ** 2; pd = ((b - a) / (b - 1 / b)) ** 2; pm = 1 - pu - pd; disc = np.exp(-r * dt)
    pay = (lambda s: np.maximum(K - s, 0)) if kind == 0 else (lambda s: np.maximum(s - K, 0))
    V = pay(S0 * up ** np.arange(-n, n + 1.0)); low = [False]     # exercised[0] is defined by no clause: 0
    for m in range(1, n + 1):
        s = S0 * up ** np.arange(-(n - m), n - m + 1.0)
        cont = disc * (pu * V[2:] + pm * V[1:-1] + pd * V[:-2]); V = np.maximum(cont, pay(s))
        low.append(bool(cont[0] <= pay(s[0]) and pay(s[0]) > 0))
    return V[0], np.array(low)
def tri_inputs(kind):
    return lambda: dict(S0=np.float64(50.0), K=np.float64(52.0), r=np.float64(0.05), q=np.float64(0.02), sigma=np.float64(0.3),
                        T=np.float64(1.0), kind=np.int32(kind))
for kind, name in ((0, "trinomial_american_put"), (1, "trinomial_american_call")):
    @case(name, file="trinomial_american", inputs=tri_inputs(kind), outputs=["price", "delta", "vega", "exercised"], tol=(1e-8, 1e-9))
    def _(S0, K, r, q, sigma, T, kind):
        f = lambda **kw: trinomial_np(**{**dict(S0=S0, K=K, r=r, q=q, sigma=sigma, T=T, kind=kind), **kw})
        return dict(price=f()[0], exercised=f()[1], delta=fd(lambda s: f(S0=s)[0], S0), vega=fd(lambda v: f(sigma=v)[0], sigma))


# 10 Newton's method for a 2-d system
def newton_np(z0, rad, K=8):
    F = lambda x, y: np.array([x * x + y * y - rad * rad, np.exp(x) + y - 1])
    z = [np.array(z0, float)]
    for _ in range(K - 1):
        x, y = z[-1]; J = np.array([[2 * x, 2 * y], [np.exp(x), 1.0]]); z.append(z[-1] - np.linalg.solve(J, F(x, y)))
    return np.array(z)
@case("newton_system", inputs=lambda: dict(z0=np.array([1.0, -1.5]), rad=np.float64(2.0)), outputs=["z", "step", "root", "droot_drad"],
      tol=(1e-9, 1e-11))
def _(z0, rad):
    z = newton_np(z0, rad)
    x, y = z[-1]; J = np.array([[2 * x, 2 * y], [np.exp(x), 1.0]])
    return dict(z=z, step=np.r_[0.0, np.linalg.norm(np.diff(z, axis=0), axis=1)], root=z[-1],   # step[0]: no clause, 0
                droot_drad=np.linalg.solve(J, [2 * rad, 0.0]))    # implicit function theorem at the root


# 11 Sobel edges with clamped borders
def sobel_np(img):
    p = np.pad(img.astype(np.float64), 1, mode="edge"); H, W = img.shape
    kx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], float)
    corr = lambda k: sum(k[a, b] * p[a:a + H, b:b + W] for a in range(3) for b in range(3))
    return corr(kx), corr(kx.T)
def blobs():
    i, j = np.mgrid[0:14, 0:11]
    img = (np.hypot(i - 6, j - 4) < 4).astype(float) + 0.5 * (j > 7) + 0.05 * R(309).standard_normal((14, 11))
    return dict(img=img.astype(np.float32), frac=np.float32(0.3))
@case("sobel_edges", inputs=blobs, outputs=["gx", "gy", "mag", "edge", "dir", "counts", "total"], tol=(1e-5, 1e-5), vk=True)
def _(img, frac):
    gx, gy = sobel_np(img); mag = np.hypot(gx, gy); edge = mag > frac * mag.max()
    d = (np.floor(np.arctan2(gy, gx) / np.pi * 4 + 4.5).astype(np.int32) % 4)
    counts = np.int32([(edge & (d == k)).sum() for k in range(4)])
    return dict(gx=gx, gy=gy, mag=mag, edge=edge, dir=d, counts=counts, total=np.int32(counts.sum()))


# 12 separable Gaussian blur and bilinear resize
def blur_np(img, sigma):
    k = np.arange(7); taps = np.exp(-(k - 3) ** 2 / (2 * sigma * sigma)); taps /= taps.sum()
    H, W = img.shape; pr = np.pad(img, ((0, 0), (3, 3)), mode="edge")
    rows = sum(taps[k] * pr[:, k:k + W] for k in range(7)); pc = np.pad(rows, ((3, 3), (0, 0)), mode="edge")
    return taps, sum(taps[k] * pc[k:k + H] for k in range(7))
def bilinear_np(a, OH, OW):
    H, W = a.shape; out = np.zeros((OH, OW))
    for p in range(OH):
        for q in range(OW):
            y = min(max((p + 0.5) * H / OH - 0.5, 0), H - 1); x = min(max((q + 0.5) * W / OW - 0.5, 0), W - 1)
            i0, j0 = int(np.floor(y)), int(np.floor(x)); i1, j1 = min(i0 + 1, H - 1), min(j0 + 1, W - 1); fy, fx = y - i0, x - j0
            out[p, q] = (1 - fy) * ((1 - fx) * a[i0, j0] + fx * a[i0, j1]) + fy * ((1 - fx) * a[i1, j0] + fx * a[i1, j1])
    return out
@case("blur_resize", inputs=lambda: dict(img=R(310).random((7, 9)), sigma=np.float64(1.3)),
      outputs=["taps", "blur", "out", "mean_in", "mean_blur", "denergy"], tol=(1e-8, 1e-10))
def _(img, sigma):
    taps, b = blur_np(img, sigma)
    return dict(taps=taps, blur=b, out=bilinear_np(b, 10, 12), mean_in=img.mean(), mean_blur=b.mean(),
                denergy=fd(lambda s: (bilinear_np(blur_np(img, s)[1], 10, 12) ** 2).sum(), sigma))


# 13 implied volatility by Newton per strike
def bs_call(S, K, sig, r, T):
    d1 = (np.log(S / K) + (r + sig ** 2 / 2) * T) / (sig * np.sqrt(T)); d2 = d1 - sig * np.sqrt(T)
    return S * ncdf(d1) - K * np.exp(-r * T) * ncdf(d2), S * np.exp(-d1 ** 2 / 2) / np.sqrt(2 * np.pi) * np.sqrt(T)
@case("implied_vol", inputs=lambda: dict(S=np.float64(100.0), r=np.float64(0.02), T=np.float64(0.5), strikes=np.array([85.0, 95.0, 100.0, 110.0]),
                                        quotes=np.array([17.2, 9.6, 7.0, 3.1])), outputs=["vol", "iv", "repriced"], tol=(1e-9, 1e-11))
def _(S, r, T, strikes, quotes):
    v = [np.full(4, 0.3)]
    for _ in range(6):
        c, vega = bs_call(S, strikes, v[-1], r, T); v.append(v[-1] - (c - quotes) / vega)
    return dict(vol=np.array(v), iv=v[-1], repriced=quotes)


# 14 Black-Scholes over a strike x maturity surface
@case("bs_vol_surface", inputs=lambda: dict(S=np.float64(100.0), r=np.float64(0.01), strikes=np.array([90.0, 100.0, 110.0]),
                                           mats=np.array([0.25, 1.0]), vols=np.array([[0.2, 0.25], [0.22, 0.3], [0.18, 0.2]])),
      outputs=["price", "delta", "gamma", "vega", "vanna", "leak"], tol=(1e-9, 1e-10))
def _(S, r, strikes, mats, vols):
    K, T, v = strikes[:, None], mats[None, :], vols
    d1 = (np.log(S / K) + (r + v * v / 2) * T) / (v * np.sqrt(T)); d2 = d1 - v * np.sqrt(T)
    pdf = np.exp(-d1 ** 2 / 2) / np.sqrt(2 * np.pi)
    return dict(price=S * ncdf(d1) - K * np.exp(-r * T) * ncdf(d2), delta=ncdf(d1), gamma=pdf / (S * v * np.sqrt(T)),
                vega=S * pdf * np.sqrt(T), vanna=-pdf * d2 / v, leak=0.0)


# 15 a Kalman filter in D dimensions, solving inside each step
def kalman_nd_inputs():
    rg = R(311); D, O, T = 3, 2, 12
    return dict(y=rg.standard_normal((T, O)), F=np.eye(D) + 0.1 * rg.standard_normal((D, D)), H=rg.standard_normal((O, D)),
                Q=0.1 * np.eye(D), Rn=np.array([[0.5, 0.1], [0.1, 0.4]]), m0=np.zeros(D))
@case("kalman_nd", sized=True, inputs=kalman_nd_inputs, outputs=["m", "P", "spread"], tol=(1e-9, 1e-11))
def _(y, F, H, Q, Rn, m0):
    m, P = [m0], [np.eye(len(m0))]
    for t in range(1, len(y)):
        mp = F @ m[-1]; Pp = F @ P[-1] @ F.T + Q; K = Pp @ H.T @ np.linalg.inv(H @ Pp @ H.T + Rn)
        m.append(mp + K @ (y[t] - H @ mp)); P.append(Pp - K @ H @ Pp)
    return dict(m=np.array(m), P=np.array(P), spread=np.trace(np.array(P), axis1=1, axis2=2))

@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
