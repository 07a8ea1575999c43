"""Hold-out programs, third round (simulation and language breadth): 2-D waves, heat and advection on
grids with boundary clauses, Burgers' equation with a flux limiter, shallow water, Crank-Nicolson with
a Thomas solve in each step, a stiff ODE by implicit Euler and Newton, adaptive Runge-Kutta-Fehlberg,
particle-in-cell deposits, a radix-2 FFT, polyphase resampling, an LMS filter, Savitzky-Golay
smoothing, cellular automata and a sandpile on a torus, and programs about the language itself
(modules of one's own, closures over arrays, generic functions, tuple and range patterns, f16/bf16,
u8 wraparound, build-time strings), each checked against NumPy computed here. Each case states its
tolerance (`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest
from ml_dtypes import bfloat16

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 2-D wave equation, leapfrog, clamped rim, derivative wrt the wave speed
def wave_np(u0, c, T=40):
    r = c * c * 0.05 ** 2 / 0.1 ** 2
    lap = lambda u: np.pad(u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1], 1)
    u1 = u0 + 0.5 * r * lap(u0); u1[0] = u1[-1] = 0; u1[:, 0] = u1[:, -1] = 0
    us = [u0, u1]
    for _ in range(2, T):
        n = 2 * us[-1] - us[-2] + r * lap(us[-1]); n[0] = n[-1] = 0; n[:, 0] = n[:, -1] = 0; us.append(n)
    return np.array(us)
def wave_inputs():
    y, x = np.mgrid[0:9, 0:11]
    return dict(u0=np.exp(-((y - 4.0) ** 2 + (x - 4.5) ** 2) / 3.0), c=np.float64(1.3))
@case("wave_membrane", inputs=wave_inputs, tol=(1e-9, 1e-11))
def _(u0, c):
    u = wave_np(u0, c); e = (u ** 2).sum((1, 2)); h = 1e-6
    d = (wave_np(u0, c + h)[-1, 4, 5] - wave_np(u0, c - h)[-1, 4, 5]) / (2 * h)
    return dict(u=u, energy=e, centre=u[-1, 4, 5], dcentre=d, peak=e.max())


# 2 Burgers with MUSCL + minmod + Rusanov flux, periodic
def burgers_np(u0, steps=25, nu=np.float32(0.4)):
    mm = lambda a, b: np.where(a * b <= 0, np.float32(0), np.where(np.abs(a) < np.abs(b), a, b))
    us = [u0]
    for _ in range(1, steps):
        u = us[-1]; um = np.roll(u, 1); umm = np.roll(u, 2); up = np.roll(u, -1)
        left = um + np.float32(0.5) * mm(um - umm, u - um)      # face k-1/2: reconstruction from the left
        right = u - np.float32(0.5) * mm(u - um, up - u)
        a = np.maximum(np.abs(left), np.abs(right))
        F = np.float32(0.5) * (np.float32(0.5) * left * left + np.float32(0.5) * right * right) - np.float32(0.5) * a * (right - left)
        us.append(u - nu * (np.roll(F, -1) - F))
    return np.array(us)
@case("burgers_minmod", inputs=lambda: dict(u0=(1.0 + 0.5 * np.sin(2 * np.pi * np.arange(32) / 32)).astype(np.float32)),
      tol=(1e-4, 1e-5), vk=True)
def _(u0):
    u = burgers_np(u0).astype(np.float64)
    return dict(u=u, mass=u.sum(1), final_u=u[-1], tv=np.abs(np.roll(u, -1, 1) - u).sum(1))


# 3 stiff van der Pol by implicit Euler with Newton
@case("stiff_newton", inputs=lambda: dict(y0=np.array([2.0, 0.0])), outputs=["x", "v", "last_residual"], tol=(1e-9, 1e-11))
def _(y0):
    mu, h = 30.0, 0.02; xs = [y0[0]]; vs = [y0[1]]
    res = lambda z0, z1, p0, p1: (z0 - p0 - h * z1, z1 - p1 - h * (mu * (1 - z0 * z0) * z1 - z0))
    for s in range(1, 60):
        p0, p1 = xs[-1], vs[-1]; z0, z1 = p0, p1
        for _ in range(4):
            g = res(z0, z1, p0, p1)
            J = np.array([[1.0, -h], [-h * (-2 * mu * z0 * z1 - 1), 1 - h * mu * (1 - z0 * z0)]])
            d = np.linalg.solve(J, g); z0, z1 = z0 - d[0], z1 - d[1]
        xs.append(z0); vs.append(z1)
    lr = max(abs(res(xs[s], vs[s], xs[s - 1], vs[s - 1])[1]) for s in range(1, 60))
    return dict(x=np.array(xs), v=np.array(vs), last_residual=lr)


# 4 radix-2 FFT as stages
@case("fft_radix2", inputs=lambda: dict(x=(np.sin(2 * np.pi * 3 * np.arange(16) / 16) + 0.5 * R(401).standard_normal(16)).astype(np.float32)),
      outputs=["rev", "power", "peak"], tol=(2e-4, 2e-4), vk=True)
def _(x):
    X = np.fft.fft(x.astype(np.float64)); p = np.abs(X) ** 2
    rev = np.int32([int(f"{i:04b}"[::-1], 2) for i in range(16)])
    return dict(rev=rev, power=p, peak=np.int32(np.argmax(p[:8])))


# 5 LMS adaptive filter
def lms_inputs():
    rg = R(402); x = rg.standard_normal(120)
    d = np.convolve(x, [0.8, -0.4, 0.25, 0.1])[:120] + 0.01 * rg.standard_normal(120)
    return dict(x=x, d=d, mu=np.float64(0.05))
@case("lms_filter", inputs=lms_inputs, outputs=["w", "e", "final_w", "mse_tail"], tol=(1e-9, 1e-11))
def _(x, d, mu):
    T = len(x); w = np.zeros(4); ws = [w]; es = []
    xp = np.concatenate([np.zeros(3), x])
    for t in range(1, T):
        u = xp[t + 3 - np.arange(4)]; e = d[t] - w @ u; es.append(e); w = w + mu * e * u; ws.append(w)
    es = np.array(es)
    return dict(w=np.array(ws), e=np.concatenate([[0.0], es]), final_w=w, mse_tail=np.mean(es[-20:] ** 2))


# 6 polyphase resampler 3/2
@case("polyphase_resample", inputs=lambda: dict(x=np.sin(0.3 * np.arange(20)).astype(np.float32)), tol=(1e-4, 1e-5))
def _(x):
    k = np.arange(12.0); v = (k - 5.5) / 3.0
    h = np.sinc(v) * (0.54 - 0.46 * np.cos(2 * np.pi * k / 11.0))
    gain = np.array([h[p::3].sum() for p in range(3)])
    N = len(x); y = np.zeros(N * 3 // 2)
    for n in range(len(y)):
        p, q = (2 * n) % 3, (2 * n) // 3
        y[n] = sum(h[p + 3 * m] * x[q - m] / gain[p] for m in range(4) if q - m >= 0)
    return dict(h=h, gain=gain, y=y, energy_in=np.sum(x.astype(np.float64) ** 2), energy_out=np.sum(y ** 2))


# 7 Brian's Brain on a torus, match on a tuple with a range
@case("brians_brain", inputs=lambda: dict(seed=R(403).integers(0, 3, (7, 9)).astype(np.int32)), vk=True)
def _(seed):
    cs = [seed]
    for _ in range(1, 10):
        c = cs[-1]; on = (c == 1).astype(np.int32)
        n = sum(np.roll(np.roll(on, di, 0), dj, 1) for di in (-1, 0, 1) for dj in (-1, 0, 1)) - on
        cs.append(np.where((c == 0) & (n == 2), 1, np.where(c == 1, 2, 0)).astype(np.int32))
    cs = np.array(cs)
    return dict(cell=cs, alive=(cs == 1).sum((1, 2)).astype(np.int32), dying=(cs == 2).sum((1, 2)).astype(np.int32))


# 8 u8 image arithmetic with wraparound
def u8_inputs():
    rg = R(404)
    return dict(img=rg.integers(0, 256, (6, 7)).astype(np.uint8), other=rg.integers(0, 256, (6, 7)).astype(np.uint8))
@case("u8_image_ops", inputs=u8_inputs)
def _(img, other):
    i16, o16 = img.astype(np.int32), other.astype(np.int32)
    box = sum(i16[di:di + 4, dj:dj + 5] for di in range(3) for dj in range(3)) // 9
    ad = np.abs(i16 - o16)
    return dict(wrapped=((i16 + 200) % 256).astype(np.uint8), saturated=np.minimum(i16 + 200, 255).astype(np.uint8),
                absdiff=ad.astype(np.uint8), blur=box.astype(np.uint8), bright=np.int32((ad > 100).sum()),
                negative=(255 - i16).astype(np.uint8))


# 9 generic functions, closures over arrays, tuples
def gen_inputs():
    rg = R(405)
    return dict(a=rg.standard_normal(6).astype(np.float32), b=rg.standard_normal(6), k=rg.integers(-6, 9, 6).astype(np.int32))
@case("generic_closures", inputs=gen_inputs, tol=(1e-6, 1e-7))
def _(a, b, k):
    f = np.float32
    sa = f(0.5) * a + f(0.25) * np.roll(a, -1) + f(0.25) * np.roll(a, 1)
    return dict(la=a + (f(1) - a) * f(0.25), lb=b + (-1 - b) * 0.75, ck=np.clip(k, -2, 5).astype(np.int32),
                cb=np.clip(b, -0.5, 0.5), sa=sa, lo=a.min(), hi=a.max(), span=a.max() - a.min(),
                tk=((k * 3 + 1) * 3 + 1).astype(np.int32), piped=np.clip(2 * b, -1, 1))


# 10 heat on a torus across modules of one's own (mod, use, alias, glob, super::)
def heat_mod_np(u0, T=30):
    us = [u0]
    for _ in range(1, T):
        u = us[-1]
        lap = np.roll(u, -1, 0) + np.roll(u, 1, 0) + np.roll(u, -1, 1) + np.roll(u, 1, 1) - 4 * u
        us.append(u + 0.15 * lap)
    return np.array(us)
@case("heat_modules", file="heat_mod/main", inputs=lambda: dict(u0=R(406).random((5, 6))), tol=(1e-10, 1e-12))
def _(u0):
    u = heat_mod_np(u0)
    lap = lambda u: np.roll(u, -1, 0) + np.roll(u, 1, 0) + np.roll(u, -1, 1) + np.roll(u, 1, 1) - 4 * u
    return dict(u=u, means=u.mean((1, 2)), rough=np.array([(lap(v) ** 2).sum() for v in u]), final_u=u[-1])


# 11 particle-in-cell deposit, field and push
def pic_inputs():
    rg = R(407); x = (np.arange(40) + 0.5) / 40 + 0.01 * np.sin(2 * np.pi * np.arange(40) / 40)
    return dict(xp=x % 1.0, vp=0.1 * rg.standard_normal(40))
@case("pic_deposit", inputs=pic_inputs, outputs=["cell", "charge", "field", "v_new", "x_new", "total"], tol=(1e-10, 1e-12))
def _(xp, vp):
    G, dx, dt, P = 16, 1 / 16, 0.05, len(xp)
    cell = np.floor(xp / dx).astype(np.int32); frac = xp / dx - cell
    rho = np.zeros(G); np.add.at(rho, cell, 1 - frac); np.add.at(rho, (cell + 1) % G, frac)
    charge = rho / P / dx - 1.0
    E = np.concatenate([[0.0], np.cumsum(charge[:-1] * dx)]); field = E - E.mean()
    Ep = (1 - frac) * field[cell] + frac * field[(cell + 1) % G]
    v = vp - Ep * dt; x = xp + v * dt
    return dict(cell=cell, charge=charge, field=field, v_new=v, x_new=x - np.floor(x), total=rho.sum())


# 12 bf16 upwind advection with an f16 copy, build-time strings and prints
@case("bf16_advection", inputs=lambda: dict(q0=np.exp(-((np.arange(24) - 8.0) ** 2) / 6.0).astype(bfloat16)), tol=(1e-5, 1e-6))
def _(q0):
    qs = [q0]; c = np.float32(0.4)
    for _ in range(1, 12):
        cur = qs[-1].astype(np.float32); left = np.roll(cur, 1)
        qs.append((cur - c * (cur - left)).astype(bfloat16))
    q = np.array(qs).astype(np.float32); mass = q.sum(1, dtype=np.float32)
    return dict(q=q, mass=mass, half=qs[-1].astype(np.float32).astype(np.float16),
                __stdout__=["scheme upwind with 12 steps", "final mass"])


# 13 Savitzky-Golay weights from a least-squares solve
@case("savgol_smooth", inputs=lambda: dict(y=np.sin(np.linspace(0, 3, 25)) + 0.1 * R(408).standard_normal(25)),
      outputs=["Lc", "c", "smooth", "weight_sum"], tol=(1e-9, 1e-11))
def _(y):
    m = np.arange(-3, 4.0); A = np.vander(m, 3, increasing=True)
    c = (A @ np.linalg.solve(A.T @ A, np.eye(3)[0]))
    sm = y.copy(); sm[3:-3] = np.convolve(y, c[::-1], "valid")
    return dict(Lc=np.linalg.cholesky(A.T @ A), c=c, smooth=sm, weight_sum=c.sum())


# 14 adaptive Runge-Kutta-Fehlberg 4(5)
@case("rkf45_adaptive", inputs=lambda: dict(y0=np.float64(1.0), tol=np.float64(1e-7)),
      outputs=["t", "y", "h", "ok", "accepted"], tol=(1e-9, 1e-12))
def _(y0, tol):
    f = lambda t, y: -2.0 * t * y + np.cos(3.0 * t)
    def rkf(t, y, h):
        k1 = f(t, y); k2 = f(t + h / 4, y + h * k1 / 4); k3 = f(t + 3 * h / 8, y + h * (3 * k1 + 9 * k2) / 32)
        k4 = f(t + 12 * h / 13, y + h * (1932 * k1 - 7200 * k2 + 7296 * k3) / 2197)
        k5 = f(t + h, y + h * (439 / 216 * k1 - 8 * k2 + 3680 / 513 * k3 - 845 / 4104 * k4))
        k6 = f(t + h / 2, y + h * (-8 / 27 * k1 + 2 * k2 - 3544 / 2565 * k3 + 1859 / 4104 * k4 - 11 / 40 * k5))
        y4 = y + h * (25 / 216 * k1 + 1408 / 2565 * k3 + 2197 / 4104 * k4 - k5 / 5)
        y5 = y + h * (16 / 135 * k1 + 6656 / 12825 * k3 + 28561 / 56430 * k4 - 9 / 50 * k5 + 2 / 55 * k6)
        return y5, abs(y5 - y4)
    t, y, h, ok = [0.0], [y0], [0.5], [False]
    for n in range(1, 40):
        y5, e = rkf(t[-1], y[-1], h[-1]); good = e <= tol; ok.append(good)
        y.append(y5 if good else y[-1]); t.append(t[-1] + h[-1] if good else t[-1])
        h.append(h[-1] * min(max(0.9 * (tol / max(e, 1e-14)) ** 0.2, 0.2), 5.0))
    return dict(t=np.array(t), y=np.array(y), h=np.array(h), ok=np.array(ok), accepted=np.int32(sum(ok)),
                __stdout__=[f"accepted {sum(ok)}"])


# 15 shallow water dam break, Rusanov flux, reflecting walls
@case("shallow_water", inputs=lambda: dict(h0=np.where(np.arange(20) < 8, 2.0, 1.0)), outputs=["h", "q", "dt", "volume", "elapsed"],
      tol=(1e-9, 1e-11))
def _(h0):
    g, dx = 9.81, 0.1
    flux = lambda h, q: (q, q * q / h + 0.5 * g * h * h)
    speed = lambda h, q: np.abs(q / h) + np.sqrt(g * h)
    hs, qs, dts = [h0], [np.zeros(20)], []
    for t in range(30):
        h, q = hs[-1], qs[-1]; dts.append(0.4 * dx / speed(h, q).max())
        if t == 29:
            break
        hl = np.concatenate([[h[0]], h]); ql = np.concatenate([[-q[0]], q])
        hr = np.concatenate([h, [h[-1]]]); qr = np.concatenate([q, [-q[-1]]])
        fl, fr = flux(hl, ql), flux(hr, qr); a = np.maximum(speed(hl, ql), speed(hr, qr))
        F0 = 0.5 * (fl[0] + fr[0]) - 0.5 * a * (hr - hl); F1 = 0.5 * (fl[1] + fr[1]) - 0.5 * a * (qr - ql)
        hs.append(h - dts[-1] / dx * (F0[1:] - F0[:-1])); qs.append(q - dts[-1] / dx * (F1[1:] - F1[:-1]))
    h = np.array(hs)
    return dict(h=h, q=np.array(qs), dt=np.array(dts), volume=h.sum(1) * dx, elapsed=sum(dts[:-1]))


# 16 build-time strings: arrays, lengths, membership, match on strings, prints
@case("station_labels", inputs=lambda: dict(readings=R(409).standard_normal((7, 4)).astype(np.float32) * 0.3),
      outputs=["lengths", "longest", "has_south", "offsets", "calibrated", "mean_of", "warm"], tol=(1e-6, 1e-6))
def _(readings):
    off = np.float32([0.5, 0.0, -0.5, 0.0]); cal = readings + off; mean = cal.sum(0, dtype=np.float32) / np.float32(7)
    return dict(lengths=np.int32([5, 4, 5, 4]), longest=np.int32(5), has_south=np.bool_(True), offsets=off,
                calibrated=cal, mean_of=mean, warm=(mean > 0).astype(np.int32),
                __stdout__=["4 stations, longest name 5", "pair east-west"])


# 17 f16 heat on an insulated plate, edges copied at the same step
def f16_plate_inputs():
    y, x = np.mgrid[0:6, 0:7]
    return dict(u0=(np.exp(-((y - 2.0) ** 2 + (x - 4.0) ** 2) / 2.0) * 3.0).astype(np.float16))
@case("f16_heat_plate", inputs=f16_plate_inputs, outputs=["u", "mean", "hottest"], tol=(2e-3, 2e-3))
def _(u0):
    h = np.float16; r = h(0.2); us = [u0]
    for _ in range(1, 16):
        p = us[-1]; n = p.copy()
        c = p[1:-1, 1:-1]
        n[1:-1, 1:-1] = c + r * ((((p[:-2, 1:-1] + p[2:, 1:-1]) + p[1:-1, :-2]) + p[1:-1, 2:]) - h(4) * c)
        n[1:-1, 0] = n[1:-1, 1]; n[1:-1, -1] = n[1:-1, -2]; n[0] = n[1]; n[-1] = n[-2]
        us.append(n)
    u = np.array(us)
    return dict(u=u, mean=u.astype(np.float32).sum((1, 2)) / np.float32(42), hottest=np.int32(np.argmax(u[-1].astype(np.float32))))


# 18 Crank-Nicolson with a Thomas solve inside each step, derivative wrt the diffusivity
def cn_np(u0, kappa, T=20):
    M = len(u0); r = kappa * 0.01 / 0.01
    A = np.diag(np.full(M, 1 + r)) + np.diag(np.full(M - 1, -r / 2), 1) + np.diag(np.full(M - 1, -r / 2), -1)
    B = np.diag(np.full(M, 1 - r)) + np.diag(np.full(M - 1, r / 2), 1) + np.diag(np.full(M - 1, r / 2), -1)
    us = [u0]
    for _ in range(1, T):
        us.append(np.linalg.solve(A, B @ us[-1]))
    return np.array(us)
@case("crank_nicolson", inputs=lambda: dict(u0=np.sin(np.pi * np.arange(1, 10) / 10) + 0.2 * R(410).random(9), kappa=np.float64(0.8)),
      tol=(1e-9, 1e-11))
def _(u0, kappa):
    u = cn_np(u0, kappa); hh = 1e-6
    return dict(u=u, mid=u[-1, 4], dmid=(cn_np(u0, kappa + hh)[-1, 4] - cn_np(u0, kappa - hh)[-1, 4]) / (2 * hh))


# 19 Abelian sandpile on a torus
@case("sandpile_torus", inputs=lambda: dict(grains=R(411).integers(0, 7, (5, 6)).astype(np.int32)))
def _(grains):
    ps = [grains]
    for _ in range(1, 24):
        p = ps[-1]; top = (p >= 4).astype(np.int32)
        ps.append(p - 4 * top + np.roll(top, -1, 0) + np.roll(top, 1, 0) + np.roll(top, -1, 1) + np.roll(top, 1, 1))
    ps = np.array(ps, np.int32); last = ps[-1]
    kind = np.select([last == 0, (last >= 1) & (last <= 2), last == 3], [0, 1, 3], 9).astype(np.int32)
    return dict(pile=ps, unstable=(ps >= 4).sum((1, 2)).astype(np.int32), grains_total=ps.sum((1, 2)).astype(np.int32),
                kind=kind, both=np.int32(((ps[-2] >= 4) & (last == 3)).sum()))


# 20 2-D Lax-Wendroff advection on a torus, derivative wrt the x velocity
def lw_np(c0, a, b=0.3, T=25, nu=0.4):
    cs = [c0]; cx, cy = a * nu, b * nu
    for _ in range(1, T):
        g = cs[-1]; xp = np.roll(g, -1, 1); xm = np.roll(g, 1, 1); yp = np.roll(g, -1, 0); ym = np.roll(g, 1, 0)
        cs.append(g - 0.5 * cx * (xp - xm) - 0.5 * cy * (yp - ym) + 0.5 * cx * cx * (xp - 2 * g + xm)
                  + 0.5 * cy * cy * (yp - 2 * g + ym)
                  + 0.25 * cx * cy * (np.roll(yp, -1, 1) - np.roll(yp, 1, 1) - np.roll(ym, -1, 1) + np.roll(ym, 1, 1)))
    return np.array(cs)
def lw_cx(c0, a):
    c = lw_np(c0, a)[-1]
    return (c * np.arange(c.shape[1])).sum() / c.sum()
def lw_inputs():
    y, x = np.mgrid[0:8, 0:12]
    return dict(c0=np.exp(-((y - 3.5) ** 2 + (x - 4.0) ** 2) / 2.0), a=np.float64(0.5))
@case("advect2d_lw", inputs=lw_inputs, outputs=["c", "mass", "cx_last", "dcx"], tol=(1e-8, 1e-10))
def _(c0, a):
    c = lw_np(c0, a)
    return dict(c=c, mass=c.sum((1, 2)), cx_last=lw_cx(c0, a), dcx=(lw_cx(c0, a + 1e-6) - lw_cx(c0, a - 1e-6)) / 2e-6)


# 21 random walkers on a torus from a u32 LCG, a filtered comprehension
@case("lcg_walkers", inputs=lambda: dict(seed=R(412).integers(0, 2 ** 32, 6, dtype=np.uint64).astype(np.uint32)),
      outputs=["state", "x", "y", "visits", "left", "n_left", "busiest"])
def _(seed):
    P = len(seed); st = [seed.astype(np.uint64)]
    for _ in range(1, 30):
        st.append((st[-1] * 1664525 + 1013904223) % 2 ** 32)
    st = np.array(st)
    moves = {0: (1, 0), 1: (-1, 0), 2: (0, 1), 3: (0, -1)}
    xs = [np.arange(P) * 3 % 8]; ys = [np.arange(P) * 5 % 8]
    for s in range(1, 30):
        d = [moves[int(v)] for v in st[s] // 2 ** 30]
        xs.append((xs[-1] + [m[0] for m in d] + 8) % 8); ys.append((ys[-1] + [m[1] for m in d] + 8) % 8)
    x, y = np.array(xs, np.int32), np.array(ys, np.int32)
    visits = np.zeros((8, 8), np.int32); np.add.at(visits, (y.ravel(), x.ravel()), 1)
    left = np.int32([p for p in range(P) if x[-1, p] < 4])
    return dict(state=st.astype(np.uint32), x=x, y=y, visits=visits, left=left, n_left=np.int32(len(left)),
                busiest=np.int32(visits.max()))


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
