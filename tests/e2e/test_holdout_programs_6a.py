"""Hold-out programs, sixth round (numerical PDEs and linear algebra at real sizes): a two-grid
cycle for Poisson, Fourier spectral differentiation through DFT matrices, cyclic Jacobi eigenvalue
rotations, Lanczos with Sturm bisection, CSR products and power iteration, a block-tridiagonal
solve, an adaptive Simpson refinement tree, Sod's shock tube (MUSCL, van Leer, HLL), an inverse
heat problem through its simulation, 3-d heat with named dims, SPH, Monte Carlo walks on u32 LCGs,
Richardson extrapolation against @, Bogacki-Shampine with error control, implicit heat steps with
inner Jacobi sweeps, GMRES with modified Gram-Schmidt and 2-d superbee advection, each checked
against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers and
bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry, spd

CASES = {}
case = registry(CASES)


# 1 two-grid cycle for the 2-d Poisson equation
def mg_smooth(u, f, h, steps, w=0.8):
    for _ in range(steps - 1):
        v = np.zeros_like(u)
        v[1:-1, 1:-1] = (1 - w) * u[1:-1, 1:-1] + w * 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h * h * f[1:-1, 1:-1])
        u = v
    return u
def mg_resid(u, f, h):
    r = np.zeros_like(u)
    r[1:-1, 1:-1] = f[1:-1, 1:-1] - (4 * u[1:-1, 1:-1] - u[:-2, 1:-1] - u[2:, 1:-1] - u[1:-1, :-2] - u[1:-1, 2:]) / (h * h)
    return r
def mg_inputs(G=129):
    x = np.linspace(0, 1, G)
    return dict(f=np.sin(np.pi * x)[:, None] * np.sin(2 * np.pi * x)[None, :] * 5 + R(601).standard_normal((G, G)))
@case("multigrid_two_grid", inputs=mg_inputs, tol=(1e-9, 1e-11))
def _(f):
    G = len(f); Gc = (G - 1) // 2 + 1; h = 1 / (G - 1)
    u1 = mg_smooth(np.zeros_like(f), f, h, 4); r1 = mg_resid(u1, f, h)
    w = np.array([1.0, 2.0, 1.0]); W = np.outer(w, w) / 16; rc = np.zeros((Gc, Gc))
    for I in range(1, Gc - 1):
        for J in range(1, Gc - 1):
            rc[I, J] = (W * r1[2 * I - 1:2 * I + 2, 2 * J - 1:2 * J + 2]).sum()
    ec = mg_smooth(np.zeros((Gc, Gc)), rc, 2 * h, 60)
    i = np.arange(G); lo, hi = i // 2, (i + 1) // 2
    ef = 0.25 * (ec[lo][:, lo] + ec[hi][:, lo] + ec[lo][:, hi] + ec[hi][:, hi])
    u2 = u1 + ef; u3 = mg_smooth(u2, f, h, 4)
    nrm = lambda r: np.sqrt((r * r).sum()) * h
    return dict(u1=u1, r1=r1, rc=rc, ec=ec, ef=ef, u3=u3, before=nrm(r1), after=nrm(mg_resid(u3, f, h)), __stdout__=["residual"])


# 2 Fourier spectral differentiation through explicit DFT matrices
def spectral_inputs(N=96):
    x = 2 * np.pi * np.arange(N) / N
    return dict(f=np.exp(np.sin(x)) + 0.3 * np.cos(5 * x) + 0.01 * R(602).standard_normal(N))
@case("fourier_spectral", inputs=spectral_inputs, tol=(1e-8, 1e-9))
def _(f):
    N = len(f); k = np.arange(N); th = 2 * np.pi * ((np.outer(k, k)) % N) / N
    re = (f * np.cos(th)).sum(1); im = -(f * np.sin(th)).sum(1)
    kw = np.where(k == 0, 0.0, np.where(2 * k == N, 0.0, np.where(2 * k < N, k, k - N))).astype(float)
    inv = lambda a, b: (a[:, None] * np.cos(th) - b[:, None] * np.sin(th)).sum(0) / N
    k2 = np.where(2 * k == N, (N / 2) ** 2, kw * kw)
    n = np.arange(N); D = -(kw[None, None, :] * np.sin(th[:, (n[:, None] - n[None, :]) % N].transpose(1, 2, 0))).sum(2) / N
    sigma = np.exp(-36 * (np.abs(kw) / (N / 2)) ** 8)
    df = inv(-kw * im, kw * re)
    return dict(re=re, im=im, kw=kw, df=df, d2f=inv(-k2 * re, -k2 * im), D=D, df_matrix=D @ f,
                filtered=inv(sigma * re, sigma * im), gap=np.abs(df - D @ f).max(), antisym=np.abs(D + D.T).max())


# 3 cyclic Jacobi eigenvalue rotations
@case("jacobi_eigen", inputs=lambda: dict(A0=spd(6, 603) - 6 * np.eye(6)), tol=(1e-8, 1e-10))
def _(A0):
    n = 6; pairs = [(p, q) for p in range(n) for q in range(n) if p < q]
    A = [A0]; V = [np.eye(n)]; cs = [(1.0, 0.0)]
    for s in range(1, 5 * len(pairs) + 1):
        p, q = pairs[(s - 1) % len(pairs)]; a = A[-1]
        if abs(a[p, q]) < 1e-300: c, sn = 1.0, 0.0
        else:
            th = (a[q, q] - a[p, p]) / (2 * a[p, q]); t = (1.0 if th >= 0 else -1.0) / (abs(th) + np.sqrt(th * th + 1)); c = 1 / np.sqrt(t * t + 1); sn = t * c
        J = np.eye(n); J[p, p] = J[q, q] = c; J[p, q] = sn; J[q, p] = -sn
        A.append(J.T @ a @ J); V.append(V[-1] @ J); cs.append((c, sn))
    c, sn = np.array(cs).T; A = np.array(A); off = np.sqrt((A ** 2 * (1 - np.eye(n))).sum((1, 2)))
    lam = np.diag(A[-1])
    return dict(c=c, sn=sn, A=A, V=np.array(V), off=off, lam=lam, vecs=V[-1], resid=np.abs(A0 @ V[-1] - V[-1] * lam).max())


# 4 Lanczos tridiagonalization and Sturm bisection of its Ritz values
def lanczos_inputs(N=120):
    Q, _ = np.linalg.qr(R(604).standard_normal((N, N)))
    ev = np.concatenate([np.linspace(-3, 5, N - 1), [9.0]])
    return dict(A=(Q * ev) @ Q.T, b=R(605).standard_normal(N))
@case("lanczos_sturm", inputs=lanczos_inputs, tol=(1e-7, 1e-9), outputs=["alpha", "beta", "smallest", "largest"])
def _(A, b):
    M = 24; q = [b / np.linalg.norm(b)]; alpha = []; beta = [0.0]
    for j in range(M):
        alpha.append(q[j] @ A @ q[j]); r = A @ q[j] - alpha[j] * q[j] - (beta[j] * q[j - 1] if j else 0)
        if j + 1 < M: beta.append(np.linalg.norm(r)); q.append(r / beta[-1])
    a, bt = np.array(alpha), np.array(beta)
    def below(x):
        d = a[0] - x; c = int(d < 0)
        for i in range(1, M):
            d = a[i] - x - bt[i] ** 2 / (1e-300 if abs(d) < 1e-300 else d); c += d < 0
        return c
    rad = np.abs(A).sum(1).max()
    def bisect(target):
        lo, hi = -rad, rad
        for _ in range(69):
            m = 0.5 * (lo + hi)
            if below(m) >= target: hi = m
            else: lo = m
        return 0.5 * (lo + hi)
    T = np.diag(a) + np.diag(bt[1:], 1) + np.diag(bt[1:], -1); ev = np.linalg.eigvalsh(T)
    sm, lg = bisect(1), bisect(M)
    assert abs(sm - ev[0]) < 1e-9 and abs(lg - ev[-1]) < 1e-9
    return dict(alpha=a, beta=bt, smallest=sm, largest=lg, __stdout__=["ritz range"])


# 5 CSR sparse products and power iteration on a 2-d Laplacian plus a random symmetric part
def csr_inputs(m=14):
    n = m * m; A = np.zeros((n, n)); rg = R(606)
    for i in range(m):
        for j in range(m):
            k = i * m + j; A[k, k] = 4.0 + rg.random()
            for di, dj in ((1, 0), (0, 1)):
                if i + di < m and j + dj < m:
                    kk = (i + di) * m + j + dj; A[k, kk] = A[kk, k] = -1.0 - 0.2 * rg.random()
    rows, cols = np.nonzero(A)
    rp = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    return dict(row_ptr=rp, col=cols.astype(np.int32), val=A[rows, cols], x0=rg.standard_normal(n))
@case("csr_spmv_power", inputs=csr_inputs, tol=(1e-9, 1e-11))
def _(row_ptr, col, val, x0):
    n = len(x0); A = np.zeros((n, n)); rows = np.repeat(np.arange(n), np.diff(row_ptr)); A[rows, col] = val
    v = [x0 / np.linalg.norm(x0)]; w = [np.zeros(n)]; ray = []
    for t in range(1, 40):
        w.append(A @ v[-1]); ray.append(v[-1] @ w[-1]); v.append(w[-1] / np.linalg.norm(w[-1]))
    return dict(row_of=rows.astype(np.int32), nnz_row=np.diff(row_ptr), y=A @ x0, yt=A.T @ x0, diag=np.diag(A),
                v=np.array(v), rayleigh=np.array([0.0] + ray), dominant=ray[-1], symmetric=np.bool_(True),
                __stdout__=["dominant eigenvalue"])


# 6 block-tridiagonal (2 x 2 blocks) solve by block Thomas
def bt_inputs(NB=300):
    rg = R(607)
    Lb, Ub = rg.standard_normal((NB, 2, 2)), rg.standard_normal((NB, 2, 2))
    Db = rg.standard_normal((NB, 2, 2)) + 6 * np.eye(2)
    return dict(Lb=Lb, Db=Db, Ub=Ub, rhs=rg.standard_normal((NB, 2)))
@case("block_thomas", inputs=bt_inputs, tol=(1e-9, 1e-11))
def _(Lb, Db, Ub, rhs):
    NB = len(rhs); P = [Db[0]]; g = [rhs[0]]
    for n in range(1, NB):
        Pi = np.linalg.inv(P[-1]); P.append(Db[n] - Lb[n] @ Pi @ Ub[n - 1]); g.append(rhs[n] - Lb[n] @ Pi @ g[-1])
    x = [None] * NB; x[-1] = np.linalg.solve(P[-1], g[-1])
    for n in range(NB - 2, -1, -1):
        x[n] = np.linalg.solve(P[n], g[n] - Ub[n] @ x[n + 1])
    x = np.array(x); M = np.zeros((2 * NB, 2 * NB))
    for n in range(NB):
        M[2 * n:2 * n + 2, 2 * n:2 * n + 2] = Db[n]
        if n: M[2 * n:2 * n + 2, 2 * n - 2:2 * n] = Lb[n]
        if n < NB - 1: M[2 * n:2 * n + 2, 2 * n + 2:2 * n + 4] = Ub[n]
    assert np.abs(x.ravel() - np.linalg.solve(M, rhs.ravel())).max() < 1e-10
    return dict(P=np.array(P), g=np.array(g), x=x, xr=x[::-1], Ax=(M @ x.ravel()).reshape(NB, 2))


# 7 adaptive Simpson quadrature as a refinement tree
@case("adaptive_quadrature", inputs=lambda: dict(a=np.float64(0.0), b=np.float64(2.0), tol=np.float64(1e-7)), tol=(1e-10, 1e-12))
def _(a, b, tol):
    L, W = 12, 4096
    f = lambda x: 1.0 / (1e-3 + (x - 0.3) ** 2) + np.sin(12 * x) * np.exp(-x)
    simp = lambda lo, hi: (hi - lo) / 6 * (f(lo) + 4 * f(0.5 * (lo + hi)) + f(hi))
    width = (b - a) / 2.0 ** np.arange(L); S = np.zeros((L, W))
    for l in range(L):
        n = np.arange(2 ** l); S[l, :2 ** l] = simp(a + n * width[l], a + (n + 1) * width[l])
    fine = S[1:, 0::2] + S[1:, 1::2]; n = np.arange(W // 2)
    ok = (n[None] < 2 ** np.arange(L - 1)[:, None]) & (np.abs(fine - S[:-1, :W // 2]) < 15 * tol / 2.0 ** np.arange(L - 1)[:, None])
    done = np.zeros_like(ok)
    for l in range(1, L - 1):
        done[l] = done[l - 1][n // 2] | ok[l - 1][n // 2]
    take = ok & ~done; Sp = S[:-1, :W // 2]
    rest = (n < 2 ** (L - 2)) & ~done[L - 2] & ~ok[L - 2]
    integral = np.where(take, fine + (fine - Sp) / 15, 0).sum() + np.where(rest, fine[L - 2], 0).sum()
    xs = np.linspace(a, b, 400001); fx = f(xs)
    assert abs(integral - (fx[:-1] + fx[1:]).sum() / 2 * (xs[1] - xs[0])) < 1e-5
    return dict(width=width, S=S, fine=fine, ok=ok, done=done, take=take, integral=integral,
                intervals=np.int32(take.sum()), per_level=take.sum(1).astype(np.int32), __stdout__=["integral"])


# 8 Sod shock tube: MUSCL with a van Leer limiter and the HLL flux
def sod_inputs(N=400):
    x = (np.arange(N) + 0.5) / N; left = x < 0.5
    rho = np.where(left, 1.0, 0.125); p = np.where(left, 1.0, 0.1)
    return dict(U0=np.stack([rho, np.zeros(N), p / 0.4], 1))
@case("sod_shock_hll", inputs=sod_inputs, tol=(1e-9, 1e-11))
def _(U0):
    N = len(U0); dx = 1 / N; dt = 0.2 * dx; g = 1.4; U = [U0]; i = np.arange(N + 1)
    def vl(a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a * b <= 0, 0.0, 2 * a * b / (a + b))
    pres = lambda u: (g - 1) * (u[..., 2] - 0.5 * u[..., 1] ** 2 / u[..., 0])
    def flux(u):
        p = pres(u); return np.stack([u[..., 1], u[..., 1] ** 2 / u[..., 0] + p, (u[..., 2] + p) * u[..., 1] / u[..., 0]], -1)
    imm, im, ip, ipp = (np.clip(i + d, 0, N - 1) for d in (-2, -1, 0, 1))
    for t in range(1, 300):
        u = U[-1]
        L = u[im] + 0.5 * vl(u[im] - u[imm], u[ip] - u[im]); Rr = u[ip] - 0.5 * vl(u[ip] - u[im], u[ipp] - u[ip])
        cl, cr = np.sqrt(g * pres(L) / L[:, 0]), np.sqrt(g * pres(Rr) / Rr[:, 0])
        vl_, vr = L[:, 1] / L[:, 0], Rr[:, 1] / Rr[:, 0]
        sl = np.minimum(np.minimum(vl_ - cl, vr - cr), 0.0)[:, None]; sr = np.maximum(np.maximum(vl_ + cl, vr + cr), 0.0)[:, None]
        F = (sr * flux(L) - sl * flux(Rr) + sl * sr * (Rr - L)) / (sr - sl)
        U.append(u - dt / dx * (F[1:] - F[:-1]))
    U = np.array(U); fs = U[-1]; k = np.arange(1, N)
    assert np.isfinite(U).all()
    shock = ((fs[k - 1, 0] - fs[k, 0] > 0.05) & (k > N // 2 + N // 4)).sum()
    return dict(final_state=fs, totals=U.sum(1) * dx, rho_max=fs[:, 0].max(), shock_cell=np.int32(shock))


# 9 inverse heat conduction: d misfit / d conductivities through 150 explicit steps
def heat_sim(kap, u0, T=150, dt=0.2):
    hm = 2 * kap[..., :-1] * kap[..., 1:] / (kap[..., :-1] + kap[..., 1:]); u = u0 + 0 * kap[..., :1]
    for _ in range(T - 1):
        fl = hm * (u[..., 1:] - u[..., :-1]); d = np.zeros_like(u); d[..., :-1] += fl; d[..., 1:] -= fl
        u = u + dt * d
    return u
def heat_objective(kap, u0, obs):
    return 0.5 * ((heat_sim(kap, u0) - obs) ** 2).sum(-1) + 0.01 * ((kap[..., 1:] - kap[..., :-1]) ** 2).sum(-1)
def heat_inputs(N=40):
    x = np.linspace(0, 1, N); true = 1.0 + 0.5 * np.sin(3 * x)
    u0 = np.exp(-((x - 0.3) / 0.1) ** 2)
    return dict(kappa0=np.full(N, 0.8), u0=u0, obs=heat_sim(true, u0) + 0.002 * R(609).standard_normal(N))
@case("inverse_heat_kappa", inputs=heat_inputs, tol=(1e-8, 1e-11))
def _(kappa0, u0, obs):
    N = len(kappa0); h = 1e-30                       # complex step: the gradient to rounding
    grad = heat_objective(kappa0 + 1j * h * np.eye(N), u0, obs).imag / h
    k1 = np.maximum(kappa0 - 0.5 * grad, 0.05)
    return dict(loss=heat_objective(kappa0, u0, obs), grad=grad, kappa1=k1, loss1=heat_objective(k1, u0, obs),
                mass0=u0.sum(), massT=heat_sim(k1, u0).sum(), __stdout__=["loss"])


# 10 3-d explicit heat equation with named dims
def heat3d_inputs(X=40, Y=36, Z=32):
    rg = R(610); g = np.meshgrid(*(np.linspace(0, 1, n) for n in (X, Y, Z)), indexing="ij")
    u0 = np.exp(-20 * ((g[0] - 0.4) ** 2 + (g[1] - 0.5) ** 2 + (g[2] - 0.6) ** 2))
    return dict(u0=u0.astype(np.float32), src=rg.random((X, Y, Z)).astype(np.float32))
@case("heat3d_named", inputs=heat3d_inputs, tol=(1e-4, 1e-5), vk=True)
def _(u0, src):
    u = [u0.astype(np.float64)]; s = src.astype(np.float64)
    for t in range(1, 24):
        a = u[-1]; n = np.zeros_like(a); c = a[1:-1, 1:-1, 1:-1]
        n[1:-1, 1:-1, 1:-1] = c + 0.15 * (a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1] + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1]
                                          + a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] - 6 * c) + 0.01 * s[1:-1, 1:-1, 1:-1]
        u.append(n)
    u = np.array(u); fin = u[-1]
    return dict(heat=u.sum((1, 2, 3)), hottest=u.max((1, 2, 3)), fin=fin, mean_x=fin.mean((1, 2)),
                mean_y=fin.mean((0, 2)), mean_z=fin.mean((0, 1)))


# 11 SPH in 2-d: cubic-spline densities, pressure forces, a reflecting box
def sph_inputs(P=144):
    n = int(round(np.sqrt(P))); g = (np.arange(n) + 0.5) / n * 0.5 + 0.25; xx, yy = np.meshgrid(g, g, indexing="ij")
    return dict(p0=np.stack([xx.ravel(), yy.ravel()], 1) + 0.003 * R(611).standard_normal((P, 2)))
@case("sph_density", inputs=sph_inputs, tol=(1e-8, 1e-10))
def _(p0):
    P = len(p0); hs, dt, m = 0.08, 0.002, 1.0 / P
    def W(q):
        s = 10 / (7 * np.pi * hs * hs)
        return np.where(q < 1, s * (1 - 1.5 * q * q + 0.75 * q ** 3), np.where(q < 2, s * 0.25 * np.clip(2 - q, 0, None) ** 3, 0.0))
    def dW(q):
        s = 10 / (7 * np.pi * hs ** 3)
        return np.where(q < 1, s * (-3 * q + 2.25 * q * q), np.where(q < 2, -s * 0.75 * np.clip(2 - q, 0, None) ** 2, 0.0))
    x = [p0]; v = [np.zeros_like(p0)]; rhos = []
    for t in range(30):
        d = x[-1][:, None] - x[-1][None]; dist = np.sqrt((d ** 2).sum(-1) + 1e-12)
        rho = m * W(dist / hs).sum(1); pr = 0.5 * (rho ** 2 - 1); rhos.append(rho)
        coef = (pr / rho ** 2)[:, None] + (pr / rho ** 2)[None] ; coef = coef * dW(dist / hs) / dist
        np.fill_diagonal(coef, 0.0)
        acc = -m * (coef[..., None] * d).sum(1); acc[:, 1] -= 1.0
        if t == 29: break
        vn = v[-1] + dt * acc; xn = x[-1] + dt * vn; hit = (xn < 0) | (xn > 1)
        vv = np.where(hit, -0.5 * vn, vn); v.append(vv); x.append(np.clip(x[-1] + dt * vv, 0, 1))
    v = np.array(v); rhos = np.array(rhos)
    return dict(x=np.array(x), v=v, rho=rhos, kinetic=0.5 * m * (v ** 2).sum((1, 2)), total_mass=rhos.sum(1) / P)


# 12 Monte Carlo walks for the Laplace equation driven by u32 LCGs
def mc_inputs():
    return dict(starts=np.int32([[12, 12], [3, 12], [20, 5], [1, 1], [12, 22], [6, 18]]),
                bvals=np.array([1.0, 0.0, 0.25, 0.75]), seed=np.uint32(20261201))
@case("mc_hash_walk", inputs=mc_inputs, tol=(1e-12, 1e-14))
def _(starts, bvals, seed):
    G, W, S = 24, 256, 400; P = len(starts); u = np.uint32
    with np.errstate(over="ignore"):
        idx = (np.arange(P)[:, None] * W + np.arange(W)[None]).astype(u)
        st = (seed + idx * u(2654435761)) * u(747796405) + u(2891336453)
        r = np.repeat(starts[:, :1], W, 1).astype(np.int64); c = np.repeat(starts[:, 1:], W, 1).astype(np.int64)
        for s in range(1, S):
            st = st * u(1664525) + u(1013904223); d = (st >> u(30)).astype(np.int64)
            ins = (r > 0) & (r < G - 1) & (c > 0) & (c < G - 1)
            r, c = r + ins * ((d == 1) * 1 - (d == 0) * 1), c + ins * ((d == 3) * 1 - (d == 2) * 1)
    ends = np.where(r == 0, 0, np.where(r == G - 1, 1, np.where(c == 0, 2, np.where(c == G - 1, 3, -1))))
    hits = np.stack([(ends == k).sum(1) for k in range(4)], 1).astype(np.int32); un = (ends < 0).sum(1).astype(np.int32)
    return dict(ends=ends.astype(np.int32), hits=hits, unfinished=un, estimate=((hits * bvals).sum(1) + 0.5 * un) / W)


# 13 Richardson extrapolation of central differences against the derivative by @
@case("richardson_autodiff", inputs=lambda: dict(xs=np.linspace(-1.5, 2.5, 9), h0=np.float64(0.4)), tol=(1e-8, 1e-9))
def _(xs, h0):
    K = 6; g = lambda x: np.exp(np.sin(x)) * np.log1p(x * x)
    dg = lambda x: np.exp(np.sin(x)) * (np.cos(x) * np.log1p(x * x) + 2 * x / (1 + x * x))
    step = h0 / 2.0 ** np.arange(K); D = np.zeros((len(xs), K, K))
    D[:, :, 0] = (g(xs[:, None] + step) - g(xs[:, None] - step)) / (2 * step)
    for j in range(1, K):
        for i in range(j, K):
            D[:, i, j] = D[:, i, j - 1] + (D[:, i, j - 1] - D[:, i - 1, j - 1]) / (4.0 ** j - 1)
    e = 1e-3; ex = dg(xs)
    return dict(step=step, D=D, best=D[:, -1, -1], ys=g(xs), J=np.diag(ex), exact=ex,
                err=np.abs(np.diagonal(D, 0, 1, 2) - ex[:, None]),
                second=(g(xs + e) - 2 * g(xs) + g(xs - e)) / (e * e), offdiag=0.0)


# 14 van der Pol by the Bogacki-Shampine 3(2) pair with step-size control
@case("bogacki_vdp", inputs=lambda: dict(y0=np.array([2.0, 0.0]), mu=np.float64(4.0), tol=np.float64(1e-6)), tol=(1e-9, 1e-11))
def _(y0, mu, tol):
    A = 300; f = lambda y: np.array([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])
    def bs23(y, h):
        k1 = f(y); k2 = f(y + 0.5 * h * k1); k3 = f(y + 0.75 * h * k2); yn = y + h * (2 * k1 + 3 * k2 + 4 * k3) / 9
        k4 = f(yn); e = h * (-5 * k1 / 72 + k2 / 12 + k3 / 9 - k4 / 8); sc = tol * (1 + np.maximum(np.abs(y), np.abs(yn)))
        return yn, np.sqrt(0.5 * ((e / sc) ** 2).sum())
    t, y, h, err, ok = [0.0], [y0], [0.01], [0.0], [False]
    for n in range(1, A):
        yn, e = bs23(y[-1], h[-1]); a = e <= 1
        err.append(e); ok.append(a); y.append(yn if a else y[-1]); t.append(t[-1] + (h[-1] if a else 0.0))
        h.append(h[-1] * min(5.0, max(0.2, 0.9 * (1 / max(e, 1e-10)) ** (1 / 3))))
    y = np.array(y); acc = sum(ok)
    return dict(t=np.array(t), u=y[:, 0], v=y[:, 1], h=np.array(h), err=np.array(err), ok=np.array(ok),
                accepted=np.int32(acc), rejected=np.int32(A - 1 - acc), amplitude=np.abs(y[:, 0]).max(), __stdout__=["accepted"])


# 15 backward-Euler heat steps solved by inner Jacobi sweeps; dE/dr and dE/du0 through both loops
def implicit_heat(u, r, T=12, sweeps=15):
    """u: [..., G, G] (a batch of fields); r may be complex (complex-step derivative)."""
    d = 1 + 4 * r; us = [u]
    for _ in range(T - 1):
        b = us[-1]; z = b
        for _ in range(sweeps - 1):
            n = np.zeros_like(z)
            n[..., 1:-1, 1:-1] = 0.2 * z[..., 1:-1, 1:-1] + 0.8 * (b[..., 1:-1, 1:-1] + r * (z[..., :-2, 1:-1] + z[..., 2:, 1:-1] + z[..., 1:-1, :-2] + z[..., 1:-1, 2:])) / d
            z = n
        us.append(z)
    return np.array(us)
def implicit_inputs(G=20):
    x = np.linspace(0, 1, G)
    return dict(u0=np.outer(np.sin(np.pi * x), np.sin(2 * np.pi * x)) + 0.1 * R(615).standard_normal((G, G)), r=np.float64(0.7))
@case("implicit_heat_inner", inputs=implicit_inputs, tol=(1e-9, 1e-11))
def _(u0, r):
    G = len(u0); u = implicit_heat(u0, r); E = 0.5 * (u[-1] ** 2).sum(); h = 1e-30
    de_dr = (0.5 * (implicit_heat(u0.astype(complex), r + 1j * h)[-1] ** 2).sum()).imag / h
    M = implicit_heat(np.eye(G * G).reshape(G * G, G, G), r)[-1].reshape(G * G, G * G).T   # u_T = M u0 (linear)
    return dict(u=u, energy=E, de_dr=de_dr, de_du0=(M.T @ (M @ u0.ravel())).reshape(G, G), peak=u.max((1, 2)),
                __stdout__=["energy"])


# 16 GMRES: Arnoldi with modified Gram-Schmidt, Givens rotations, back substitution
def gmres_inputs(N=80):
    rg = R(616)
    return dict(A=np.eye(N) * 1.2 + rg.standard_normal((N, N)) / np.sqrt(N), b=rg.standard_normal(N))
@case("arnoldi_gmres", inputs=gmres_inputs, tol=(1e-8, 1e-10),
      outputs=["H", "Q", "Rc", "cs", "sn", "g", "resid_est", "x", "true_resid"])
def _(A, b):
    m = 16; N = len(b); beta0 = np.linalg.norm(b); Q = [b / beta0]; H = np.zeros((m, m + 1))
    for j in range(m):
        w = A @ Q[j]
        for k in range(j + 1):
            H[j, k] = w @ Q[k]; w = w - H[j, k] * Q[k]
        H[j, j + 1] = np.linalg.norm(w); Q.append(w / H[j, j + 1])
    Rc = np.zeros((m, m + 1)); cs = np.zeros(m); sn = np.zeros(m)
    for j in range(m):
        x = H[j].copy()
        for s in range(j):
            a, c = x[s], x[s + 1]; x[s], x[s + 1] = cs[s] * a + sn[s] * c, -sn[s] * a + cs[s] * c
        Rc[j] = x; d = np.hypot(x[j], H[j, j + 1]); cs[j], sn[j] = x[j] / d, H[j, j + 1] / d
    g = [beta0]
    for j in range(m):
        g.append(-sn[j] * g[-1])
    g = np.array(g); Rt = np.triu(Rc[:, :m].T, 1) + np.diag(cs * np.diag(Rc) + sn * H[np.arange(m), np.arange(m) + 1])
    y = np.linalg.solve(Rt, cs * g[:m]); x = np.array(Q[:m]).T @ y
    assert np.abs(Rt - np.triu(Rt)).max() == 0
    return dict(H=H, Q=np.array(Q), Rc=Rc, cs=cs, sn=sn, g=g, resid_est=np.abs(g[1:]), x=x,
                true_resid=np.linalg.norm(b - A @ x), __stdout__=["GMRES residual"])


# 17 2-d flux-limited advection (superbee), dimension split, periodic
def advect_inputs(NX=48, NY=40):
    q = np.zeros((NX, NY), np.float32); q[10:22, 8:20] = 1.0
    return dict(q0=q, cx=np.float32(0.45), cy=np.float32(0.3))
@case("advect2d_superbee", inputs=advect_inputs, tol=(2e-4, 2e-5), vk=True)
def _(q0, cx, cy):
    f = np.float32
    sb = lambda r: np.maximum(f(0), np.maximum(np.minimum(f(2) * r, f(1)), np.minimum(r, f(2))))
    def ratio(up, here):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(np.abs(here) > f(1e-6), up / here, f(0))
    face = lambda qm, q, qp, c: q + f(0.5) * (f(1) - c) * sb(ratio(q - qm, qp - q)) * (qp - q)
    def sweep(q, c, ax):
        qm, qmm, qp = (np.roll(q, s, ax) for s in (1, 2, -1))
        return q - c * (face(qm, q, qp, c) - face(qmm, qm, q, c))
    qs = [q0]
    for _ in range(39):
        qs.append(sweep(sweep(qs[-1], cx, 0), cy, 1))
    qs = np.array(qs)
    return dict(mass=qs.sum((1, 2)), peak=qs.max((1, 2)), low=qs.min((1, 2)), final_q=qs[-1])


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
