"""Hold-out programs, tenth round (numerical methods whose steps run inner loops or compute whole
tensors): backward Euler with Newton iterations solved by std's `solve`, Crank-Nicolson with a
Thomas solve per step, each checked against NumPy computed here. Every case is `sized` (it also
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


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
