"""Hold-out programs, eighth round (optimization and operations research): ISTA and FISTA for
the lasso, ADMM with a Cholesky solve per step, projected gradient onto the simplex by bisection,
log-domain Sinkhorn transport, Frank-Wolfe with an argmin oracle, NMF by multiplicative updates,
L-BFGS's two-loop recursion, coordinate descent, an auction assignment with integer prices,
simplex tableau pivots with a duality check, a log-barrier interior point method, and gradients
through unrolled solvers, each checked against NumPy computed here. Each case states its
tolerance (`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on
vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32
soft = lambda v, t: np.sign(v) * np.maximum(np.abs(v) - t, 0)


# 1 ISTA and FISTA for the lasso
def lasso_inputs(M=20, N=8, seed=801):
    rg = R(seed); A = rg.standard_normal((M, N)); x = np.zeros(N); x[[1, 3, N - 1]] = [2.0, -1.5, 1.0]
    return dict(A=A, b=A @ x + 0.1 * rg.standard_normal(M), lam=np.float64(2.0))
@case("ista_fista", sized=True, inputs=lasso_inputs, tol=(1e-9, 1e-11), outputs=["x", "t", "xf", "f_ista", "f_fista", "support"])
def _(A, b, lam):
    K = 60; L = (A * A).sum(); g = lambda x: A.T @ (A @ x - b)
    obj = lambda x: 0.5 * ((A @ x - b) ** 2).sum() + lam * np.abs(x).sum()
    x = [np.zeros(A.shape[1])]
    for _ in range(K - 1):
        x.append(soft(x[-1] - g(x[-1]) / L, lam / L))
    t = [1.0]; z = np.zeros(A.shape[1]); xf = [z]
    for _ in range(K - 1):
        t.append((1 + np.sqrt(1 + 4 * t[-1] ** 2)) / 2)
        xf.append(soft(z - g(z) / L, lam / L)); z = xf[-1] + (t[-2] - 1) / t[-1] * (xf[-1] - xf[-2])
    return dict(x=np.array(x), t=np.array(t), xf=np.array(xf), f_ista=np.array([obj(v) for v in x]),
                f_fista=np.array([obj(v) for v in xf]), support=np.int32((xf[-1] != 0).sum()), __stdout__=["support"])


# 2 ADMM for the lasso with a Cholesky solve per step
@case("admm_lasso", inputs=lambda: lasso_inputs(12, 5, 802), tol=(1e-9, 1e-11),
      outputs=["Lc", "x", "z", "u", "primal", "dual", "converged"])
def _(A, b, lam):
    K, rho = 40, 1.5; Q = A.T @ A + rho * np.eye(5); C = np.linalg.cholesky(Q)
    x = [np.zeros(5)]; z = [np.zeros(5)]; u = [np.zeros(5)]
    for _ in range(K - 1):
        x.append(np.linalg.solve(Q, A.T @ b + rho * (z[-1] - u[-1])))
        z.append(soft(x[-1] + u[-1], lam / rho)); u.append(u[-1] + x[-1] - z[-1])
    x, z, u = map(np.array, (x, z, u))
    primal = np.r_[0, np.sqrt(((x - z) ** 2).sum(1))[1:]]; dual = np.r_[0, rho * np.sqrt(((z[1:] - z[:-1]) ** 2).sum(1))]
    return dict(Lc=C.T, x=x, z=z, u=u, primal=primal, dual=dual, converged=(primal[-1] < 1e-3) & (dual[-1] < 1e-3))


# 3 projected gradient onto the simplex, the projection by bisection on its threshold
def simplex_proj(v):
    lo, hi = v.min() - f32(1), v.max()
    for _ in range(39):
        mid = f32(0.5) * (lo + hi)
        if np.maximum(v - mid, 0).sum(dtype=f32) > 1: lo = mid
        else: hi = mid
    return np.maximum(v - f32(0.5) * (lo + hi), 0)
def projgrad_inputs(N=7):
    rg = R(803); a = rg.standard_normal((N, N))
    return dict(Q=(a @ a.T / N + 0.1 * np.eye(N)).astype(f32), c=rg.standard_normal(N).astype(f32),
                x0=rg.standard_normal(N).astype(f32))
@case("simplex_projgrad", sized=True, inputs=projgrad_inputs, tol=(1e-4, 1e-5), vk=True)
def _(Q, c, x0):
    x = [simplex_proj(x0)]
    for _ in range(29):
        x.append(simplex_proj(x[-1] - f32(0.1) * (Q @ x[-1] + c)))
    x = np.array(x); fx = np.array([0.5 * v @ Q @ v + c @ v for v in x])
    return dict(x=x, fx=fx, mass=x.sum(1), active=np.int32((x[-1] > 0).sum()))


# 4 log-domain Sinkhorn, the transport cost and its gradient through the iterations
def sinkhorn_np(xs, ys, a, b, eps=0.1, T=30):
    from scipy.special import logsumexp
    C = (xs[:, None] - ys[None, :]) ** 2; g = np.zeros(len(ys))
    for t in range(T):
        f = eps * np.log(a) - eps * logsumexp((g[None, :] - C) / eps, axis=1)
        if t < T - 1:
            g = eps * np.log(b) - eps * logsumexp((f[:, None] - C) / eps, axis=0)
    return np.exp((f[:, None] + g[None, :] - C) / eps)
def sinkhorn_inputs(P=6, Q=5):
    rg = R(804); a = rg.random(P) + 0.5; b = rg.random(Q) + 0.5
    return dict(xs=np.sort(rg.random(P)), ys=np.sort(rg.random(Q)), a=a / a.sum(), b=b / b.sum())
@case("sinkhorn_log", inputs=sinkhorn_inputs, tol=(1e-7, 1e-9))
def _(xs, ys, a, b):
    plan = sinkhorn_np(xs, ys, a, b)
    cost = lambda xs: (sinkhorn_np(xs, ys, a, b) * (xs[:, None] - ys[None, :]) ** 2).sum()
    h = 1e-6; d = np.array([(cost(xs + h * e) - cost(xs - h * e)) / (2 * h) for e in np.eye(len(xs))])
    return dict(plan=plan, row_err=np.abs(plan.sum(1) - a).max(), col_err=np.abs(plan.sum(0) - b).max(),
                cost=cost(xs), dcost=d, target=np.argmax(plan, 1).astype(np.int32))


# 5 Frank-Wolfe over the simplex (argmin oracle) and over a box
def fw_inputs():
    rg = R(805); A = rg.standard_normal((16, 6)); x = np.array([0.1, 0.5, 0.0, 0.4, 0.0, 0.0])
    return dict(A=A.astype(f32), b=(A @ x + 0.05 * rg.standard_normal(16)).astype(f32))
@case("frank_wolfe", inputs=fw_inputs, tol=(1e-4, 1e-4), vk=True)
def _(A, b):
    K = 50; grad = lambda x: A.T @ (A @ x - b); loss = lambda x: 0.5 * ((A @ x - b) ** 2).sum()
    x = [np.eye(6, dtype=f32)[0]]; vert = []
    for k in range(K):
        vert.append(np.argmin(grad(x[-1])))
        if k < K - 1:
            gm = f32(2) / f32(k + 2); x.append((1 - gm) * x[-1] + gm * np.eye(6, dtype=f32)[vert[-1]])
    gap = [grad(v) @ v - grad(v)[j] for v, j in zip(x, vert)]
    y = [np.zeros(6, f32)]
    for k in range(1, K):
        s = np.where(grad(y[-1]) > 0, f32(-0.5), f32(0.5)); gm = f32(2) / f32(k + 1); y.append(y[-1] + gm * (s - y[-1]))
    bgap = [grad(v) @ (v - np.where(grad(v) > 0, f32(-0.5), f32(0.5))) for v in y]
    vert = np.array(vert, np.int32)
    return dict(x=np.array(x), vertex=vert, gap=np.array(gap), y=np.array(y), box_gap=np.array(bgap),
                f_simplex=loss(x[-1]), f_box=loss(y[-1]), picks=np.bincount(vert, minlength=6).astype(np.int32))


# 6 NMF by multiplicative updates
def nmf_inputs(M=9, N=7):
    rg = R(806)
    return dict(V=(rg.random((M, 3)) @ rg.random((3, N)) + 0.05 * rg.random((M, N))).astype(f32),
                W0=(rg.random((M, 3)) + 0.1).astype(f32), H0=(rg.random((3, N)) + 0.1).astype(f32))
@case("nmf_multiplicative", inputs=nmf_inputs, tol=(2e-4, 1e-5), vk=True)
def _(V, W0, H0):
    W = [W0.astype(np.float64)]; H = [H0.astype(np.float64)]; V = V.astype(np.float64); e = 1e-9
    for _ in range(39):
        H.append(H[-1] * (W[-1].T @ V) / (W[-1].T @ W[-1] @ H[-1] + e))
        W.append(W[-1] * (V @ H[-1].T) / (W[-1] @ H[-1] @ H[-1].T + e))
    frob = np.array([((V - w @ h) ** 2).sum() for w, h in zip(W, H)]); P = W[-1] @ H[-1]
    return dict(W=np.array(W), H=np.array(H), frob=frob, P=P, kl=(V * np.log(V / P) - V + P).sum(),
                monotone=bool((frob[1:] <= frob[:-1] * 1.0001).all()))


# 7 L-BFGS with a three-pair history and the two-loop recursion
def lbfgs_inputs():
    rg = R(807)
    return dict(A=rg.standard_normal((8, 4)), c=rg.standard_normal(8))
@case("lbfgs_two_loop", inputs=lbfgs_inputs, tol=(1e-9, 1e-11), outputs=["x", "g", "fx", "gnorm"])
def _(A, c):
    K, H, mu = 15, 3, 0.5
    def f(x):
        z = A @ x + c; return z.max() + np.log(np.exp(z - z.max()).sum()) + 0.5 * mu * x @ x
    def grad(x):
        z = A @ x + c; p = np.exp(z - z.max()); return A.T @ (p / p.sum()) + mu * x
    x = [np.zeros(4)]; g = [grad(x[0])]
    for k in range(1, K):
        pairs = [(x[k - 1 - h] - x[k - 2 - h], g[k - 1 - h] - g[k - 2 - h]) for h in range(min(k - 1, H))]
        q = g[-1].copy(); al = []
        for s, y in pairs:
            al.append((s @ q) / (s @ y)); q = q - al[-1] * y
        r = q * ((pairs[0][0] @ pairs[0][1]) / (pairs[0][1] @ pairs[0][1]) if pairs else 1.0)
        for (s, y), a in reversed(list(zip(pairs, al))):
            r = r + s * (a - (y @ r) / (s @ y))
        x.append(x[-1] - (0.1 if k == 1 else 1.0) * r); g.append(grad(x[-1]))
    return dict(x=np.array(x), g=np.array(g), fx=np.array([f(v) for v in x]), gnorm=np.linalg.norm(g, axis=1))


# 8 auction assignment with integer prices, checked optimal against every permutation
@case("auction_assign", inputs=lambda: dict(benefit=R(808).integers(0, 20, (6, 6)).astype(np.int32)),
      outputs=["scaled", "price", "owner", "bidder", "choice", "rounds", "person_of", "total", "object_of"])
def _(benefit):
    from itertools import permutations
    N, Rn = len(benefit), 80; a = benefit.astype(np.int64) * (N + 1)
    price = [np.zeros(N, np.int64)]; owner = [np.full(N, -1, np.int8)]; bidders = []; choices = []
    for r in range(Rn):
        own = owner[-1]; free = [i for i in range(N) if i not in own]; b = free[0] if free else N; bidders.append(b)
        v = a[min(b, N - 1)] - price[-1]; j = int(np.argmax(v)); choices.append(j)
        if r == Rn - 1:
            break
        p, o = price[-1].copy(), own.copy()
        if b < N:
            p[j] += v[j] - np.delete(v, j).max() + 1; o[j] = b
        price.append(p); owner.append(o)
    person = owner[-1].astype(np.int32); total = benefit[person, np.arange(N)].sum()
    assert total == max(sum(benefit[i, q[i]] for i in range(N)) for q in permutations(range(N)))
    return dict(scaled=a.astype(np.int32), price=np.array(price, np.int32), owner=np.array(owner), bidder=np.int32(bidders),
                choice=np.int32(choices), rounds=np.int32(sum(b < N for b in bidders)), person_of=person,
                total=np.int64(total), object_of=np.int32([list(person).index(i) for i in range(N)]))


# 9 simplex tableau pivots with a strong duality check
def simplex_inputs():
    rg = R(809)
    return dict(A=rg.uniform(0.2, 2.0, (4, 3)), b=rg.uniform(2.0, 6.0, 4), c=rg.uniform(1.0, 3.0, 3))
@case("simplex_tableau", inputs=simplex_inputs, tol=(1e-9, 1e-11), outputs=["T", "basis", "enter", "leave", "x", "y", "primal", "dual", "pivots"])
def _(A, b, c):
    from scipy.optimize import linprog
    P = 8; T = np.zeros((5, 8)); T[:4, :3] = A; T[:4, 3:7] = np.eye(4); T[:4, 7] = b; T[4, :3] = -c
    Ts = [T]; basis = [np.arange(3, 7)]; enter = []; leave = []
    for p in range(P):
        T = Ts[-1]; low = T[4, :7].min(); e = int(np.argmin(T[4, :7])) if low < -1e-12 else -1; enter.append(e)
        if e < 0:
            leave.append(-1)
        else:
            ratio = np.where(T[:4, e] > 1e-12, T[:4, 7] / np.where(T[:4, e] > 1e-12, T[:4, e], 1), 1e300); leave.append(int(np.argmin(ratio)))
        if p == P - 1:
            break
        bs = basis[-1].copy()
        if e >= 0:
            l = leave[-1]; N = T - np.outer(T[:, e] / T[l, e], T[l]); N[l] = T[l] / T[l, e]; T = N; bs[l] = e
        Ts.append(T); basis.append(bs)
    x = np.zeros(3)
    for r, q in enumerate(basis[-1]):
        if q < 3: x[q] = Ts[-1][r, 7]
    y = Ts[-1][4, 3:7]
    assert np.isclose(c @ x, -linprog(-c, A_ub=A, b_ub=b).fun)
    return dict(T=np.array(Ts), basis=np.array(basis, np.int32), enter=np.int32(enter), leave=np.int32(leave), x=x, y=y,
                primal=c @ x, dual=b @ y, pivots=np.int32(sum(e >= 0 for e in enter)))


# 10 log-barrier interior point for an LP, damped Newton steps inside each barrier stage
def barrier_inputs():
    ang = np.linspace(0, 2 * np.pi, 5, endpoint=False) + 0.3
    return dict(A=np.stack([np.cos(ang), np.sin(ang)], 1), b=np.array([1.0, 1.2, 0.9, 1.1, 1.0]),
                c=np.array([1.0, 0.4]), x0=np.array([0.1, -0.1]))
@case("barrier_newton", inputs=barrier_inputs, tol=(1e-8, 1e-10), outputs=["tau", "x", "decrement", "objective", "gap"])
def _(A, b, c, x0):
    S = 6; tau = 1.0 * 4.0 ** np.arange(S)
    def newton(x, t):
        sl = b - A @ x; g = t * c + A.T @ (1 / sl); H = (A.T / sl ** 2) @ A; d = -np.linalg.solve(H, g)
        alpha = max(0.5 ** k for k in range(20) if (b - A @ (x + 0.5 ** k * d) > 0).all())
        return x + alpha * d, np.sqrt(-(g @ d))
    x = [x0]
    for s in range(1, S):
        z = x[-1]
        for _ in range(7):
            z = newton(z, tau[s])[0]
        x.append(z)
    x = np.array(x)
    return dict(tau=tau, x=x, decrement=np.r_[0, [newton(x[s], tau[s])[1] for s in range(1, S)]], objective=x @ c, gap=5 / tau)


# 11 cyclic coordinate descent for lasso, ridge and the elastic net, the rule picked by a match
def cd_inputs(rule):
    return lambda: dict(**{k: v for k, v in lasso_inputs(15, 6, 811).items() if k != "lam"}, rule=np.int32(rule), lam=np.float64(3.0))
def cd_ref(A, b, rule, lam):
    M, N = A.shape; T = 12 * N; col = (A * A).sum(0); x = [np.zeros(N)]; r = [b.copy()]; moves = [0.0]
    def upd(rho, z):
        if rule == 0: return soft(rho, lam) / z
        if rule == 1: return rho / (z + lam)
        return soft(rho, 0.5 * lam) / (z + 0.5 * lam)
    for t in range(1, T):
        j = (t - 1) % N; rho = A[:, j] @ r[-1] + col[j] * x[-1][j]; mv = upd(rho, col[j]) - x[-1][j]; moves.append(mv)
        xn = x[-1].copy(); xn[j] += mv; x.append(xn); r.append(r[-1] - A[:, j] * mv)
    x, r = np.array(x), np.array(r)
    pen = [lam * np.abs(x).sum(1), 0.5 * lam * (x * x).sum(1), 0.5 * lam * np.abs(x).sum(1) + 0.25 * lam * (x * x).sum(1)][min(rule, 2)]
    return dict(col=col, x=x, r=r, coord=np.arange(T, dtype=np.int32) % N, move=np.array(moves), objective=0.5 * (r * r).sum(1) + pen,
                sweeps=np.int64(12), nonzero=np.int64((x[-1] != 0).sum()))
case("coord_descent", inputs=cd_inputs(0), tol=(1e-9, 1e-11))(cd_ref)
case("coord_descent_ridge", file="coord_descent", inputs=cd_inputs(1), tol=(1e-9, 1e-11))(cd_ref)
case("coord_descent_enet", file="coord_descent", inputs=cd_inputs(7), tol=(1e-9, 1e-11))(cd_ref)


# 12 a regularization weight tuned by gradients through an unrolled training loop
def hyper_inputs(Nt=24, Nv=16):
    rg = R(812); w = np.array([1.5, -2.0, 0.5]); X = rg.standard_normal((Nt + Nv, 3))
    y = np.where(X @ w + 0.8 * rg.standard_normal(Nt + Nv) > 0, 1.0, -1.0)
    return dict(Xt=X[:Nt], yt=y[:Nt], Xv=X[Nt:], yv=y[Nt:])
@case("unrolled_hypergrad", inputs=hyper_inputs, tol=(1e-6, 1e-9),
      outputs=["grid", "curve", "slope", "best", "tuned", "h", "w_loop", "w_final", "margin", "errors"])
def _(Xt, yt, Xv, yv):
    sig = lambda z: 1 / (1 + np.exp(-z)); sp = lambda z: np.logaddexp(0, z)
    def fit(ll):
        lam = np.exp(ll); w = np.zeros(3)
        for _ in range(24):
            m = yt * (Xt @ w); w = w - 0.5 * (Xt.T @ (-yt * sig(-m)) / len(yt) + lam * w)
        return w
    val = lambda ll: sp(-yv * (Xv @ fit(ll))).mean()
    grid = -4.0 + np.arange(5.0); d = 1e-6
    curve = np.array([val(g) for g in grid]); slope = np.array([(val(g + d) - val(g - d)) / (2 * d) for g in grid])
    best = int(np.argmin(curve)); tuned = grid[best] - 2.0 * slope[best]
    h = [-1.0]
    for _ in range(5):
        h.append(h[-1] - 2.0 * (val(h[-1] + d) - val(h[-1] - d)) / (2 * d))
    w = fit(tuned); m = yv * (Xv @ w)
    return dict(grid=grid, curve=curve, slope=slope, best=np.int32(best), tuned=tuned, h=np.array(h), w_loop=fit(h[-1]), w_final=w,
                margin=m,
                errors=np.int32((m < 0).sum()))


# 13 a transportation problem: northwest corner basis and the MODI duals
def nw_inputs():
    rg = R(813)
    return dict(supply=np.int16([20, 30, 25, 15]), demand=np.int16([10, 25, 20, 15, 20]),
                cost=rg.integers(1, 20, (4, 5)).astype(np.int32))
@case("transport_northwest", inputs=nw_inputs,
      outputs=["row", "col", "left_s", "left_d", "flow", "move", "shipped", "total", "u", "v", "reduced", "optimal"])
def _(supply, demand, cost):
    M, N = len(supply), len(demand); S = M + N - 1
    row, col, ls, ld = [0], [0], [int(supply[0])], [int(demand[0])]; flow, move = [], []
    for s in range(S):
        f = min(ls[-1], ld[-1]); flow.append(f)
        mv = 0 if (ls[-1] - f == 0 and row[-1] != M - 1) else 1; move.append(mv)
        if s == S - 1:
            break
        r, c = row[-1] + (mv == 0), col[-1] + (mv == 1)
        ls.append(int(supply[r]) if mv == 0 else ls[-1] - f); ld.append(int(demand[c]) if mv == 1 else ld[-1] - f)
        row.append(r); col.append(c)
    shipped = np.zeros((M, N), np.int32)
    for r, c, f in zip(row, col, flow):
        shipped[r, c] += f
    u = [np.zeros(M, np.int32)]; v0 = np.zeros(N, np.int32); v0[0] = cost[0, 0]; v = [v0]
    for s in range(1, S):
        un, vn = u[-1].copy(), v[-1].copy()
        if move[s - 1] == 0: un[row[s]] = cost[row[s], col[s]] - v[-1][col[s]]
        else: vn[col[s]] = cost[row[s], col[s]] - u[-1][row[s]]
        u.append(un); v.append(vn)
    red = cost - u[-1][:, None] - v[-1][None, :]
    assert all(red[r, c] == 0 for r, c in zip(row, col))
    return dict(row=np.int32(row), col=np.int32(col), left_s=np.int32(ls), left_d=np.int32(ld), flow=np.int32(flow),
                move=np.int32(move), shipped=shipped, total=np.int64(sum(f * cost[r, c] for r, c, f in zip(row, col, flow))),
                u=np.array(u), v=np.array(v), reduced=red.astype(np.int32), optimal=bool((red >= 0).all()),
                __stdout__=["northwest total"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
