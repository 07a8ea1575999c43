"""Hold-out programs, eighth round (scientific simulation, mostly on named dims): a D2Q9 lattice
Boltzmann flow with periodic streaming, Gray-Scott, Cahn-Hilliard and Fisher-KPP (with the adjoint
gradient of a misfit in its parameters) on stencils, Lorenz-96 by RK4 with dE/dF, Kuramoto
oscillators, a Hodgkin-Huxley neuron, Lennard-Jones molecular dynamics by velocity Verlet, SEIR on
a contact network through index arrays, Crank-Nicolson for the Schrodinger equation with complex
values as tuples, Godunov's scheme for traffic and a Potts model with a hashed u32 stream, each
checked against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers
and bools compare exactly); `vk` cases run on vulkan-spirv too."""
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
@case("lorenz96_rk4", sized=True, inputs=l96_inputs, tol=(1e-9, 1e-10))
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

# 6 Cahn-Hilliard with an explicit periodic stencil
def lap2(g):
    return np.roll(g, -1, 0) + np.roll(g, 1, 0) + np.roll(g, -1, 1) + np.roll(g, 1, 1) - 4 * g
@case("cahn_hilliard", inputs=lambda: dict(c0=0.1 * R(806).standard_normal((10, 12))),
      outputs=["mean_c", "free", "n_pos", "phase", "c_end"], tol=(1e-9, 1e-11))
def _(c0):
    g, dt = 0.5, 0.01; cs = [c0]
    for _ in range(1, 50):
        c = cs[-1]; cs.append(c + dt * lap2(c ** 3 - c - g * lap2(c)))
    cs = np.array(cs); H, W = c0.shape
    free = (0.25 * (cs ** 2 - 1) ** 2 + 0.5 * g * ((np.roll(cs, -1, 1) - cs) ** 2 + (np.roll(cs, -1, 2) - cs) ** 2)).sum((1, 2))
    npos = (cs > 0).sum((1, 2))
    return dict(mean_c=cs.mean((1, 2)), free=free, n_pos=npos.astype(np.int32), phase=npos / (H * W), c_end=cs[-1])

# 7 Lennard-Jones MD in a periodic box, velocity Verlet
def lj_inputs():
    rg = R(807); g = np.array([(i, j) for i in range(4) for j in range(4)], float) * 1.5 + 0.75
    return dict(x0=g + 0.1 * rg.standard_normal(g.shape), v0=0.5 * rg.standard_normal(g.shape), box_len=np.float64(6.0))
@case("lj_md", inputs=lj_inputs, outputs=["x", "v", "kinetic", "pot", "total", "temperature", "drift"], tol=(1e-8, 1e-10))
def _(x0, v0, box_len):
    dt, rc, S = 0.004, 2.5, 40
    lj = lambda r2: 4 * (r2 ** -6 - r2 ** -3)
    def pairs(x):
        d = x[:, None, :] - x[None, :, :]; d -= box_len * np.round(d / box_len)
        r2 = (d ** 2).sum(-1); np.fill_diagonal(r2, np.inf); return d, r2
    def forces(x):
        d, r2 = pairs(x); w = np.where(r2 < rc * rc, 24 * (2 * r2 ** -6 - r2 ** -3) / r2, 0.0)
        return (w[:, :, None] * d).sum(1)
    def potential(x):
        d, r2 = pairs(x); iu = np.triu_indices(len(x), 1); r = r2[iu]
        return np.where(r < rc * rc, lj(r) - lj(rc * rc), 0.0).sum()
    xs, vs = [x0], [v0]; a = forces(x0)
    for _ in range(1, S):
        x = xs[-1] + dt * vs[-1] + 0.5 * dt * dt * a; an = forces(x)
        vs.append(vs[-1] + 0.5 * dt * (a + an)); xs.append(x); a = an
    xs, vs = np.array(xs), np.array(vs); kin = 0.5 * (vs ** 2).sum((1, 2)); pot = np.array([potential(x) for x in xs])
    tot = kin + pot
    return dict(x=xs, v=vs, kinetic=kin, pot=pot, total=tot, temperature=kin / (len(x0) - 1), drift=tot.max() - tot.min())

