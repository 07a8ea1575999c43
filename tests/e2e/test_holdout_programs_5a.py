"""Hold-out programs, fifth round (control, robotics, geometry, probabilistic inference): LQR by a
backward Riccati recurrence, a PID loop on a plant, an extended Kalman filter with Jacobians by @,
unscented sigma points, a particle filter with systematic resampling, shooting MPC for a unicycle,
quaternion attitude, Rodrigues rotations, arm kinematics with inverse kinematics by gradient
descent, polygon areas and ray casting, an occupancy grid, HMM smoothing with a Baum-Welch update,
Gibbs sampling, Metropolis-Hastings, belief propagation and variational inference, each checked
against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers and bools
compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 finite-horizon LQR, backward Riccati, forward closed loop, d cost / d r
def lqr_np(A, B, Qc, r, x0, N=30):
    P = [Qc]; Ks = [None]
    for s in range(1, N + 1):
        Pp = P[-1]; g = A.T @ Pp @ B; h = r + B @ Pp @ B
        P.append(Qc + A.T @ Pp @ A - np.outer(g, g) / h); Ks.append(g / h)
    x = [x0]; u = []
    for t in range(N):
        u.append(-Ks[N - t] @ x[-1]); x.append(A @ x[-1] + B * u[-1])
    x = np.array(x); u = np.array(u)
    cost = sum(xt @ Qc @ xt for xt in x[:N]) + r * (u ** 2).sum() + x[N] @ Qc @ x[N]
    return np.array(P), np.array([np.zeros_like(B)] + Ks[1:]), x, u, cost
def lqr_inputs():
    A = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.1], [0.05, -0.1, 0.98]])
    return dict(A=A, B=np.array([0.0, 0.02, 0.1]), Qc=np.diag([1.0, 0.5, 0.1]), r=np.float64(0.3),
                x0=np.array([1.0, -0.5, 0.2]))
@case("lqr_riccati", inputs=lqr_inputs, outputs=["P", "K", "x", "u", "cost", "predicted", "asym", "dcost_dr"], tol=(1e-8, 1e-10))
def _(A, B, Qc, r, x0):
    P, K, x, u, cost = lqr_np(A, B, Qc, r, x0); e = 1e-6
    d = (lqr_np(A, B, Qc, r + e, x0)[4] - lqr_np(A, B, Qc, r - e, x0)[4]) / (2 * e)
    return dict(P=P, K=K, x=x, u=u, cost=cost, predicted=x0 @ P[-1] @ x0, asym=np.abs(P[-1] - P[-1].T).max(), dcost_dr=d)


# 2 PID on a mass-spring-damper, anti-windup, saturation, d ISE / d gains
def pid_np(sp, k, dt=0.05):
    T = len(sp); pos = [0.0]; vel = [0.0]; integ = [0.0]; deriv = [0.0]; err = [sp[0]]; u = []
    ctl = lambda e, i, d: np.clip(k[0] * e + k[1] * i + k[2] * d, -8.0, 8.0)
    u.append(ctl(err[0], integ[0], deriv[0]))
    for t in range(1, T):
        pos.append(pos[-1] + dt * vel[-1]); vel.append(vel[-1] + dt * (u[-1] - 0.6 * vel[-1] - 2.0 * pos[-2]))
        err.append(sp[t] - pos[t]); integ.append(np.clip(integ[-1] + err[t] * dt, -0.5, 0.5))
        deriv.append((err[t] - err[t - 1]) / dt); u.append(ctl(err[t], integ[t], deriv[t]))
    return [np.array(a) for a in (pos, vel, err, integ, deriv, u)]
def pid_inputs():
    sp = np.where(np.arange(200) < 10, 0.0, 1.0); sp[120:] = 0.4
    return dict(setpoint=sp, gains=np.array([8.0, 3.0, 3.0]))
@case("pid_plant", inputs=pid_inputs, tol=(1e-8, 1e-10))
def _(setpoint, gains):
    pos, vel, err, integ, deriv, u = pid_np(setpoint, gains); T = len(setpoint)
    ise = lambda k: (pid_np(setpoint, k)[2] ** 2).sum() * 0.05
    d = np.array([(ise(gains + e) - ise(gains - e)) / 2e-6 for e in np.eye(3) * 1e-6])
    settled = min([t for t in range(T) if (np.abs(err[t:]) < 0.05).all()] + [T])
    return dict(pos=pos, vel=vel, err=err, integ=integ, deriv=deriv, u=u, ise=ise(gains),
                overshoot=(pos - setpoint).max(), settled=np.int32(settled),
                saturated=np.int32((np.abs(u) >= 8.0).sum()), dise=d, __stdout__=["ISE"])


# 3 extended Kalman filter, pendulum observed through sin(theta)
def ekf_inputs():
    rg = R(501); x = np.array([0.9, 0.0]); ys = []
    for _ in range(40):
        x = np.array([x[0] + 0.1 * x[1], x[1] - 0.1 * (9.81 * np.sin(x[0]) + 0.3 * x[1])])
        ys.append(np.sin(x[0]) + 0.05 * rg.standard_normal())
    return dict(y=np.array(ys), m0=np.array([0.5, 0.2]), q=np.float64(1e-3), rn=np.float64(0.0025))
@case("ekf_pendulum", inputs=ekf_inputs, tol=(1e-8, 1e-10))
def _(y, m0, q, rn):
    dt = 0.1; m = [m0]; P = [0.5 * np.eye(2)]; nu = []
    for t in range(1, len(y)):
        a = m[-1]; fx = np.array([a[0] + dt * a[1], a[1] - dt * (9.81 * np.sin(a[0]) + 0.3 * a[1])])
        F = np.array([[1, dt], [-dt * 9.81 * np.cos(a[0]), 1 - 0.3 * dt]])
        Pp = F @ P[-1] @ F.T + q * np.eye(2); H = np.array([np.cos(fx[0]), 0.0])
        S = H @ Pp @ H + rn; K = Pp @ H / S; v = y[t] - np.sin(fx[0])
        m.append(fx + K * v); P.append(Pp - np.outer(K, K) * S); nu.append(v / np.sqrt(S))
    P = np.array(P); nu = np.array(nu)
    return dict(m=np.array(m), P=P, nis_sum=np.concatenate([[0.0], np.cumsum(nu ** 2)]), nis=(nu ** 2).mean(),
                sd=np.sqrt(np.stack([P[:, 0, 0], P[:, 1, 1]], 1)))


# 4 unscented transform of polar to Cartesian, a batch of estimates
def ukf_inputs():
    rg = R(502); a = rg.standard_normal((3, 2, 2)) * 0.2
    cov = a @ a.transpose(0, 2, 1) + np.diag([0.05, 0.02])
    return dict(mu=np.array([[2.0, 0.3], [1.0, 1.2], [3.5, -0.7]]), cov=cov,
                alpha=np.float64(0.8), beta=np.float64(2.0), kappa=np.float64(1.0))
@case("unscented_polar", inputs=ukf_inputs, tol=(1e-9, 1e-11))
def _(mu, cov, alpha, beta, kappa):
    n = 2; lam = alpha ** 2 * (n + kappa) - n; c = np.sqrt(n + lam); L = np.linalg.cholesky(cov)
    X = np.concatenate([mu[:, None], mu[:, None] + c * L.transpose(0, 2, 1), mu[:, None] - c * L.transpose(0, 2, 1)], 1)
    Wm = np.full(5, 0.5 / (n + lam)); Wm[0] = lam / (n + lam); Wc = Wm.copy(); Wc[0] += 1 - alpha ** 2 + beta
    Y = np.stack([X[..., 0] * np.cos(X[..., 1]), X[..., 0] * np.sin(X[..., 1])], -1)
    ym = np.einsum("s,bsk->bk", Wm, Y); d = Y - ym[:, None]
    return dict(L=L, X=X, Wm=Wm, Wc=Wc, Y=Y, ym=ym, yc=np.einsum("s,bsk,bsl->bkl", Wc, d, d), wsum=Wm.sum())


# 5 bootstrap particle filter with systematic resampling
def pf_inputs():
    rg = R(503); T, N = 25, 64; xs = np.cumsum(0.3 * rg.standard_normal(T))
    return dict(y=xs + 0.5 * rg.standard_normal(T), noise=rg.standard_normal((T, N)), offset=rg.random(T))
@case("particle_filter", inputs=pf_inputs, tol=(1e-9, 1e-11))
def _(y, noise, offset):
    T, N = noise.shape; x = [np.zeros(N)]; P = [np.zeros(N)]; W = [np.zeros(N)]; CW = [np.zeros(N)]; A = [np.zeros(N, np.int32)]
    for t in range(1, T):
        p = x[-1] + 0.3 * noise[t]; lw = -0.5 * ((y[t] - p) / 0.5) ** 2
        e = np.exp(lw - lw.max()); w = e / e.sum(); cw = np.cumsum(w)
        a = np.minimum((cw[None, :] < ((np.arange(N) + offset[t]) / N)[:, None]).sum(1), N - 1).astype(np.int32)
        P.append(p); W.append(w); CW.append(cw); A.append(a); x.append(p[a])
    P, W = np.array(P), np.array(W); est = (W * P).sum(1); est[0] = 0.0
    ess = np.concatenate([[0.0], 1.0 / (W[1:] ** 2).sum(1)]); A = np.array(A)
    distinct = np.concatenate([[0], (A[1:, 1:] != A[1:, :-1]).sum(1) + 1]).astype(np.int32)
    return dict(x=np.array(x), prop=P, w=W, cw=np.array(CW), anc=A, est=est, ess=ess, distinct=distinct,
                rmse=np.sqrt(((est[1:] - y[1:]) ** 2).mean()))


# 6 quaternion attitude integration, rotation matrix, angles
def quat_inputs():
    t = np.arange(50) * 0.02
    om = np.stack([0.8 * np.sin(t), 0.5 + 0.0 * t, -0.6 * np.cos(2 * t)], 1).astype(np.float32)
    return dict(omega=om, v_body=np.float32([1.0, 0.0, 0.5]))
def qmul(a, b):
    return np.array([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                     a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])
def qrot(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
@case("quaternion_attitude", inputs=quat_inputs, tol=(2e-4, 2e-5), vk=True)
def _(omega, v_body):
    om = omega.astype(np.float64); q = [np.array([1.0, 0, 0, 0])]
    for t in range(1, len(om)):
        n = q[-1] + 0.5 * 0.02 * qmul(q[-1], np.concatenate([[0.0], om[t]])); q.append(n / np.linalg.norm(n))
    q = np.array(q); Rf = qrot(q[-1])
    return dict(q=q, Rf=Rf, ortho=np.abs(Rf.T @ Rf - np.eye(3)).max(), angle=2 * np.arccos(min(abs(q[-1, 0]), 1.0)),
                ypr=np.array([np.arctan2(Rf[1, 0], Rf[0, 0]), np.arcsin(-Rf[2, 0]), np.arctan2(Rf[2, 1], Rf[2, 2])]),
                v_world=np.array([qrot(qt) @ v_body for qt in q]))


# 7 three-link arm, inverse kinematics by gradient descent with @
def arm_fk(th, L=np.array([1.0, 0.8, 0.5])):
    phi = np.cumsum(th); return np.array([(L * np.cos(phi)).sum(), (L * np.sin(phi)).sum()])
def arm_grad(th, target, L=np.array([1.0, 0.8, 0.5])):
    phi = np.cumsum(th); d = arm_fk(th) - target
    dx = -L * np.sin(phi); dy = L * np.cos(phi)          # d p / d phi_k
    gphi = 2 * (d[0] * dx + d[1] * dy)
    return np.cumsum(gphi[::-1])[::-1]                   # phi_k depends on th_j for j <= k
@case("arm_ik", inputs=lambda: dict(target=np.array([1.2, 1.1]), theta0=np.array([0.3, 0.4, 0.2])), tol=(1e-8, 1e-10))
def _(target, theta0):
    th = [theta0]
    for _ in range(1, 60):
        th.append(th[-1] - 0.1 * arm_grad(th[-1], target))
    th = np.array(th); path = np.array([arm_fk(t) for t in th]); err = np.linalg.norm(path - target, axis=1)
    return dict(theta=th, err=err, path=path, elbow=th[:, 1] > 0, reach=np.float32(1.0) + np.float32(0.8) + np.float32(0.5), dist=np.linalg.norm(target),
                converged=np.int32([s for s in range(60) if err[s] < 1e-3]))


# 8 shoelace areas, centroids, ray casting, rotation invariance
def poly_inputs():
    rg = R(504); P, V = 4, 7
    ang = np.sort(rg.random((P, V)) * 2 * np.pi, 1); rad = 1.0 + 0.6 * rg.random((P, V))
    poly = np.stack([rad * np.cos(ang), rad * np.sin(ang)], -1) + rg.standard_normal((P, 1, 2)) * 0.5
    poly[1] = poly[1, ::-1]                                     # one clockwise polygon
    return dict(poly=poly, pts=rg.uniform(-2, 2, (9, 2)), angle=np.float64(0.7))
@case("polygon_geometry", inputs=poly_inputs,
      outputs=["area", "perimeter", "centroid", "ccw", "crossings", "inside", "n_inside", "area_rot"], tol=(1e-9, 1e-11))
def _(poly, pts, angle):
    nx = np.roll(poly, -1, 1); cr = poly[..., 0] * nx[..., 1] - nx[..., 0] * poly[..., 1]
    area = 0.5 * cr.sum(1)
    a, b = poly[:, None], nx[:, None]; x, y = pts[None, :, None, 0], pts[None, :, None, 1]
    hit = ((a[..., 1] > y) != (b[..., 1] > y)) & (x < a[..., 0] + (y - a[..., 1]) * (b[..., 0] - a[..., 0]) / (b[..., 1] - a[..., 1]))
    crossings = hit.sum(2).astype(np.int32); inside = crossings % 2 == 1
    return dict(area=area, perimeter=np.linalg.norm(nx - poly, axis=2).sum(1),
                centroid=((poly + nx) * cr[..., None]).sum(1) / (6 * area[:, None]), ccw=area > 0,
                crossings=crossings, inside=inside, n_inside=inside.sum(0).astype(np.int32), area_rot=area)


# 9 HMM forward-backward smoothing and one Baum-Welch update
def hmm_inputs():
    rg = R(505); S, K, T = 3, 4, 30
    A = rg.random((S, S)) + 2 * np.eye(S); A /= A.sum(1, keepdims=True)
    B = rg.random((S, K)) + 0.2; B /= B.sum(1, keepdims=True)
    return dict(A=A, Bm=B, pi0=np.array([0.5, 0.3, 0.2]), obs=rg.integers(0, K, T).astype(np.int32))
@case("hmm_baum_welch", inputs=hmm_inputs, tol=(1e-9, 1e-12))
def _(A, Bm, pi0, obs):
    T, S = len(obs), len(pi0); a = np.zeros((T, S)); c = np.zeros(T); b = np.ones((T, S))
    a[0] = pi0 * Bm[:, obs[0]]; c[0] = a[0].sum(); a[0] /= c[0]
    for t in range(1, T):
        a[t] = a[t - 1] @ A * Bm[:, obs[t]]; c[t] = a[t].sum(); a[t] /= c[t]
    for t in range(T - 2, -1, -1):
        b[t] = A @ (Bm[:, obs[t + 1]] * b[t + 1]) / c[t + 1]
    g = a * b
    xi = a[:-1, :, None] * A[None] * (Bm[:, obs[1:]].T * b[1:])[:, None, :] / c[1:, None, None]
    Bn = np.stack([g[obs == k].sum(0) for k in range(Bm.shape[1])], 1)
    return dict(c=c, a=a, b=b[::-1], gamma=g, xi=xi, loglik=np.log(c).sum(), A_new=xi.sum(0) / g[:-1].sum(0)[:, None],
                B_new=Bn, B_norm=Bn / Bn.sum(1, keepdims=True), pi_new=g[0], map_state=g.argmax(1).astype(np.int32))


# 10 checkerboard Gibbs sampling on a periodic Ising grid, u32 LCG uniforms
@case("gibbs_ising", inputs=lambda: dict(seed=R(506).integers(0, 2 ** 32, (6, 6), dtype=np.uint64).astype(np.uint32),
                                         beta=np.float64(0.35)),
      outputs=["black", "white", "mag", "energy", "late_mag"], tol=(1e-12, 1e-12))
def _(seed, beta):
    L, S = seed.shape[0], 30; st = [seed.astype(np.uint64)]
    for _ in range(1, 2 * S):
        st.append((st[-1] * 1664525 + 1013904223) % 2 ** 32)
    uni = lambda v: (v // 256).astype(np.float64) / 16777216.0
    nb = lambda g: np.roll(g, -1, 0) + np.roll(g, 1, 0) + np.roll(g, -1, 1) + np.roll(g, 1, 1)
    draw = lambda h, u: np.where(u < 1.0 / (1.0 + np.exp(-2.0 * beta * h)), 1, -1)
    even = (np.add.outer(np.arange(L), np.arange(L)) % 2) == 0
    b = [np.where(seed % 2 == 0, 1, -1)]; w = [b[0]]
    for s in range(1, S):
        b.append(np.where(even, draw(nb(w[-1]), uni(st[2 * s - 1])), w[-1]))
        w.append(np.where(~even, draw(nb(b[-1]), uni(st[2 * s])), b[-1]))
    b, w = np.array(b, np.int32), np.array(w, np.int32); mag = w.sum((1, 2)) / L ** 2
    return dict(black=b, white=w, mag=mag, energy=-(w * (np.roll(w, -1, 1) + np.roll(w, -1, 2))).sum((1, 2)).astype(np.int32),
                late_mag=mag[S // 2:].mean())


# 11 variational inference with reparameterised gradients
def vi_inputs():
    rg = R(507); x = rg.standard_normal(40)
    return dict(x=x, yl=np.where(rg.random(40) < 1 / (1 + np.exp(-1.5 * x)), 1.0, -1.0), eps=rg.standard_normal(16))
@case("vi_reparam", inputs=vi_inputs, tol=(1e-9, 1e-11))
def _(x, yl, eps):
    def elbo_grad(th):
        sd = np.exp(th[1]); w = th[0] + sd * eps; z = yl[None] * x[None] * w[:, None]
        lp = -np.logaddexp(0, -z).sum(1) - 0.5 * w ** 2
        dw = ((yl * x)[None] / (1 + np.exp(z))).sum(1) - w
        return lp.mean() + th[1], np.array([dw.mean(), (dw * sd * eps).mean() + 1.0])
    th = [np.zeros(2)]
    for _ in range(1, 80):
        th.append(th[-1] + 0.02 * elbo_grad(th[-1])[1])
    th = np.array(th)
    return dict(th=th, trace_elbo=np.array([elbo_grad(t)[0] for t in th]), m_final=th[-1, 0], sd_final=np.exp(th[-1, 1]),
                __stdout__=[f"q(w) = N({th[-1, 0]:.3f}, {np.exp(th[-1, 1]):.3f}^2)"])


# 12 random-walk Metropolis on a banana density, i64 LCG
@case("metropolis_banana", inputs=lambda: dict(start=np.array([0.5, -1.0]), seed=np.int64(20261201)), tol=(1e-12, 1e-12))
def _(start, seed):
    T = 400; st = [int(seed)]
    for _ in range(1, 3 * T):
        st.append((st[-1] * 1103515245 + 12345) % 2147483648)
    u = np.array(st, np.float64) / 2147483648.0
    logp = lambda z: -0.5 * z[0] ** 2 / 4.0 - 0.5 * (z[1] - 0.5 * z[0] ** 2 + 1.0) ** 2
    x = [start]; prop = [np.zeros(2)]; acc = [False]
    for t in range(1, T):
        p = x[-1] + 0.8 * (2.0 * u[3 * t - 3:3 * t - 1] - 1.0); prop.append(p)
        a = np.log(u[3 * t - 1] + 1e-300) < logp(p) - logp(x[-1]); acc.append(a); x.append(p if a else x[-1])
    x = np.array(x)
    return dict(st=np.array(st, np.int64), prop=np.array(prop), accept=np.array(acc), x=x, n_accept=np.int32(sum(acc)),
                mean=x[T // 4:].mean(0), lp=np.array([logp(z) for z in x]))


# 13 belief propagation on a chain: sum-product beliefs, max-product MAP labelling
@case("bp_chain", inputs=lambda: dict(unary=R(508).standard_normal((12, 4)).astype(np.float32), coupling=np.float32(0.9)),
      tol=(1e-5, 1e-6), vk=True)
def _(unary, coupling):
    u = unary.astype(np.float64); c = float(coupling); N, K = u.shape
    psi = np.where(np.eye(K) == 1, np.exp(c), 1.0); fw = [np.full(K, 1 / K)]; bw = [np.full(K, 1 / K)]
    for t in range(1, N):
        m = (fw[-1] * np.exp(u[t - 1])) @ psi; fw.append(m / m.sum())
        m = (bw[-1] * np.exp(u[N - t])) @ psi; bw.append(m / m.sum())
    fw, bw = np.array(fw), np.array(bw); bel = fw * np.exp(u) * bw[::-1]; bel /= bel.sum(1, keepdims=True)
    score = [u[0]]; ptr = [np.zeros(K, np.int32)]
    for t in range(1, N):
        cand = score[-1][:, None] + c * np.eye(K); score.append(u[t] + cand.max(0)); ptr.append(cand.argmax(0).astype(np.int32))
    score, ptr = np.array(score), np.array(ptr); path = [int(score[-1].argmax())]
    for r in range(1, N):
        path.append(int(ptr[N - r, path[-1]]))
    labels = np.int32(path[::-1])
    return dict(fw=fw, bw=bw, belief=bel, marginal_map=bel.argmax(1).astype(np.int32), score=score, ptr=ptr,
                best=score[-1].max(), path=np.int32(path), labels=labels, changes=np.int32((labels[1:] != labels[:-1]).sum()))


# 14 Rodrigues rotations, composition, log map, d(rotated point)/d(rotation vector)
def rodrigues_np(w):
    th = np.linalg.norm(w); k = w / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K
@case("rodrigues_so3", inputs=lambda: dict(rv=R(509).standard_normal((5, 3)) * 0.8, cloud=R(510).standard_normal((6, 3))),
      outputs=["Rb", "C", "angle", "axis", "rel", "moved", "det", "tip", "dtip"], tol=(1e-8, 1e-10))
def _(rv, cloud):
    Rb = np.array([rodrigues_np(w) for w in rv]); C = Rb[1:] @ Rb[:-1]
    ang = np.arccos(np.clip((np.trace(C, axis1=1, axis2=2) - 1) / 2, -1, 1))
    axis = np.stack([C[:, 2, 1] - C[:, 1, 2], C[:, 0, 2] - C[:, 2, 0], C[:, 1, 0] - C[:, 0, 1]], 1) / (2 * np.sin(ang))[:, None]
    tip = lambda w: rodrigues_np(w) @ cloud[0]; e = 1e-6
    dtip = np.stack([(tip(rv[0] + e * d) - tip(rv[0] - e * d)) / (2 * e) for d in np.eye(3)], 1)
    return dict(Rb=Rb, C=C, angle=ang, axis=axis, rel=Rb[1:] @ Rb[:-1].transpose(0, 2, 1),
                moved=np.einsum("bij,pj->bpi", Rb, cloud), det=np.linalg.det(Rb), tip=tip(rv[0]), dtip=dtip)


# 15 occupancy grid from range beams, log-odds, match on counts
def occ_inputs():
    rg = R(511)
    r = rg.uniform(0.8, 3.0, 24).astype(np.float32); r[rg.random(24) < 0.25] = 3.5
    return dict(pose=np.float32([2.0, 1.9, 0.6]), ranges=r)
@case("occupancy_grid", inputs=occ_inputs, tol=(1e-5, 1e-6))
def _(pose, ranges):
    f = np.float32; B = len(ranges); S = 14
    ang = (pose[2] + f(-1.2)) + f(2.4) * np.arange(B, dtype=f) / f(B - 1)
    cell = lambda v: np.floor(v / f(0.25)).astype(np.int32)
    frac = ranges[:, None] * np.arange(S, dtype=f)[None] / f(S)
    fx = cell(pose[0] + frac * np.cos(ang)[:, None]); fy = cell(pose[1] + frac * np.sin(ang)[:, None])
    hx = cell(pose[0] + ranges * np.cos(ang)); hy = cell(pose[1] + ranges * np.sin(ang)); hit = ranges < f(3.5)
    free = np.zeros((16, 16), np.int32); occ = np.zeros((16, 16), np.int32)
    for i in range(16):
        for j in range(16):
            free[i, j] = ((fx == j) & (fy == i)).sum(); occ[i, j] = (hit & (hx == j) & (hy == i)).sum()
    lo = np.minimum(np.maximum(free.astype(f) * f(-0.4) + occ.astype(f) * f(0.85), f(-2.0)), f(3.0))
    prob = f(1) / (f(1) + np.exp(-lo))
    label = np.where((occ == 0) & (free == 0), 0, np.where(occ == 0, 1, np.where(occ > free, 2, 3))).astype(np.int32)
    return dict(angle=ang, fx=fx, fy=fy, hx=hx, hy=hy, hit=hit, free_count=free, occ_count=occ, logodds=lo, prob=prob,
                label=label, n_occupied=np.int32((prob > 0.7).sum()), returns=np.int32(np.nonzero(hit)[0]))


# 16 shooting MPC for a unicycle, gradient through the rollout by @
def unicycle_roll(u, dt=0.2):
    s = [np.zeros(3)]
    for t in range(len(u)):
        x, y, th = s[-1]
        s.append(np.array([x + dt * u[t, 0] * np.cos(th), y + dt * u[t, 0] * np.sin(th), th + dt * u[t, 1]]))
    return np.array(s)
def unicycle_grad(u, goal, dt=0.2):
    s = unicycle_roll(u); H = len(u); g = np.zeros_like(u)
    lam = np.array([2 * (s[H, 0] - goal[0]), 2 * (s[H, 1] - goal[1]), 0.0])
    for t in range(H - 1, -1, -1):
        th = s[t, 2]
        g[t, 0] = lam[0] * dt * np.cos(th) + lam[1] * dt * np.sin(th)
        g[t, 1] = lam[2] * dt
        lam = np.array([lam[0], lam[1], lam[2] - lam[0] * dt * u[t, 0] * np.sin(th) + lam[1] * dt * u[t, 0] * np.cos(th)])
    return g + 0.02 * u
@case("unicycle_mpc", sized=True, inputs=lambda: dict(goal=np.array([1.5, 1.0]), u0=np.tile([1.0, 0.1], (8, 1))), tol=(1e-8, 1e-10))
def _(goal, u0):
    cost = lambda u: ((unicycle_roll(u)[-1, :2] - goal) ** 2).sum() + 0.01 * (u ** 2).sum()
    U = [u0]
    for _ in range(1, 25):
        U.append(U[-1] - 0.05 * unicycle_grad(U[-1], goal))
    U = np.array(U); path = unicycle_roll(U[-1])
    return dict(U=U, J=np.array([cost(u) for u in U]), path=path, miss=np.linalg.norm(path[-1, :2] - goal))


# 17 complementary filter, gated accelerometer, gyro bias from still samples
def cf_inputs():
    rg = R(512); T = 300; t = np.arange(T) * 0.01
    truth = np.where(t < 0.2, 0.0, 0.6 * np.sin(2.0 * (t - 0.2)))
    gyro = np.gradient(truth, 0.01) + 0.05 + 0.02 * rg.standard_normal(T)
    mag = np.ones(T); mag[rg.random(T) < 0.1] = 1.5
    acc = np.stack([np.cos(truth), np.sin(truth)], 1) * mag[:, None] + 0.02 * rg.standard_normal((T, 2))
    return dict(gyro=gyro.astype(np.float32), acc=acc.astype(np.float32), truth=truth.astype(np.float32))
@case("complementary_filter", inputs=cf_inputs,
      outputs=["bias", "acc_angle", "trusted", "theta", "gyro_only", "rms_filter", "rms_gyro", "gated", "worst"], tol=(2e-4, 2e-5))
def _(gyro, acc, truth):
    g, a, tr = (v.astype(np.float64) for v in (gyro, acc, truth)); T = len(g); alpha = 0.5 / 0.51
    bias = g[:20].mean(); ang = np.arctan2(a[:, 1], a[:, 0]); n = np.hypot(a[:, 0], a[:, 1]); ok = (n > 0.8) & (n < 1.2)
    th = [ang[0]]; go = [ang[0]]
    for t in range(1, T):
        p = th[-1] + (g[t] - bias) * 0.01; th.append(alpha * p + (1 - alpha) * ang[t] if ok[t] else p); go.append(go[-1] + g[t] * 0.01)
    th, go = np.array(th), np.array(go); e = th - tr
    return dict(bias=bias, acc_angle=ang, trusted=ok, theta=th, gyro_only=go, rms_filter=np.sqrt((e ** 2).mean()),
                rms_gyro=np.sqrt(((go - tr) ** 2).mean()), gated=np.int32(np.nonzero(~ok)[0]), worst=np.abs(e).max())


# 18 fixed-point Q12 PID with i64 products, i16 saturation, and its float twin
def tdiv(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)
@case("fixed_point_pid", inputs=lambda: dict(setpoint=np.where(np.arange(80) < 5, 0, 4096 * 3 // 4).astype(np.int32),
                                             gains_q=np.int32([12 * 4096, 4096 // 2, 4096])), tol=(1e-5, 1e-6))
def _(setpoint, gains_q):
    T = len(setpoint); mulq = lambda a, b: int(tdiv(np.int64(a) * np.int64(b), np.int64(4096)))
    y, acc, e, u = [0], [0], [], []
    for t in range(T):
        if t:
            y.append(y[-1] + int(tdiv(np.int64(u[-1] - y[-1]), np.int64(16))))
        e.append(int(setpoint[t]) - y[t])
        if t:
            acc.append(max(min(acc[-1] + int(tdiv(np.int64(e[t]), np.int64(8))), 20000), -20000))
        v = mulq(gains_q[0], e[t]) + mulq(gains_q[1], acc[t]) + mulq(gains_q[2], e[t] - e[t - 1] if t else 0)
        u.append(min(max(v, -32768), 32767))
    f = np.float32; yf, accf, ef, uf = [f(0)], [f(0)], [], []
    g = gains_q.astype(f) / f(4096)
    for t in range(T):
        if t:
            yf.append(yf[-1] + (uf[-1] - yf[-1]) / f(16))
        ef.append(f(setpoint[t]) / f(4096) - yf[t])
        if t:
            accf.append(accf[-1] + ef[t] / f(8))
        uf.append(g[0] * ef[t] + g[1] * accf[t] + g[2] * (ef[t] - ef[t - 1] if t else f(0)))
    y = np.int32(y); yf = np.array(yf, f)
    return dict(y=y, e=np.int32(e), acc=np.int32(acc), u=np.int16(u), saturated=np.int32(sum(abs(v) >= 32767 for v in u)),
                final_error=f(e[-1]) / f(4096), yf=yf, ef=np.array(ef, f), uf=np.array(uf, f),
                gap=np.abs(y.astype(f) / f(4096) - yf).max())


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
