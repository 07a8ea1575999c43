"""Hold-out programs, tenth round (numerical methods whose steps run inner loops or compute whole
tensors): backward Euler with Newton iterations solved by std's `solve`, Crank-Nicolson with a
Thomas solve per step, CG, SOR and Gauss-Seidel inside time steps, power iteration with deflation,
bisection and Picard iterations per step, RK4 substeps, Bratu shooting, BFGS with a backtracking
line search and Lanczos with reorthogonalisation, each checked against NumPy computed here. Every case is `sized` (it also
runs built for its inputs' sizes, where a step computing tensors runs in one dispatch). Each case
states its tolerance (`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on
vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32


# 1 backward Euler with K Newton iterations a step, each solving the Jacobian
def be_inputs(N=6, seed=1001):
    rg = R(seed); A = -2.0 * np.eye(N) + np.eye(N, k=1) + np.eye(N, k=-1) + 0.1 * rg.standard_normal((N, N))
    return dict(A=A, u0=rg.standard_normal(N))
@case("be_newton_cubic", sized=True, inputs=be_inputs, outputs=["u", "defect", "energy", "decays"], tol=(1e-9, 1e-11))
def _(A, u0):
    N = len(u0); h, S, K = 0.05, 16, 3
    u = [u0]; z = np.zeros((S, K + 1, N))
    for s in range(1, S):
        w = u[-1].copy(); z[s, 0] = w
        for k in range(1, K + 1):
            g = w - u[-1] - h * (A @ w - w ** 3); J = np.eye(N) * (1 + 3 * h * w * w) - h * A
            w = w - np.linalg.solve(J, g); z[s, k] = w
        u.append(w)
    u = np.array(u)
    defect = np.array([0.0] + [np.abs(u[s] - u[s - 1] - h * (A @ u[s] - u[s] ** 3)).max() for s in range(1, S)])
    energy = 0.5 * (u * u).sum(1)
    return dict(u=u, defect=defect, energy=energy, decays=np.bool_(all(energy[1:] <= energy[:-1] + 1e-12)),
                __stdout__=["final energy"])


# 2 Crank-Nicolson heat with a Thomas solve per step
def cn_inputs(M=20, seed=1002):
    x = np.linspace(0, 1, M); rg = R(seed)
    return dict(u0=(np.sin(np.pi * x) + 0.3 * rg.random(M)).astype(f32), src=(np.exp(-40 * (x - 0.3) ** 2)).astype(f32))
@case("cn_heat_thomas", sized=True, inputs=cn_inputs, outputs=["u", "peak", "where_peak", "heat"], tol=(2e-5, 2e-6), vk=True)
def _(u0, src):
    M = len(u0); r, dt, T = f32(0.8), f32(0.01), 24
    def thomas(a, b, c, d):
        n = len(d); cp = np.zeros(n, f32); dp = np.zeros(n, f32)
        cp[0] = c / b; dp[0] = d[0] / b
        for i in range(1, n):
            den = b - a * cp[i - 1]; cp[i] = c / den; dp[i] = (d[i] - a * dp[i - 1]) / den
        x = np.zeros(n, f32); x[-1] = dp[-1]
        for i in range(n - 2, -1, -1):
            x[i] = dp[i] - cp[i] * x[i + 1]
        return x
    u = [u0]
    for t in range(1, T):
        v = u[-1]; nb = np.r_[f32(0), v[:-1]] + np.r_[v[1:], f32(0)]
        w = (1 - r) * v + dt * src + f32(0.5) * r * nb
        u.append(thomas(-f32(0.5) * r, 1 + r, -f32(0.5) * r, w))
    u = np.array(u); peak = u.max(1)
    return dict(u=u, peak=peak, where_peak=np.argmax(u, 1).astype(np.int32), heat=u.sum(1), __stdout__=["heat at end"])


# 3 implicit diffusion on a ring, each step solved by a fixed number of CG iterations
def cgd_inputs(N=12, seed=1003):
    rg = R(seed); return dict(kappa=0.5 + rg.random(N), u0=np.exp(-0.5 * (np.arange(N) - 4.0) ** 2) + 0.1 * rg.random(N))
@case("cg_implicit_diffusion", sized=True, inputs=cgd_inputs, outputs=["u", "res", "mass", "spread"], tol=(1e-9, 1e-12))
def _(kappa, u0):
    N = len(u0); dt, T, IT = 0.4, 10, 12
    apply = lambda v: v + dt * (kappa * (v - np.roll(v, 1)) + np.roll(kappa, -1) * (v - np.roll(v, -1)))
    def cg(b):
        x = 0 * b; r = b.copy(); p = b.copy(); rr = r @ r
        for k in range(IT):
            q = apply(p); a = rr / (p @ q); x = x + a * p; r = r - a * q; rn = r @ r; p = r + rn / rr * p; rr = rn
        return x, rr
    u = [u0]; res = [0.0]
    for t in range(1, T):
        x, rr = cg(u[-1]); u.append(x); res.append(rr)
    u = np.array(u); mass = u.sum(1)
    return dict(u=u, res=np.array(res), mass=mass, spread=u.max(1) - u.min(1), __stdout__=["mass drift"])


# 4 backward-Euler heat plate, each step by red-black SOR sweeps
def sor_inputs(G=10, seed=1004):
    rg = R(seed); u = rg.random((G, G)).astype(f32); u[0] = u[-1] = 0; u[:, 0] = u[:, -1] = 0; u[4, 5] = 5
    return dict(u0=u, omega=f32(1.3))
@case("sor_heat_steps", sized=True, inputs=sor_inputs, outputs=["u", "mean", "hottest", "hot_at"], tol=(2e-5, 2e-6))
def _(u0, omega):
    G = len(u0); lam, T, SW = f32(0.5), 8, 6
    def half(z, b, colour):
        w = z.copy()
        for i in range(1, G - 1):
            for j in range(1, G - 1):
                if (i + j) % 2 == colour:
                    w[i, j] = (1 - omega) * z[i, j] + omega * (b[i, j] + lam * (z[i - 1, j] + z[i + 1, j] + z[i, j - 1] + z[i, j + 1])) / (1 + 4 * lam)
        return w
    u = [u0]
    for t in range(1, T):
        z = u[-1]
        for k in range(SW):
            z = half(half(z, u[-1], 0), u[-1], 1)
        u.append(z)
    u = np.array(u); inner = u[:, 1:-1, 1:-1]; hottest = inner.max((1, 2))
    hot_at = np.array([min(i * G + j for i in range(1, G - 1) for j in range(1, G - 1) if u[t, i, j] == hottest[t]) for t in range(T)], np.int32)
    return dict(u=u, mean=u.sum((1, 2)) / f32(G * G), hottest=hottest, hot_at=hot_at)


# 5 power iteration with Hotelling deflation, a whole deflated matrix each step
def pdef_inputs(N=7, seed=1005):
    rg = R(seed); Q = np.linalg.qr(rg.standard_normal((N, N)))[0]
    return dict(A=Q @ np.diag([9.0, 6.0, 3.5, 1.5, 1.0, 0.5, 0.2][:N]) @ Q.T, v0=rg.standard_normal(N))
@case("power_deflation", sized=True, inputs=pdef_inputs, outputs=["V", "lam", "B", "resid", "gram", "ordered"], tol=(1e-9, 1e-11))
def _(A, v0):
    K, P = 3, 90; B = [A]; V, lam = [], []
    for m in range(K):
        x = v0
        for _ in range(P - 1):
            y = B[m] @ x; x = y / np.sqrt(y @ y)
        V.append(x); lam.append(x @ B[m] @ x)
        if m + 1 < K:
            B.append(B[m] - lam[m] * np.outer(x, x))
    V, lam = np.array(V), np.array(lam)
    resid = (((A @ V.T).T - lam[:, None] * V) ** 2).max(1)
    return dict(V=V, lam=lam, B=np.array(B), resid=resid, gram=V @ V.T, ordered=np.bool_(all(np.diff(lam) <= 0)),
                __stdout__=["eigenvalues"])


# 6 backward Euler for a batch of cubic ODEs, each step's root by bisection
def bis_inputs(M=6, seed=1006):
    rg = R(seed); return dict(c=(0.5 + 3 * rg.random(M)).astype(f32), y0=(2 * rg.standard_normal(M)).astype(f32))
@case("bisect_implicit_batch", sized=True, inputs=bis_inputs, outputs=["y", "gap", "amplitude", "stiffest"], tol=(2e-5, 2e-6), vk=True)
def _(c, y0):
    a, h, S, NB = f32(2), f32(0.1), 30, 28
    def solve(rhs, hc):
        lo, hi = -abs(rhs) - f32(1), abs(rhs) + f32(1)
        for _ in range(NB - 1):
            mid = f32(0.5) * (lo + hi)
            if mid + hc * mid * mid * mid - rhs < 0: lo = mid
            else: hi = mid
        return f32(0.5) * (lo + hi)
    y = [y0]
    for s in range(1, S):
        rhs = y[-1] + h * a * np.sin(f32(s) * h); y.append(np.array([solve(r, h * cb) for r, cb in zip(rhs, c)], f32))
    y = np.array(y); t = (np.arange(S, dtype=f32) * h)[:, None]
    gap = np.zeros_like(y); gap[1:] = np.abs(y[1:] + h * c * y[1:] ** 3 - y[:-1] - h * a * np.sin(t[1:]))
    half = y[S // 2:]
    return dict(y=y, gap=gap, amplitude=half.max(0) - half.min(0), stiffest=np.int32(np.argmax(c)))


# 7 Lorenz by RK4 substeps per output step, differentiated in rho
def lorenz_np(state0, rho, NOUT=12, SUB=8, dt=0.005, sigma=10.0, beta=8 / 3):
    f = lambda y: np.array([sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]])
    out = [state0]
    for n in range(1, NOUT):
        y = out[-1]
        for _ in range(SUB):
            k1 = f(y); k2 = f(y + 0.5 * dt * k1); k3 = f(y + 0.5 * dt * k2); k4 = f(y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(y)
    return np.array(out)
@case("rk4_substeps_lorenz", sized=True, inputs=lambda: dict(state0=np.array([1.0, 1.5, 20.0]), rho=np.float64(28.0)),
      outputs=["out", "xz", "dx_drho", "radius"], tol=(1e-8, 1e-9))
def _(state0, rho):
    out = lorenz_np(state0, rho); e = 1e-6
    d = (lorenz_np(state0, rho + e)[-1, 0] - lorenz_np(state0, rho - e)[-1, 0]) / (2 * e)
    return dict(out=out, xz=out[-1, 0], dx_drho=d, radius=np.sqrt((out ** 2).sum(1)), __stdout__=["x at end"])


# 8 nonlinear reaction-diffusion, each step by lexicographic Gauss-Seidel sweeps
def gsn_inputs(L=16):
    x = np.linspace(0, 1, L); return dict(u0=np.where(x < 0.3, 1.0, 0.0) + 0.05 * np.sin(7 * x))
@case("gs_nonlinear_steps", sized=True, inputs=gsn_inputs, outputs=["u", "front", "total", "change"], tol=(1e-10, 1e-12))
def _(u0):
    L = len(u0); lam, dt, T, SW = 2.0, 0.05, 14, 5
    u = [u0]
    for t in range(1, T):
        old = u[-1]; z = old.copy()
        for k in range(SW):
            w = z.copy()
            for i in range(1, L - 1):
                w[i] = (old[i] + lam * (w[i - 1] + z[i + 1]) + dt * z[i] * (1 - z[i])) / (1 + 2 * lam)
            z = w
        u.append(z)
    u = np.array(u)
    return dict(u=u, front=(u > 0.5).sum(1).astype(np.int32), total=u.sum(1) / L,
                change=np.r_[0.0, np.sqrt(((u[1:] - u[:-1]) ** 2).max(1))])


# 9 BFGS with a fixed-length backtracking line search, the gradient by @f / @x
def rosen_np(x):
    return (10 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
def rosen_grad(x):
    g = np.zeros_like(x); r = x[1:] - x[:-1] ** 2
    g[:-1] += -40 * r * x[:-1] - 2 * (1 - x[:-1]); g[1:] += 20 * r
    return g
@case("bfgs_backtrack", sized=True, inputs=lambda: dict(x0=np.array([-1.2, 1.0, -0.5, 0.8])),
      outputs=["x", "H", "g", "fx", "accept", "chosen", "alpha", "final_value"], tol=(1e-8, 1e-10))
def _(x0):
    D = len(x0); IT, TR = 25, 12; x = [x0]; H = [0.1 * np.eye(D)]; G, F, A, C, AL = [], [], [], [], []
    for k in range(IT):
        g = rosen_grad(x[k]); d = -H[k] @ g; sl = g @ d; fx = rosen_np(x[k])
        acc = np.array([rosen_np(x[k] + 0.5 ** m * d) <= fx + 1e-4 * 0.5 ** m * sl for m in range(TR)])
        ch = int(np.argmax(acc)) if acc.any() else TR - 1; al = 0.5 ** ch
        xn = x[k] + al * d; s = al * d; y = rosen_grad(xn) - g; rho = 1 / (y @ s); I = np.eye(D)
        H.append((I - rho * np.outer(s, y)) @ H[k] @ (I - rho * np.outer(y, s)) + rho * np.outer(s, s))
        x.append(xn); G.append(g); F.append(fx); A.append(acc); C.append(ch); AL.append(al)
    return dict(x=np.array(x), H=np.array(H), g=np.array(G), fx=np.array(F), accept=np.array(A), chosen=np.int32(C),
                alpha=np.array(AL), final_value=rosen_np(x[-1]), __stdout__=["f after BFGS"])


# 10 Lanczos with full reorthogonalisation and Ritz values by Sturm bisection
def lz_inputs(N=9, seed=1010):
    rg = R(seed); a = rg.standard_normal((N, N)); return dict(A=(a + a.T) / 2 + np.diag(np.arange(N) * 0.7), q0=rg.standard_normal(N))
@case("lanczos_reorth", sized=True, inputs=lz_inputs, outputs=["Q", "alpha", "beta", "r", "lo0", "hi0", "ritz", "ortho"], tol=(1e-8, 1e-10))
def _(A, q0):
    N = len(q0); M, NB = 5, 50; Q = [q0 / np.sqrt(q0 @ q0)]; al, be, rs = [], [], []
    for k in range(M):
        w = A @ Q[k]; a = Q[k] @ w; v = w - a * Q[k]; Qa = np.array(Q[:k + 1])
        r = v - Qa.T @ (Qa @ v); b = np.sqrt(r @ r); al.append(a); be.append(b); rs.append(r)
        if k + 1 < M: Q.append(r / b)
    Q = np.array(Q); al = np.array(al); be = np.array(be)
    def count(x):
        d = al[0] - x; c = int(d < 0)
        for k in range(1, M):
            d = al[k] - x - be[k - 1] ** 2 / d; c += int(d < 0)
        return c
    rad = np.abs(A).sum(1) - np.abs(np.diag(A)); lo0 = (np.diag(A) - rad).min(); hi0 = (np.diag(A) + rad).max()
    ritz = []
    for e in range(M):
        lo, hi = lo0, hi0
        for _ in range(NB - 1):
            mid = 0.5 * (lo + hi)
            if count(mid) <= e: lo = mid
            else: hi = mid
        ritz.append(0.5 * (lo + hi))
    G = Q @ Q.T
    return dict(Q=Q, alpha=al, beta=be, r=np.array(rs), lo0=lo0, hi0=hi0, ritz=np.array(ritz), ortho=((G - np.diag(np.diag(G))) ** 2).max())


# 11 Bratu shooting: Newton on the slope over an inner Heun integration differentiated by @
def bratu_end(slope, lam, NT=40):
    h = 1 / NT; y, v = 0.0, slope
    for _ in range(NT):
        pv = v - h * lam * np.exp(y); py = y + h * v
        y, v = y + 0.5 * h * (v + pv), v - 0.5 * h * lam * (np.exp(y) + np.exp(py))
    return y
@case("shooting_rk_newton", sized=True, inputs=lambda: dict(lam=np.float64(1.5)), outputs=["s", "miss", "converged"], tol=(1e-8, 1e-10))
def _(lam):
    s = [0.5]; e = 1e-6
    for _ in range(6):
        F = bratu_end(s[-1], lam); dF = (bratu_end(s[-1] + e, lam) - bratu_end(s[-1] - e, lam)) / (2 * e); s.append(s[-1] - F / dF)
    miss = np.array([bratu_end(x, lam) for x in s])
    return dict(s=np.array(s), miss=miss, converged=np.bool_(miss[-1] ** 2 < 1e-20), __stdout__=["slope"])


# 12 semi-implicit ignition steps, each by Picard iterations over the whole field
def ign_inputs(H=9, W=12, seed=1012):
    rg = R(seed); u = (0.5 * rg.random((H, W))).astype(f32); u[3:6, 4:8] += f32(1.2)
    u[0] = u[-1] = 0; u[:, 0] = u[:, -1] = 0
    return dict(u0=u, q=f32(0.3))
@case("picard_ignition", sized=True, inputs=ign_inputs, outputs=["u", "burning", "peak", "hottest", "cells"], tol=(2e-5, 2e-6))
def _(u0, q):
    H, W = u0.shape; D, eps, dt, T, PI = f32(0.2), f32(0.1), f32(0.1), 10, 6
    u = [u0]
    for t in range(1, T):
        old = u[-1]; z = old
        for _ in range(PI - 1):
            n = np.zeros_like(z); n[1:-1, 1:-1] = z[:-2, 1:-1] + z[2:, 1:-1] + z[1:-1, :-2] + z[1:-1, 2:]
            new = (old + dt * (D * n + q * np.exp(z / (1 + eps * z)))) / (1 + 4 * dt * D)
            new[0] = new[-1] = 0; new[:, 0] = new[:, -1] = 0; z = new.astype(f32)
        u.append(z)
    u = np.array(u); peak = u.max((1, 2))
    hot = np.array([np.flatnonzero(u[t].ravel() == peak[t])[0] for t in range(T)], np.int32)
    return dict(u=u, burning=(u > 1).sum((1, 2)).astype(np.int32), peak=peak, hottest=hot, cells=np.int64(H * W),
                __stdout__=["burning at end"])


# 13 backward-Euler diffusion on a grid, each step by CG over whole fields (past the dispatch's stack)
def cgp_inputs(G=40, seed=1013):
    rg = R(seed); x = np.linspace(0, 1, G)
    u = np.exp(-30 * ((x[:, None] - 0.4) ** 2 + (x[None, :] - 0.6) ** 2)) + 0.1 * rg.random((G, G))
    u[0] = u[-1] = 0; u[:, 0] = u[:, -1] = 0
    return dict(u0=u, src=0.2 * rg.random((G, G)))
@case("cg_poisson_steps2d", sized=True, inputs=cgp_inputs, outputs=["u", "hot", "hot_count", "mass"], tol=(1e-9, 1e-11))
def _(u0, src):
    G = len(u0); dt, T, CGI = 0.5, 6, 10
    def op(v):
        w = v.copy(); w[1:-1, 1:-1] = (1 + 4 * dt) * v[1:-1, 1:-1] - dt * (v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
        return w
    u = [u0]
    for t in range(1, T):
        b = u[-1] + dt * src; b[0] = b[-1] = 0; b[:, 0] = b[:, -1] = 0
        x = b.copy(); r = b - op(b); p = r.copy()
        for _ in range(CGI):
            q = op(p); a = (r ** 2).sum() / (p * q).sum(); x = x + a * p; rn = r - a * q
            p = rn + (rn ** 2).sum() / (r ** 2).sum() * p; r = rn
        u.append(x)
    u = np.array(u); hot = u > 0.5
    return dict(u=u, hot=hot, hot_count=hot.sum((1, 2)).astype(np.int64), mass=u.sum((1, 2)))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