# 8 SEIR on a contact network through edge index arrays; d(attack)/d(beta)
def seir_inputs():
    rg = R(808); V = 14
    und = {(min(a, b), max(a, b)) for a, b in rg.integers(0, V, (30, 2)) if a != b} | {(k, k + 1) for k in range(V - 1)}
    und = sorted(und); src = np.array([a for a, b in und] + [b for a, b in und], np.int32)
    dst = np.array([b for a, b in und] + [a for a, b in und], np.int32)
    i0 = np.zeros(V, np.float32); i0[[0, 9]] = 0.05
    return dict(src=src, dst=dst, weight=rg.uniform(0.2, 1.0, len(src)).astype(np.float32), i0=i0, beta=np.float32(0.3))
def seir_run(src, dst, weight, i0, beta, dt=np.float64):
    V = len(i0); S, E, I, Rc = 1 - i0.astype(dt), np.zeros(V, dt), i0.astype(dt), np.zeros(V, dt); out = [(S, E, I, Rc)]
    for _ in range(1, 60):
        p = np.zeros(V, dt); np.add.at(p, dst, weight.astype(dt) * I[src]); ni = beta * S * p
        S, E, I, Rc = S - ni, E + ni - 0.25 * E, I + 0.25 * E - 0.1 * I, Rc + 0.1 * I; out.append((S, E, I, Rc))
    return out
@case("seir_network", inputs=seir_inputs, outputs=["totals", "peak_day", "peak", "attack", "d_attack", "I"], tol=(2e-4, 2e-5))
def _(src, dst, weight, i0, beta):
    out = seir_run(src, dst, weight, i0, np.float64(beta)); tot = np.array([[x.sum() for x in st] for st in out])
    att = lambda b: 1 - seir_run(src, dst, weight, i0, b)[-1][0].mean(); h = 1e-6
    pd = int(np.argmax(tot[:, 2]))
    return dict(totals=tot, peak_day=np.int32(pd), peak=tot[pd, 2], attack=att(float(beta)),
                d_attack=(att(float(beta) + h) - att(float(beta) - h)) / (2 * h), I=np.array([st[2] for st in out]))

# 9 Crank-Nicolson for the 1-d Schrodinger equation with complex values as tuples
def schr_inputs():
    M = 40; x = np.arange(M) * 0.1; psi = np.exp(-((x - 1.5) / 0.4) ** 2 + 5j * x); psi /= np.sqrt(0.1 * (abs(psi) ** 2).sum())
    return dict(re0=psi.real.copy(), im0=psi.imag.copy(), pot=np.where(x > 2.6, 8.0, 0.0))
@case("schrodinger_cn", inputs=schr_inputs, outputs=["re", "im", "norm", "mean_x"], tol=(1e-9, 1e-11))
def _(re0, im0, pot):
    M, dx, dt = len(re0), 0.1, 0.005
    H = np.diag(1 / dx ** 2 + pot) - np.diag(np.full(M - 1, 0.5 / dx ** 2), 1) - np.diag(np.full(M - 1, 0.5 / dx ** 2), -1)
    A = np.eye(M) + 0.5j * dt * H; B = np.eye(M) - 0.5j * dt * H; ps = [re0 + 1j * im0]
    for _ in range(1, 30):
        ps.append(np.linalg.solve(A, B @ ps[-1]))
    ps = np.array(ps); dens = abs(ps) ** 2; nrm = dx * dens.sum(1)
    return dict(re=ps.real, im=ps.imag, norm=nrm, mean_x=dx * (dens * np.arange(M) * dx).sum(1) / nrm)

# 10 Three-state Potts model, checkerboard Metropolis with a hashed u32 stream
def mix32(x):
    M = 0xFFFFFFFF; a = ((x + (x >> 16)) * 2246822507) & M; b = ((a + (a >> 13)) * 3266489909) & M
    return (b + (b >> 16)) & M
@case("potts_hash", inputs=lambda: dict(init=R(810).integers(0, 3, (8, 8)).astype(np.int32), beta=np.float32(0.9),
                                        seed=np.uint32(4242)), outputs=["odd", "counts", "energy", "majority"], vk=True)
