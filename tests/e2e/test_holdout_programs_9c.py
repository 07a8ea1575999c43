"""Hold-out programs, ninth round (economics, finance, queues and Markov chains): value iteration
for a consumption-savings model, Howard policy iteration with linear solves, Lindley's queue
recursion with a derivative in the load, an M/M/1/K chain's stationary law by power iteration, an
absorbing chain's expected times, (s, S) inventory policies, Gini and Lorenz from ranks, bond yields
by Newton, XNPV/XIRR on integer day counts, long-only portfolios with a sorted simplex projection,
Leontief's Neumann series, discrete delta hedging, a tandem queue's max-plus recurrence, rating
migration matrices, a batched AR(1) Kalman likelihood with its Hessian, a loan amortized in i64
cents, Cournot best responses, a CTMC by uniformization, progressive tax on rest axes, logit
Bertrand prices with a derivative rule, a u64 market maker and life-contingency reserves, each
checked against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers and bools
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
    return dict(gap=rg.exponential(1.0, N).astype(np.float32), base=rg.exponential(0.8, N).astype(np.float32),
                load=np.float32(1.05), tau=np.float32(1.5))
@case("lindley_queue", inputs=lq_inputs, tol=(2e-5, 1e-5), vk=True,
      outputs=["W", "depart", "seen", "mean_wait", "dmean_dload", "busy_periods", "longest", "who", "kind",
               "kind_count", "server_util"])
def _(gap, base, load, tau):
    N = len(gap); svc = load * base; W = np.zeros(N, np.float32); dW = np.zeros(N, np.float32)
    for n in range(1, N):   # float32 steps, as the program's
        v = W[n - 1] + svc[n - 1] - gap[n]
        W[n], dW[n] = (v, dW[n - 1] + base[n - 1]) if v > 0 else (0.0, 0.0)
    arrive = np.cumsum(gap, dtype=np.float32); depart = arrive + W + svc
    seen = np.int32([(depart[:n] > arrive[n]).sum() for n in range(N)])
    kind = np.where(W > 0, np.where(W > tau, 2, 1), 0).astype(np.int32)
    who = int(W.argmax()); bp = np.int32((W == 0).sum())
    return dict(W=W, depart=depart, seen=seen, mean_wait=W.mean(), dmean_dload=dW.mean(), busy_periods=bp,
                longest=W.max(), who=np.int32(who), kind=kind, kind_count=np.bincount(kind, minlength=3).astype(np.int32),
                server_util=svc.sum() / (depart[-1] - arrive[0]),
                __stdout__=[f"mean wait {W.mean():.4f}, busy periods {bp}, longest wait at {who}"])


# 4 M/M/1/K stationary distribution by power iteration, d L / d lambda
@case("mm1k_power", inputs=lambda: dict(lam=np.float32(0.8), mu=np.float32(1.0)), tol=(2e-5, 2e-6), vk=True,
      outputs=["P", "pi", "exact", "gap", "L", "blocking", "throughput", "Wsys", "dL_dlam"])
def _(lam, mu):
    K = 10; n = K + 1; lam, mu = np.float64(lam), np.float64(mu); q = lam + mu
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
                __stdout__=[f"L = {L:.4f}, blocking = {blocking:.4f}, W = {L / th:.4f}"])


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
    return dict(demand=rg.poisson(3.5, T).astype(np.int32), pols=pols, hold=np.float32(0.3),
                penalty=np.float32(2.5), fixed=np.float32(4.0))
@case("inventory_sS", inputs=inv_inputs, tol=(1e-6, 1e-5),
      outputs=["start", "sold", "left", "order", "n_orders", "cost", "fill", "best", "label", "stockouts"])
def _(demand, pols, hold, penalty, fixed):
    P, T = len(pols), len(demand); start = np.zeros((P, T), np.int32); sold = start.copy(); left = start.copy(); order = start.copy()
    for p, (s, S) in enumerate(pols):
        for t in range(T):
            start[p, t] = S if t == 0 else left[p, t - 1] + order[p, t - 1]
            sold[p, t] = min(start[p, t], demand[t]); left[p, t] = start[p, t] - sold[p, t]
            order[p, t] = S - left[p, t] if left[p, t] < s else 0
    lost = demand[None] - sold; n_orders = (order > 0).sum(1).astype(np.int64)
    cost = (np.float64(hold) * left + np.float64(penalty) * lost).sum(1) + np.float64(fixed) * n_orders
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


# 9 discounted cash flows on yyyymmdd dates: day counts, XNPV, XIRR by bisection then Newton
def dcf_inputs():
    dates = np.int32([20230115, 20230228, 20230630, 20231231, 20240229, 20240831, 20250131, 20251130, 20260331])
    flows = np.array([-1000.0, -250.0, 120.0, 180.0, 210.0, 260.0, 240.0, 300.0, 350.0])
    return dict(dates=dates, flows=flows, rate=np.float64(0.08))
def dcf_ref(dates, flows, rate, basis):
    import datetime as dtm
    dd = [dtm.date(int(v) // 10000, int(v) // 100 % 100, int(v) % 100) for v in dates]
    days = np.int64([(x - dd[0]).days for x in dd])
    def t360(a, b):
        e1 = min(a.day, 30); e2 = min(b.day, 30) if e1 == 30 else b.day
        return 360 * (b.year - a.year) + 30 * (b.month - a.month) + (e2 - e1)
    yf = days / 365 if basis == 0 else days / 360 if basis == 1 else np.array([t360(dd[0], x) for x in dd]) / 360
    xnpv = lambda r: (flows / (1 + r) ** yf).sum(); dx = lambda r: (-yf * flows / (1 + r) ** (yf + 1)).sum()
    lo, hi = -0.9, 2.0
    for k in range(59):
        mid = 0.5 * (lo + hi); lo, hi = (lo, mid) if xnpv(lo) * xnpv(mid) <= 0 else (mid, hi)
    irr = [0.5 * (lo + hi)]
    for k in range(3): irr.append(irr[-1] - xnpv(irr[-1]) / dx(irr[-1]))
    cum = np.cumsum(flows); pb = int(np.argmax(cum >= 0)) if (cum >= 0).any() else len(flows)
    pbd = days[pb] if pb < len(flows) else -1
    return dict(days=days, yf=yf, npv=xnpv(rate), irr=np.array(irr), payback=np.int32(pb), payback_days=np.int64(pbd),
                __stdout__=[f"XNPV {xnpv(rate):.4f}, XIRR {irr[3]:.8f}, payback after {pbd} days"])
for basis in range(3):
    case(f"dcf_xirr-{basis}", file="dcf_xirr", inputs=lambda b=basis: dict(dcf_inputs(), basis=np.int32(b)), tol=(1e-10, 1e-11),
         outputs=["days", "yf", "npv", "irr", "payback", "payback_days"])(
        lambda dates, flows, rate, basis: dcf_ref(dates, flows, rate, basis))


# 10 long-only mean-variance portfolios: projected gradient, the simplex projection by sorting
def pf_inputs():
    rg = R(910); N = 8; F = rg.standard_normal((N, 3)) * 0.15
    return dict(mu=rg.uniform(0.02, 0.12, N), Sigma=F @ F.T + np.diag(rg.uniform(0.01, 0.04, N)),
                lams=np.array([0.05, 0.3, 1.0, 4.0]), step=np.float64(0.5))
@case("portfolio_sortproj", inputs=pf_inputs, tol=(1e-10, 1e-12), outputs=["w", "ret", "risk", "held"])
def _(mu, Sigma, lams, step):
    N, L, K = len(mu), len(lams), 150
    def project(v):
        u = np.sort(v)[::-1]; css = np.cumsum(u); r = np.arange(1, len(v) + 1)
        last = np.nonzero(u - (css - 1) / r > 0)[0].max(); th = (css[last] - 1) / (last + 1)
        return np.maximum(v - th, 0.0)
    w = [np.full((L, N), 1 / N)]
    for k in range(1, K):
        w.append(np.array([project(w[-1][l] - step * (2 * Sigma @ w[-1][l] - lams[l] * mu)) for l in range(L)]))
    w = np.array(w); wf = w[-1]; held = (wf > 1e-12).sum(1).astype(np.int32)
    return dict(w=w, ret=wf @ mu, risk=np.einsum("li,ij,lj->l", wf, Sigma, wf), held=held,
                __stdout__=[f"assets held per level: {held}"])


# 11 Leontief input-output by the Neumann series
def leo_inputs():
    rg = R(911); S = 6; A = rg.uniform(0, 1, (S, S)) * (rg.uniform(0, 1, (S, S)) < 0.6)
    A *= rg.uniform(0.4, 0.75, S)[None, :] / A.sum(0)[None, :]
    return dict(A=A, d=rg.uniform(10, 50, S), va=1.0 - A.sum(0))
@case("leontief_neumann", inputs=leo_inputs, tol=(1e-9, 1e-10), vk=False,
      outputs=["x", "direct", "gap", "Linv", "multiplier", "backward", "forward", "prices", "total", "dtotal", "key"])
def _(A, d, va):
    S, K = len(A), 120; term = [d]
    for k in range(1, K): term.append(A @ term[-1])
    x = np.cumsum(np.array(term), 0); IA = np.eye(S) - A; direct = np.linalg.solve(IA, d)
    Linv = sum(np.linalg.matrix_power(A, k) for k in range(K)); mult = Linv.sum(0)
    back = mult * S / Linv.sum(); fwd = Linv.sum(1) * S / Linv.sum()
    key = np.int32([j for j in range(S) if back[j] > 1 and fwd[j] > 1]); tot = x[-1].sum()
    return dict(x=x, direct=direct, gap=np.abs(x[-1] - direct).max(), Linv=Linv, multiplier=mult, backward=back, forward=fwd,
                prices=np.linalg.solve(IA.T, va), total=tot, dtotal=mult, key=key,
                __stdout__=[f"total output {tot:.5f}, key sectors {key}"])


# 12 discrete delta hedging of a short call along a given path
def dh_inputs():
    rg = R(912); T = 53; dt = 0.5 / (T - 1)
    path = 100 * np.exp(np.cumsum(np.r_[0, (0.03 - 0.5 * 0.25 ** 2) * dt + 0.25 * np.sqrt(dt) * rg.standard_normal(T - 1)]))
    return dict(path=path, K=np.float64(102.0), r=np.float64(0.03), sigma=np.float64(0.22), tenor=np.float64(0.5))
@case("delta_hedge", inputs=dh_inputs, tol=(1e-10, 1e-10), vk=False,
      outputs=["delta", "premium", "vega", "cash", "final_value", "payoff", "error", "turnover"])
def _(path, K, r, sigma, tenor):
    from math import erf
    T = len(path); dt = tenor / (T - 1); ncdf = np.vectorize(lambda z: 0.5 * (1 + erf(z / np.sqrt(2))))
    tau = tenor - np.arange(T - 1) * dt
    d1 = (np.log(path[:-1] / K) + (r + 0.5 * sigma ** 2) * tau) / (sigma * np.sqrt(tau)); delta = ncdf(d1)
    prem = path[0] * delta[0] - K * np.exp(-r * tenor) * ncdf(d1[0] - sigma * np.sqrt(tenor))
    vega = path[0] * np.sqrt(tenor) * np.exp(-0.5 * d1[0] ** 2) / np.sqrt(2 * np.pi)
    cash = [prem - delta[0] * path[0]]
    for t in range(1, T - 1): cash.append(cash[-1] * np.exp(r * dt) - (delta[t] - delta[t - 1]) * path[t])
    fv = cash[-1] * np.exp(r * dt) + delta[-1] * path[-1]; pay = max(path[-1] - K, 0.0)
    return dict(delta=delta, premium=prem, vega=vega, cash=np.array(cash), final_value=fv, payoff=pay, error=fv - pay,
                turnover=(np.abs(np.diff(delta)) * path[1:-1]).sum(),
                __stdout__=[f"premium {prem:.5f}, hedging error {fv - pay:.5f}"])


# 13 tandem queue: a two-dimensional max-plus recurrence and the makespan's critical services by @
def tq_inputs():
    rg = R(913); K, C = 4, 30
    return dict(arrive=np.cumsum(rg.exponential(1.0, C)).astype(np.float32),
                service=(rg.exponential(1.0, (K, 1)) * rg.uniform(0.5, 1.2, (K, C))).astype(np.float32))
@case("tandem_queue", inputs=tq_inputs, tol=(1e-6, 1e-6),
      outputs=["D", "wait", "station_wait", "bottleneck", "makespan", "critical", "on_path", "throughput"])
def _(arrive, service):
    K, C = service.shape; D = np.zeros((K, C), np.float32); ready = np.zeros((K, C), np.float32)
    for k in range(K):   # float32 scalars throughout: max and + round as the program's do
        for n in range(C):
            ready[k, n] = arrive[n] if k == 0 else D[k - 1, n]
            D[k, n] = max(ready[k, n], D[k, n - 1] if n else np.float32(-np.inf)) + service[k, n]
    wait = D - service - ready; sw = wait.astype(np.float64).mean(1)
    crit = np.zeros((K, C)); k, n = K - 1, C - 1
    while True:  # walk the arg-max chain back from the last departure
        crit[k, n] = 1
        up = D[k - 1, n] if k else arrive[n]; left = D[k, n - 1] if n else -np.inf
        if left > up: n -= 1
        elif k: k -= 1
        else: break
    on = np.int32((crit > 0.5).sum()); ms = D[-1, -1]; bn = int(sw.argmax())
    return dict(D=D, wait=wait, station_wait=sw, bottleneck=np.int32(bn), makespan=ms, critical=crit, on_path=on,
                throughput=(C - 1) / np.float64(D[-1, -1] - D[-1, 0]),
                __stdout__=[f"makespan {ms:.4f}, bottleneck station {bn}, {on} critical services"])


# 14 rating migration: counts from u8 histories, multi-year matrices, default curves, expected loss
def rm_inputs():
    rg = R(914); G = 8; T = np.zeros((G, G))
    for i in range(G - 1):
        w = np.exp(-1.3 * np.abs(np.arange(G) - i)); w[G - 1] = 0.004 * 2.2 ** i; T[i] = w / w.sum()
    T[G - 1, G - 1] = 1; F, Y = 120, 9; hist = np.zeros((F, Y), np.uint8); hist[:, 0] = rg.integers(0, 7, F)
    for y in range(1, Y):
        for f in range(F): hist[f, y] = rg.choice(G, p=T[hist[f, y - 1]])
    B = 15
    return dict(hist=hist, book_rating=rg.integers(0, 7, B).astype(np.uint8), exposure=rg.uniform(1, 10, B))
@case("rating_migration", inputs=rm_inputs, tol=(1e-12, 1e-13),
      outputs=["counts", "leaving", "M", "Mh", "pd", "marginal", "expected_loss", "investment", "rows_ok"])
def _(hist, book_rating, exposure):
    G, H = 8, 10; counts = np.zeros((G, G), np.int16)
    np.add.at(counts, (hist[:, :-1].ravel(), hist[:, 1:].ravel()), 1)
    leaving = counts.sum(1, dtype=np.int32); M = np.eye(G)
    for i in range(G - 1):
        if leaving[i]: M[i] = counts[i] / leaving[i]
    Mh = [M]
    for h in range(1, H): Mh.append(Mh[-1] @ M)
    Mh = np.array(Mh); pd = Mh[:, :, G - 1]; marg = np.diff(pd, axis=0, prepend=0)
    lgd = np.array([0.35, 0.35, 0.45, 0.45, 0.55, 0.55, 0.65, 0.0])[book_rating]
    el = (exposure * lgd * pd[:, book_rating]).sum(1)
    return dict(counts=counts, leaving=leaving, M=M, Mh=Mh, pd=pd, marginal=marg, expected_loss=el,
                investment=exposure[book_rating <= 3].sum(), rows_ok=np.bool_(True),
                __stdout__=[f"five-year expected loss {el[4]:.4f}"])


# 15 AR(1) plus noise over a batch of series: log-likelihood, gradient, Hessian by @ of @, a Newton step
def ar_inputs():
    rg = R(915); B, T, phi, q, r = 4, 40, 0.7, 0.5, 0.3
    x = np.zeros((B, T)); x[:, 0] = rg.normal(0, np.sqrt(q / (1 - phi ** 2)), B)
    for t in range(1, T): x[:, t] = phi * x[:, t - 1] + rg.normal(0, np.sqrt(q), B)
    return dict(y=x + rg.normal(0, np.sqrt(r), (B, T)), th0=np.array([0.6, -0.4, -1.0]))
def ar_filter(y, th):
    phi, q, r = np.tanh(th[0]), np.exp(th[1]), np.exp(th[2]); B, T = y.shape
    P0 = q / (1 - phi * phi); S = P0 + r; m = P0 / S * y[:, 0]; P = P0 * r / S
    ll = -0.5 * (np.log(2 * np.pi * S) + y[:, 0] ** 2 / S).sum(); ms = [m]
    for t in range(1, T):
        Pp = phi * phi * P + q; S = Pp + r; v = y[:, t] - phi * m
        ll = ll - 0.5 * (np.log(2 * np.pi * S) + v * v / S).sum(); m = phi * m + Pp / S * v; P = Pp * r / S; ms.append(m)
    return ll, np.array(ms).T, phi
@case("ar1_kalman_batch", inputs=ar_inputs, tol=(2e-6, 1e-7), outputs=["ll0", "g0", "Hs", "th1", "ll1", "m1", "forecast"])
def _(y, th0):
    # the gradient by complex steps (exact to rounding), the Hessian by central differences of it
    def grad(th):
        return np.array([ar_filter(y, th + 1e-30j * np.eye(3)[i])[0].imag / 1e-30 for i in range(3)])
    g0 = grad(th0); h = 1e-5
    Hs = np.array([(grad(th0 + h * np.eye(3)[j]) - grad(th0 - h * np.eye(3)[j])) / (2 * h) for j in range(3)]).T
    th1 = th0 - np.linalg.solve(Hs, g0); ll0 = ar_filter(y, th0)[0].real
    ll1, m1, phi1 = ar_filter(y, th1)
    return dict(ll0=ll0, g0=g0, Hs=Hs, th1=th1, ll1=ll1, m1=m1, forecast=phi1 * m1[:, -1],
                __stdout__=[f"log-likelihood {ll0:.4f} -> {ll1:.4f}"])


# 16 a loan amortized in i64 cents, the APR with fees by Newton
@case("loan_amortization", inputs=lambda: dict(principal_cents=np.int64(2_500_000), annual_rate=np.float64(0.0725),
                                              fee_cents=np.int64(45_000)), tol=(1e-11, 1e-13),
      outputs=["payment", "interest", "paid", "balance", "total_interest", "last_payment", "rm", "apr"])
def _(principal_cents, annual_rate, fee_cents):
    n, r = 36, annual_rate / 12
    pay = int(float(principal_cents) * r / (1 - (1 + r) ** (-n)) + 0.5)
    bal, inte, paid = [int(principal_cents)], [0], [0]
    for m in range(1, n + 1):
        i = int(bal[-1] * r + 0.5); p = bal[-1] + i if m == n else pay
        inte.append(i); paid.append(p); bal.append(bal[-1] + i - p)
    paid_f = np.array(paid[1:], float); mm = np.arange(1, n + 1)
    pv = lambda x: (paid_f / (1 + x) ** mm).sum() - float(principal_cents - fee_cents)
    dpv = lambda x: (-mm * paid_f / (1 + x) ** (mm + 1)).sum()
    rm = [r]
    for k in range(7): rm.append(rm[-1] - pv(rm[-1]) / dpv(rm[-1]))
    ti = sum(inte); apr = 12 * rm[-1]
    return dict(payment=np.int64(pay), interest=np.int64(inte), paid=np.int64(paid), balance=np.int64(bal),
                total_interest=np.int64(ti), last_payment=np.int64(paid[-1]), rm=np.array(rm), apr=apr,
                __stdout__=[f"payment {pay} cents, last {paid[-1]}, interest {ti}, APR {apr:.6f}"])


# 17 Cournot equilibrium by damped best responses
@case("cournot_best_response", inputs=lambda: dict(cost=np.array([10.0, 12.0, 15.0, 30.0, 11.0]), a=np.float64(60.0),
                                                  b=np.float64(1.5), damp=np.float64(0.5)), tol=(1e-10, 1e-10),
      outputs=["q", "active", "n_active", "closed", "gap", "marginal", "share", "hhi", "label"])
def _(cost, a, b, damp):
    F, K = len(cost), 200; q = [np.zeros(F)]
    for k in range(1, K):
        tot = q[-1].sum(); q.append((1 - damp) * q[-1] + damp * np.maximum((a - cost - b * (tot - q[-1])) / (2 * b), 0.0))
    q = np.array(q); qe = q[-1]; act = qe > 1e-9; na = int(act.sum())
    pc = (a + cost[act].sum()) / (na + 1); closed = np.where(act, (pc - cost) / b, 0.0)
    Q = qe.sum(); marg = a - b * Q - b * qe - cost; share = qe / Q
    label = np.where(act, np.where(share > 0.2, 2, 1), 0).astype(np.int32); hhi = (share ** 2).sum() * 1e4
    return dict(q=q, active=act, n_active=np.int32(na), closed=closed, gap=np.abs(qe - closed).max(), marginal=marg,
                share=share, hhi=hhi, label=label, __stdout__=[f"{na} active firms, price {a - b * Q:.5f}, HHI {hhi:.1f}"])


# 18 a repairable system as a CTMC: transient laws by uniformization, d availability / d failure rate
def ctmc_ref(fail, repair, times, reward):
    G = np.zeros((4, 4), complex)
    for i in range(4):
        if i > 0: G[i, i - 1] = i * fail
        if i < 3: G[i, i + 1] = repair
        G[i, i] = -G[i].sum()
    lam = 3 * fail + repair; Pu = np.eye(4) + G / lam
    v = [np.eye(4)[3].astype(complex)]
    for m in range(1, 80): v.append(v[-1] @ Pu)
    v = np.array(v); w = np.zeros((len(times), 80), complex); w[:, 0] = np.exp(-lam * times)
    for m in range(1, 80): w[:, m] = w[:, m - 1] * lam * times / m
    p = w @ v
    return p, 1 - p[:, 0], p @ reward
@case("ctmc_uniformization", inputs=lambda: dict(fail=np.float64(0.2), repair=np.float64(1.1),
                                                times=np.array([0.5, 1.0, 2.5, 5.0]), reward=np.array([0.0, 4.0, 7.0, 9.0])),
      tol=(1e-10, 1e-12), outputs=["Gm", "v", "w", "p", "available", "rate", "dav_dfail", "mass"])
def _(fail, repair, times, reward):
    p, av, rate = ctmc_ref(fail, repair, times, reward)
    dav = ctmc_ref(fail + 1e-30j, repair, times, reward)[1].imag / 1e-30    # complex step: exact to rounding
    G = np.zeros((4, 4))
    for i in range(4):
        if i > 0: G[i, i - 1] = i * fail
        if i < 3: G[i, i + 1] = repair
        G[i, i] = -G[i].sum()
    lam = 3 * fail + repair; v = [np.eye(4)[3]]
    for m in range(1, 80): v.append(v[-1] @ (np.eye(4) + G / lam))
    w = np.zeros((len(times), 80)); w[:, 0] = np.exp(-lam * times)
    for m in range(1, 80): w[:, m] = w[:, m - 1] * lam * times / m
    return dict(Gm=G, v=np.array(v), w=w, p=p.real, available=av.real, rate=rate.real, dav_dfail=dav,
                mass=np.abs(p.real.sum(1) - 1).max(), __stdout__=[f"availability {av.real}"])


# 19 progressive tax over households on rest axes: brackets, a phase-out credit, marginal rates by @
def tax_inputs():
    return dict(income=np.round(R(919).lognormal(11.0, 0.6, (4, 6)), 2), lower=np.array([0.0, 11000.0, 44725.0, 95375.0, 182100.0]),
                rate=np.array([0.10, 0.12, 0.22, 0.24, 0.32]), credit_max=np.float64(1500.0), phase_start=np.float64(30000.0),
                phase_rate=np.float64(0.05))
@case("tax_brackets", inputs=tax_inputs, tol=(1e-12, 1e-9), outputs=["tax", "marginal", "after", "top", "band", "rich_rate"])
def _(income, lower, rate, credit_max, phase_start, phase_rate):
    upper = np.r_[lower[1:], 1e12]
    inside = np.maximum(np.minimum(income[..., None], upper) - lower, 0.0)
    credit = np.maximum(credit_max - phase_rate * np.maximum(income - phase_start, 0.0), 0.0)
    tax = (rate * inside).sum(-1) - credit
    dcredit = np.where((credit > 0) & (income > phase_start), -phase_rate, 0.0)
    marg = (rate * ((income[..., None] > lower) & (income[..., None] < upper))).sum(-1) - dcredit
    top = ((income[..., None] > lower).sum(-1) - 1).astype(np.int32)
    band = np.where(lower[top] == 0.0, 0, np.where(rate[top] > 0.3, 2, 1)).astype(np.int32)
    rich = (tax / income)[income > 90000.0]
    return dict(tax=tax, marginal=marg, after=(1 - tax / income) * income, top=top, band=band, rich_rate=rich.mean(),
                __stdout__=[f"{len(rich)} households above 90000, mean rate {rich.mean():.5f}"])


# 20 logit Bertrand-Nash prices; consumer surplus with its own derivative rule, Roy's identity by @
def lb_inputs():
    rg = R(920)
    return dict(xq=rg.uniform(0.5, 2.0, (3, 4)), cost=rg.uniform(0.5, 1.5, (3, 4)), alpha=np.float64(1.3), bq=np.float64(1.1))
@case("logit_bertrand", inputs=lb_inputs, tol=(1e-10, 1e-12),
      outputs=["p", "se", "foc", "cs", "total_cs", "roy", "elastic", "divert", "lerner"])
def _(xq, cost, alpha, bq):
    def shares(p):
        e = np.exp(bq * xq - alpha * p); return e / (1 + e.sum(1, keepdims=True))
    p = [cost]
    for k in range(1, 120): p.append(cost + 1 / (alpha * (1 - shares(p[-1]))))
    p = np.array(p); pe = p[-1]; se = shares(pe)
    foc = np.abs(pe - cost - 1 / (alpha * (1 - se))).max()
    cs = np.log(1 + np.exp(bq * xq - alpha * pe).sum(1)) / alpha
    div = se[:, None, :] / (1 - se[:, :, None]); div[:, np.arange(4), np.arange(4)] = 0
    return dict(p=p, se=se, foc=foc, cs=cs, total_cs=cs.sum(), roy=-se, elastic=-alpha * pe * (1 - se), divert=div,
                lerner=(pe - cost) / pe,
                __stdout__=[f"mean price {pe.mean():.5f}, surplus {cs.sum():.5f}"])


# 21 a constant-product market maker in u64 units on a tape of swaps
def amm_inputs():
    rg = R(921); T = 30
    return dict(tape=np.stack([rg.integers(0, 2, T), rg.integers(1_000, 4_000_000, T)], 1).astype(np.int32),
                x0=np.uint64(1_500_000_000), y0=np.uint64(2_700_000_000))
@case("amm_swaps", inputs=amm_inputs, tol=(1e-12, 1e-9), vk=False,
      outputs=["amount", "got", "rx", "ry", "k", "k_grows", "spot", "impact_bp", "worst", "fee_kept"])
def _(tape, x0, y0):
    T = len(tape); rx, ry, got = [int(x0)], [int(y0)], []
    for d, a in tape:
        a = int(a)
        if d == 0:
            o = a * 997 * ry[-1] // (rx[-1] * 1000 + a * 997); got.append(o); rx.append(rx[-1] + a); ry.append(ry[-1] - o)
        else:
            o = a * 997 * rx[-1] // (ry[-1] * 1000 + a * 997); got.append(o); rx.append(rx[-1] - o); ry.append(ry[-1] + a)
    k = [a * b for a, b in zip(rx, ry)]
    assert max(k) < 2 ** 64 and 4_000_000 * 997 * max(rx + ry) < 2 ** 64   # no u64 product wraps
    spot = np.array(ry, float) / np.array(rx, float); imp = np.abs(np.diff(spot) / spot[:-1]) * 1e4
    fee = [sum(int(a) * 3 // 1000 for dd, a in tape if dd == d) for d in range(2)]
    return dict(amount=tape[:, 1].astype(np.uint64), got=np.uint64(got), rx=np.uint64(rx), ry=np.uint64(ry), k=np.uint64(k),
                k_grows=np.bool_(all(k[t] >= k[t - 1] for t in range(1, T + 1))), spot=spot, impact_bp=imp,
                worst=np.int32(imp.argmax()), fee_kept=np.uint64(fee),
                __stdout__=[f"final reserves {rx[-1]} / {ry[-1]}, worst trade {int(imp.argmax())}"])


# 22 life contingencies: commutation columns, annuities, net premiums, Fackler reserves, d premium / d i
def life_inputs():
    x = np.arange(60); q = np.minimum(0.0005 * np.exp(0.085 * (x + 40)) / 10, 0.6); q[-1] = 1.0
    return dict(q=q, i_rate=np.float64(0.035))
def life_ref(q, i_rate, issue):
    W = len(q); v = 1 / (1 + i_rate); l = np.r_[1e5, 1e5 * np.cumprod(1 - q[:-1])]; d = l * q
    x = np.arange(W); D = v ** x * l; N = np.cumsum(D[::-1])[::-1]; C = v ** (x + 1) * d; M = np.cumsum(C[::-1])[::-1]
    return l, D, N, C, M, M[issue] / N[issue]
@case("life_annuity", inputs=life_inputs, tol=(1e-10, 1e-12),
      outputs=["l", "D", "N", "M", "annuity", "insurance", "premium", "dprem_di", "V", "prospective", "gap"])
def _(q, i_rate, issue=12):
    W = len(q); l, D, N, C, M, prem = life_ref(q, i_rate, issue)
    dprem = life_ref(q, i_rate + 1e-30j, issue)[5].imag / 1e-30     # complex step
    ann, ins = N / D, M / D; V = [0.0]
    for k in range(1, W - issue):
        x = issue + k - 1; V.append(((V[-1] + prem) * (1 + i_rate) - q[x]) / (1 - q[x]))
    V = np.array(V); pros = ins[issue:] - prem * ann[issue:]
    return dict(l=l, D=D, N=N, M=M, annuity=ann, insurance=ins, premium=prem, dprem_di=dprem, V=V, prospective=pros,
                gap=np.abs(V - pros)[:-1].max(), __stdout__=[f"premium per unit at {issue}: {prem:.6f}"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
