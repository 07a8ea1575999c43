"""Hold-out programs, fifth round (control, robotics, geometry, probabilistic inference): LQR by a
backward Riccati recurrence, a PID loop on a plant, an extended Kalman filter with Jacobians by @,
unscented sigma points, a particle filter with systematic resampling, quaternion attitude, arm
kinematics with inverse kinematics by gradient descent, polygon areas and ray casting, HMM smoothing
with a Baum-Welch update, Gibbs sampling, belief propagation and variational inference, each checked
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
        err.append(sp[t] - pos[t]); integ.append(np.clip(integ[-1] + err[t] * dt, -1.5, 1.5))
        deriv.append((err[t] - err[t - 1]) / dt); u.append(ctl(err[t], integ[t], deriv[t]))
    return [np.array(a) for a in (pos, vel, err, integ, deriv, u)]
def pid_inputs():
    sp = np.where(np.arange(120) < 10, 0.0, 1.0); sp[80:] = 0.4
    return dict(setpoint=sp, gains=np.array([6.0, 4.0, 0.8]))
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


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