def _(init, beta, seed):
    L, S, f = init.shape[0], 24, np.float32
    draw = lambda c: mix32((c * 2654435769 + int(seed)) & 0xFFFFFFFF)
    unlike = lambda g, i, j, q: sum(int(g[a % L, b % L] != q) for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)))
    def update(g, s, half):
        out = g.copy()
        for i in range(L):
            for j in range(L):
                if (i + j) % 2 != half:
                    continue
                c = ((((s * 2 + half) * L + i) * L + j) * 2) & 0xFFFFFFFF; cur = g[i, j]; prop = (cur + 1 + draw(c) % 2) % 3
                dE = unlike(g, i, j, prop) - unlike(g, i, j, cur); u = f(draw(c + 1) >> 8) / f(16777216)
                if dE <= 0 or u < np.exp(-beta * f(dE)):
                    out[i, j] = prop
        return out
    odd = [init]
    for s in range(1, S):
        odd.append(update(update(odd[-1], s, 0), s, 1))
    odd = np.array(odd); counts = np.stack([(odd == q).sum((1, 2)) for q in range(3)], 1)
    en = (odd != np.roll(odd, -1, 1)).sum((1, 2)) + (odd != np.roll(odd, -1, 2)).sum((1, 2))
    return dict(odd=odd, counts=counts.astype(np.int32), energy=en.astype(np.int32), majority=np.int32(np.argmax(counts[-1])))

# 11 LWR traffic on a ring, Godunov flux by a match on the Riemann case
def lwr_inputs():
    x = np.arange(48) / 48
    return dict(rho0=0.15 + 0.7 * np.exp(-((x - 0.3) / 0.08) ** 2) + 0.05 * R(811).random(48))
@case("godunov_lwr", inputs=lwr_inputs, outputs=["rho", "flux", "cars", "densest", "mean_speed", "rho_end"], tol=(1e-10, 1e-12))
def _(rho0):
    q = lambda r: r * (1 - r)
    def god(l, r):
        return np.where((l <= 0.5) & (r <= 0.5), q(l), np.where((l > 0.5) & (r > 0.5), q(r),
                        np.where(l <= 0.5, np.minimum(q(l), q(r)), 0.25)))
    rs = [rho0]; fl = []
    for t in range(50):
        F = god(rs[-1], np.roll(rs[-1], -1)); fl.append(F)
        if t < 49:
            rs.append(rs[-1] - 0.4 * (F - np.roll(F, 1)))
    rs = np.array(rs); cars = rs.sum(1)
    return dict(rho=rs, flux=np.array(fl), cars=cars, densest=np.argmax(rs, 1).astype(np.int32),
                mean_speed=q(rs).sum(1) / cars, rho_end=rs[-1])

# 12 Fisher-KPP front with mirrored ends; the misfit's gradient in r and D against central differences
def fk_run(u0, r, D):
    us = [u0]
    for _ in range(1, 60):
        u = us[-1]; p = np.concatenate([[u[1]], u, [u[-2]]])
        us.append(u + 0.05 * (D * (p[:-2] - 2 * u + p[2:]) + r * u * (1 - u)))
    return np.array(us)
def fk_inputs():
    x = np.arange(30.0)
    return dict(u0=1 / (1 + np.exp(x - 5)), obs=1 / (1 + np.exp((x - 12) / 1.5)), r=np.float64(0.8), D=np.float64(0.6))
@case("fisher_kpp_adjoint", inputs=fk_inputs, outputs=["u", "front", "misfit", "g_r", "g_D"], tol=(1e-6, 1e-9))
def _(u0, obs, r, D):
    us = fk_run(u0, r, D); mis = lambda r, D: 0.5 * ((fk_run(u0, r, D)[-1] - obs) ** 2).sum(); h = 1e-6
    front = np.array([np.nonzero(u < 0.5)[0].min() if (u < 0.5).any() else len(u) for u in us], np.int32)
    return dict(u=us, front=front, misfit=mis(r, D), g_r=(mis(r + h, D) - mis(r - h, D)) / (2 * h),
                g_D=(mis(r, D + h) - mis(r, D - h)) / (2 * h))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
