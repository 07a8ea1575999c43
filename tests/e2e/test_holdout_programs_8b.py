"""Hold-out programs, eighth round (scientific simulation): a D2Q9 lattice Boltzmann flow with
periodic streaming, Gray-Scott reaction-diffusion on a named grid, ... each checked against NumPy
computed here. Each case states its tolerance (`tol`, rtol and atol; integers and bools compare
exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 D2Q9 lattice Boltzmann, BGK collision with a body force, periodic streaming
CX = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1]); CY = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1])
WQ = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
def lbm_inputs():
    rg = R(801); H, W = 6, 8
    return dict(rho0=1.0 + 0.05 * rg.standard_normal((H, W)), ux0=0.02 * rg.standard_normal((H, W)),
                uy0=0.02 * rg.standard_normal((H, W)), tau=np.float64(0.8))
@case("lbm_d2q9", inputs=lbm_inputs, tol=(1e-10, 1e-12))
def _(rho0, ux0, uy0, tau):
    T, g = 24, 1e-4
    def feq(rho, ux, uy):
        cu = 3 * (CX[:, None, None] * ux + CY[:, None, None] * uy)
        return WQ[:, None, None] * rho * (1 + cu + 0.5 * cu * cu - 1.5 * (ux * ux + uy * uy))
    f = feq(rho0, ux0, uy0); mass, mom, en = [], [], []
    for t in range(T):
        rho = f.sum(0); ux = np.tensordot(CX, f, 1) / rho; uy = np.tensordot(CY, f, 1) / rho
        mass.append(rho.sum()); mom.append((rho * ux).sum()); en.append(0.5 * (rho * (ux ** 2 + uy ** 2)).sum())
        if t == T - 1:
            break
        post = f - (f - feq(rho, ux + tau * g, uy)) / tau
        f = np.stack([np.roll(post[q], (CY[q], CX[q]), (0, 1)) for q in range(9)])
    return dict(mass=np.array(mass), momentum=np.array(mom), energy=np.array(en), rho_end=rho, ux_end=ux)

# 2 Gray-Scott reaction-diffusion (f32)
def gs_inputs():
    rg = R(802); H, W = 12, 10
    u = np.ones((H, W), np.float32); v = np.zeros((H, W), np.float32)
    u[4:8, 3:7] = 0.5; v[4:8, 3:7] = 0.25
    return dict(u0=(u + 0.02 * rg.random((H, W))).astype(np.float32), v0=(v + 0.02 * rg.random((H, W))).astype(np.float32))
@case("gray_scott", inputs=gs_inputs, outputs=["v_mean", "u_end", "peak", "peak_row", "peak_col"], tol=(1e-4, 1e-5), vk=True)
def _(u0, v0):
    f = np.float32; Du, Dv, F, k = f(0.16), f(0.08), f(0.035), f(0.065)
    lap = lambda g: np.roll(g, -1, 0) + np.roll(g, 1, 0) + np.roll(g, -1, 1) + np.roll(g, 1, 1) - f(4) * g
    u, v = u0, v0; means = [v.mean(dtype=f)]
    for _ in range(1, 40):
        u, v = u + Du * lap(u) - u * v * v + F * (f(1) - u), v + Dv * lap(v) + u * v * v - (F + k) * v
        means.append(v.mean(dtype=f))
    p = int(np.argmax(v)); W = v.shape[1]
    return dict(v_mean=np.array(means), u_end=u, peak=np.int32(p), peak_row=np.int32(p // W), peak_col=np.int32(p % W))

# 3 Lorenz-96 by RK4 with stages as functions; dE/dF by a complex step through the trajectory
def l96_inputs():
    return dict(x0=8.0 + R(803).standard_normal(10), F=np.float64(8.0))
@case("lorenz96_rk4", inputs=l96_inputs, tol=(1e-9, 1e-10))
def _(x0, F):
    def run(F):
        rhs = lambda x: (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F
        xs = [x0 + 0j * F]
        for _ in range(1, 60):
            x = xs[-1]; k1 = rhs(x); k2 = rhs(x + 0.005 * k1); k3 = rhs(x + 0.005 * k2); k4 = rhs(x + 0.01 * k3)
            xs.append(x + 0.01 / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
        return np.array(xs)
    xs = run(F + 1e-30j); en = 0.5 * (xs.real ** 2).sum(1); big = np.nonzero(en > 2 * en[0])[0]
    return dict(x=xs.real, energy=en, final_energy=en[-1], dE_dF=(0.5 * (xs[-1] ** 2).sum()).imag / 1e-30,
                first_big=np.int32(big[0] if len(big) else 60))

# 4 Kuramoto oscillators, Heun steps, order parameter and drift labels
def kur_inputs():
    rg = R(804)
    return dict(w=rg.standard_normal(12) * 0.5, theta0=rg.uniform(-np.pi, np.pi, 12), K=np.float64(1.2))
@case("kuramoto", inputs=kur_inputs, tol=(1e-9, 1e-11))
def _(w, theta0, K):
    N, dt = len(w), 0.05
    c = lambda th: w + K / N * np.sin(th[None, :] - th[:, None]).sum(1)
    th = [theta0]
    for _ in range(1, 80):
        p = th[-1]; th.append(p + 0.5 * dt * (c(p) + c(p + dt * c(p))))
    th = np.array(th); re = np.cos(th).mean(1); im = np.sin(th).mean(1)
    drift = (th[-1] - theta0) / (79 * dt); e = drift - drift.mean()
    label = np.where(e > 0.05, 1, np.where(e < -0.05, -1, 0)).astype(np.int32)
    return dict(th=th, r=np.hypot(re, im), psi=np.arctan2(im[-1], re[-1]), drift=drift, label=label,
                locked=np.int32((label == 0).sum()))

# 5 Hodgkin-Huxley neuron, forward Euler, spikes from upward crossings
def hh_inputs():
    t = np.arange(1500) * 0.02
    return dict(I_ext=np.where((t > 2) & (t < 25), 10.0, 0.0) + np.where(t > 28, 4.0, 0.0))
@case("hodgkin_huxley", inputs=hh_inputs, tol=(1e-8, 1e-9))
def _(I_ext):
    T, dt = len(I_ext), 0.02
    vt = lambda x, y: y * (1 - x / y / 2) if abs(x / y) < 1e-6 else x / (np.exp(x / y) - 1)
    rm = lambda v: (0.1 * vt(-(v + 40), 10), 4 * np.exp(-(v + 65) / 18))
    rh = lambda v: (0.07 * np.exp(-(v + 65) / 20), 1 / (1 + np.exp(-(v + 35) / 10)))
    rn = lambda v: (0.01 * vt(-(v + 55), 10), 0.125 * np.exp(-(v + 65) / 80))
    st = lambda ab: ab[0] / (ab[0] + ab[1]); gate = lambda g, ab: g + dt * (ab[0] * (1 - g) - ab[1] * g)
    V, m, h, n = [-65.0], [st(rm(-65.0))], [st(rh(-65.0))], [st(rn(-65.0))]
    for t in range(1, T):
        v = V[-1]; ina = 120 * m[-1] ** 3 * h[-1] * (v - 50); ik = 36 * n[-1] ** 4 * (v + 77); il = 0.3 * (v + 54.387)
        V.append(v + dt * (I_ext[t - 1] - ina - ik - il))
        m.append(gate(m[-1], rm(v))); h.append(gate(h[-1], rh(v))); n.append(gate(n[-1], rn(v)))
    V = np.array(V); up = (V[:-1] < 0) & (V[1:] >= 0); times = np.nonzero(up)[0] + 1
    return dict(V=V, m=np.array(m), h=np.array(h), n=np.array(n), spikes=np.int32(len(times)),
                spike_times=times.astype(np.int32), v_peak=V.max(), __stdout__=[f"spikes: {len(times)}"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
