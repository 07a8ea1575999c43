"""Hold-out programs, ninth round (economics, finance, queues and Markov chains): value iteration for
a consumption-savings model, Howard policy iteration with linear solves, Lindley's queue recursion
with a derivative in the load, an M/M/1/K chain's stationary law by power iteration, each checked
against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers and bools
compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 consumption-savings value iteration on an asset grid
def cs_inputs():
    return dict(agrid=np.linspace(0.0, 8.0, 30), inc=np.array([0.6, 1.4]), P=np.array([[0.8, 0.2], [0.3, 0.7]]),
                beta=np.float64(0.9), r=np.float64(0.04), shocks=R(901).integers(0, 2, 25).astype(np.int32))
@case("consumption_savings_vi", inputs=cs_inputs, tol=(1e-10, 1e-10),
      outputs=["V", "pol", "cons", "sup_change", "at", "ct", "saving_states"])
def _(agrid, inc, P, beta, r, shocks):
    N, K, T = len(agrid), 90, len(shocks)
    cash = (1 + r) * agrid[None, :] + inc[:, None]
    def util(c): return np.where(c > 1e-9, np.log(np.maximum(c, 1e-300)), -1e10)
    V = [util(cash)]
    for k in range(1, K):
        EV = P @ V[-1]
        V.append((util(cash[:, :, None] - agrid[None, None, :]) + beta * EV[:, None, :]).max(2))
    obj = util(cash[:, :, None] - agrid[None, None, :]) + beta * (P @ V[-2])[:, None, :]
    pol = obj.argmax(2).astype(np.int32); cons = cash - agrid[pol]
    at = [0]
    for t in range(1, T): at.append(pol[shocks[t - 1], at[-1]])
    at = np.int32(at); ct = cons[shocks, at]
    sav = np.int32((pol > np.arange(N)[None, :]).sum())
    return dict(V=np.array(V), pol=pol, cons=cons, sup_change=np.abs(V[-1] - V[-2]).max(), at=at, ct=ct,
                saving_states=sav, __stdout__=[f"mean consumption {ct.mean():.5f}, {sav} saving states"])


# 2 Howard policy iteration with exact evaluation by a linear solve
def pi_inputs():
    rg = R(902); S = 7
    R_ = np.stack([-0.6 * np.arange(S) + 3.0, 2.0 - 0.15 * np.arange(S), np.full(S, 0.5)], 1) + rg.uniform(0, 0.3, (S, 3))
    P = np.zeros((3, S, S))
    for s in range(S):
        w = rg.uniform(0.1, 1.0, S - s); P[0, s, s:] = w / w.sum()
        P[1, s, max(s - 2, 0)] = 0.7; P[1, s, min(s + 1, S - 1)] += 0.3
        P[2, s, 0] = 0.9; P[2, s, 1] = 0.1
    return dict(R=R_, P=P, beta=np.float64(0.92))
@case("policy_iteration_solve", inputs=pi_inputs, tol=(1e-10, 1e-10),
      outputs=["pol", "V", "changes", "residual", "stable", "action_count"])
def _(R, P, beta):
    S, K = len(R), 6; pol = [np.zeros(S, int)]; V = []
    def ev(p): return np.linalg.solve(np.eye(S) - beta * P[p, np.arange(S)], R[np.arange(S), p])
    def qv(v): return R + beta * np.einsum("asj,j->sa", P, v)
    V.append(ev(pol[0]))
    for k in range(1, K):
        pol.append(qv(V[-1]).argmax(1)); V.append(ev(pol[-1]))
    pol = np.array(pol).astype(np.int32)
    changes = np.int32([0] + list((pol[1:] != pol[:-1]).sum(1)))  # row 0 lies outside 1..K
    residual = np.abs(qv(V[-1]).max(1) - V[-1]).max()
    return dict(pol=pol, V=np.array(V), changes=changes, residual=residual, stable=np.bool_((pol[-1] == pol[-2]).all()),
                action_count=np.bincount(pol[-1], minlength=3).astype(np.int32))


# 3 Lindley's recursion for a single-server queue, with d(mean wait)/d(load)
def lq_inputs():
    rg = R(903); N = 60
    return dict(gap=rg.exponential(1.0, N), base=rg.exponential(0.8, N), load=np.float64(1.05), tau=np.float64(1.5))
@case("lindley_queue", inputs=lq_inputs, tol=(1e-11, 1e-11), vk=False,
      outputs=["W", "depart", "seen", "mean_wait", "dmean_dload", "busy_periods", "longest", "who", "kind",
               "kind_count", "server_util"])
def _(gap, base, load, tau):
    N = len(gap); svc = load * base; W = np.zeros(N); dW = np.zeros(N)
    for n in range(1, N):
        v = W[n - 1] + svc[n - 1] - gap[n]
        W[n], dW[n] = (v, dW[n - 1] + base[n - 1]) if v > 0 else (0.0, 0.0)
    arrive = np.cumsum(gap); depart = arrive + W + svc
    seen = np.int32([(depart[:n] > arrive[n]).sum() for n in range(N)])
    kind = np.where(W > 0, np.where(W > tau, 2, 1), 0).astype(np.int32)
    who = int(W.argmax()); bp = np.int32((W == 0).sum())
    return dict(W=W, depart=depart, seen=seen, mean_wait=W.mean(), dmean_dload=dW.mean(), busy_periods=bp,
                longest=W.max(), who=np.int32(who), kind=kind, kind_count=np.bincount(kind, minlength=3).astype(np.int32),
                server_util=svc.sum() / (depart[-1] - arrive[0]),
                __stdout__=[f"mean wait {W.mean():.4f}, busy periods {bp}, longest wait at {who}"])


# 4 M/M/1/K stationary distribution by power iteration, d L / d lambda
@case("mm1k_power", inputs=lambda: dict(lam=np.float64(0.8), mu=np.float64(1.0)), tol=(1e-9, 1e-11),
      outputs=["P", "pi", "exact", "gap", "L", "blocking", "throughput", "Wsys", "dL_dlam"])
def _(lam, mu):
    K = 10; n = K + 1; q = lam + mu
    def trans(up, down):
        P = np.zeros((n, n))
        for i in range(n):
            if i < K: P[i, i + 1] = up
            if i > 0: P[i, i - 1] = down
            P[i, i] = -P[i].sum()
        return P
    P = trans(lam / q, mu / q) + np.eye(n); dP = trans(mu / q ** 2, -mu / q ** 2)  # d(lam/q) = mu/q^2 dlam
    pi = [np.full(n, 1 / n)]; dpi = np.zeros(n)
    for k in range(1, 400):
        dpi = dpi @ P + pi[-1] @ dP; pi.append(pi[-1] @ P)
    pi = np.array(pi); rho = lam / mu; j = np.arange(n)
    exact = rho ** j * (1 - rho) / (1 - rho ** n)
    L = (j * pi[-1]).sum(); blocking = pi[-1, K]; th = lam * (1 - blocking)
    return dict(P=P, pi=pi, exact=exact, gap=np.abs(pi[-1] - exact).max(), L=L, blocking=blocking, throughput=th,
                Wsys=L / th, dL_dlam=(j * dpi).sum(),
                __stdout__=[f"L = {L:.6f}, blocking = {blocking:.6f}, W = {L / th:.6f}"])


# 5 absorbing Markov chain: expected times, their variance, absorption probabilities, d t0 / d adv
def ab_inputs():
    rg = R(905); T = 6
    return dict(adv=rg.uniform(0.4, 0.7, T), drop=rg.uniform(0.02, 0.12, T))
@case("absorbing_chain", inputs=ab_inputs, tol=(1e-10, 1e-12),
      outputs=["Q", "steps", "var_steps", "Bt", "total", "by_sum", "t0", "dt0_dadv"])
def _(adv, drop):
    T = len(adv); Q = np.diag(1 - adv - drop) + np.diag(adv[:-1], 1)
    Rab = np.zeros((T, 2)); Rab[-1, 0] = adv[-1]; Rab[:, 1] = drop
    Nf = np.linalg.inv(np.eye(T) - Q); steps = Nf @ np.ones(T)
    var = (2 * Nf - np.eye(T)) @ steps - steps ** 2; B = Nf @ Rab
    dist = [np.eye(T)[0]]
    for k in range(1, 400): dist.append(dist[-1] @ Q)
    # dN = N dQ N; dQ/dadv[i] is -1 at (i, i) and +1 at (i, i + 1)
    d = np.zeros(T)
    for i in range(T):
        dQ = np.zeros((T, T)); dQ[i, i] = -1
        if i + 1 < T: dQ[i, i + 1] = 1
        d[i] = (Nf @ dQ @ steps)[0]
    return dict(Q=Q, steps=steps, var_steps=var, Bt=B.T, total=B.sum(1), by_sum=np.array(dist).sum(), t0=steps[0],
                dt0_dadv=d, __stdout__=[f"expected {steps[0]:.4f} stages, graduation probability {B[0, 0]:.4f}"])


# 6 (s, S) inventory policies side by side on given demands
def inv_inputs():
    rg = R(906); T = 40
    pols = np.int32([[s, S] for s in (2, 4, 6) for S in (8, 11, 14)])
    return dict(demand=rg.poisson(3.5, T).astype(np.int32), pols=pols, hold=np.float64(0.3),
                penalty=np.float64(2.5), fixed=np.float64(4.0))
@case("inventory_sS", inputs=inv_inputs, tol=(1e-12, 1e-12), vk=True,
      outputs=["start", "sold", "left", "order", "n_orders", "cost", "fill", "best", "label", "stockouts"])
def _(demand, pols, hold, penalty, fixed):
    P, T = len(pols), len(demand); start = np.zeros((P, T), np.int32); sold = start.copy(); left = start.copy(); order = start.copy()
    for p, (s, S) in enumerate(pols):
        for t in range(T):
            start[p, t] = S if t == 0 else left[p, t - 1] + order[p, t - 1]
            sold[p, t] = min(start[p, t], demand[t]); left[p, t] = start[p, t] - sold[p, t]
            order[p, t] = S - left[p, t] if left[p, t] < s else 0
    lost = demand[None] - sold; n_orders = (order > 0).sum(1).astype(np.int64)
    cost = (hold * left + penalty * lost).sum(1) + fixed * n_orders
    best = int(cost.argmin())
    label = np.where(left[best] == 0, np.where(lost[best] == 0, 1, 2), 0).astype(np.int32)
    return dict(start=start, sold=sold, left=left, order=order, n_orders=n_orders, cost=cost,
                fill=sold.sum(1) / demand.sum(), best=np.int32(best), label=label, stockouts=np.int32((label == 2).sum()),
                __stdout__=[f"best policy {best}: s = {pols[best, 0]}, S = {pols[best, 1]}, cost {cost[best]:.2f}"])


# 7 Gini coefficient, Lorenz curve, quintiles, Palma and Theil from ranked incomes
def gini_inputs():
    x = np.round(R(907).lognormal(3.0, 0.8, 50), 1); x[7] = x[3]  # a tie
    return dict(x=x)
@case("gini_lorenz", inputs=gini_inputs, tol=(1e-11, 1e-12),
      outputs=["rank", "sorted", "lorenz", "gini_area", "gini", "dgini", "quintile", "palma", "theil"])
def _(x):
    N = len(x); order = np.argsort(x, kind="stable"); rank = np.empty(N, np.int32); rank[order] = np.arange(N)
    srt = x[order]; tot = x.sum(); mu = tot / N; L = np.cumsum(srt) / tot
    ga = 1 - (L[0] + (L[1:] + L[:-1]).sum()) / N
    D = np.abs(x[:, None] - x[None, :]).sum(); g = D / (2 * N * N * mu)
    dD = 2 * np.sign(x[:, None] - x[None, :]).sum(1); dg = dD / (2 * N * N * mu) - g / mu / N
    r = np.arange(N); quint = np.array([srt[r * 5 // N == q].sum() for q in range(5)]) / tot
    palma = srt[r * 10 >= 9 * N].sum() / srt[r * 10 < 4 * N].sum()
    theil = (x / mu * np.log(x / mu)).mean()
    return dict(rank=rank, sorted=srt, lorenz=L, gini_area=ga, gini=g, dgini=dg, quintile=quint, palma=palma, theil=theil,
                __stdout__=[f"Gini {g:.5f}, Palma {palma:.4f}, Theil {theil:.5f}"])


# 8 yields to maturity by Newton with integer day counts; durations by @, convexity
def bond_inputs():
    coupon = np.array([0.03, 0.045, 0.06, 0.02, 0.08]); periods = np.int32([6, 14, 25, 3, 40])
    to_next = np.int32([40, 120, 181, 1, 90]); in_period = np.int32([181, 184, 181, 182, 184])
    y = np.array([0.035, 0.05, 0.041, 0.028, 0.07]); w = to_next / in_period
    k = np.arange(40)
    cf = np.where(k[None] >= periods[:, None], 0.0, 50.0 * coupon[:, None]) + np.where(k[None] == periods[:, None] - 1, 100.0, 0.0)
    dirty = (cf / (1 + y[:, None] / 2) ** (k[None] + w[:, None])).sum(1)
    return dict(coupon=coupon, periods=periods, to_next=to_next, in_period=in_period, dirty=dirty)
@case("bond_ytm_newton", inputs=bond_inputs, tol=(1e-9, 1e-10),
      outputs=["ytm", "accrued", "clean", "mod_dur", "mac_dur", "convexity"])
def _(coupon, periods, to_next, in_period, dirty):
    w = to_next / in_period; k = np.arange(40)
    cf = np.where(k[None] >= periods[:, None], 0.0, 50.0 * coupon[:, None]) + np.where(k[None] == periods[:, None] - 1, 100.0, 0.0)
    t = k[None] + w[:, None]; y = coupon.copy()
    for it in range(60):
        v = (cf / (1 + y[:, None] / 2) ** t).sum(1); dv = (-cf * t / 2 / (1 + y[:, None] / 2) ** (t + 1)).sum(1)
        y = y - (v - dirty) / dv
    v = (cf / (1 + y[:, None] / 2) ** t).sum(1); dv = (-cf * t / 2 / (1 + y[:, None] / 2) ** (t + 1)).sum(1)
    md = -dv / v; acc = 50 * coupon * (1 - w)
    conv = (cf * t * (t + 1) / (1 + y[:, None] / 2) ** (t + 2)).sum(1) / (4 * dirty)
    return dict(ytm=y, accrued=acc, clean=dirty - acc, mod_dur=md, mac_dur=md * (1 + y / 2), convexity=conv)


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
