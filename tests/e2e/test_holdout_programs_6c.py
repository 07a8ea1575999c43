"""Hold-out programs, sixth round (algorithms, control, signal processing and finance): dynamic
programs over intervals, subsets and amounts (optimal BST, egg dropping, coin change in u64, subset
sums as bitsets, Held-Karp over 2^n masks), graphs on dense adjacency, strings as integer arrays,
estimation and control recurrences, spectral estimates and Monte Carlo / lattice pricing, each
checked against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers
and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 optimal BST by interval length, its root table, the depth of each key
def obst_inputs():
    rg = R(601); K = 9
    return dict(p=rg.uniform(0.02, 0.2, K), q=rg.uniform(0.01, 0.1, K + 1))
@case("optimal_bst", inputs=obst_inputs, tol=(1e-12, 1e-12), outputs=["E", "root", "cost", "depth", "check"])
def _(p, q):
    K = len(p); E = np.zeros((K + 1, K + 1)); root = np.full((K + 1, K), -1, np.int32)
    E[0] = q
    for l in range(1, K + 1):
        for i in range(K + 1 - l):
            w = p[i:i + l].sum() + q[i:i + l + 1].sum()
            cand = [E[r - i, i] + E[i + l - 1 - r, r + 1] for r in range(i, i + l)]
            E[l, i] = min(cand) + w
            root[l, i] = i + int(np.argmin(cand))
    def depth(key):
        lo, hi, d = 0, K, 0
        while root[hi - lo, lo] != key:
            r = root[hi - lo, lo]; lo, hi = (r + 1, hi) if r < key else (lo, r); d += 1
        return d
    dep = np.int32([depth(k) for k in range(K)])
    root[0] = 0
    return dict(E=E, root=root, cost=E[K, 0], depth=dep, check=(p * (dep + 1)).sum(),
                __stdout__=[f"optimal BST cost {E[K, 0]:.4f}"])


# 2 egg dropping: drops table, first drop, floors covered by t drops, run-time queries
@case("egg_drop", inputs=lambda: dict(queries=np.int32([[1, 10], [2, 36], [2, 80], [3, 80], [0, 5], [4, 0], [9, 57], [5, 1]])),
      outputs=["D", "first", "C", "fewest", "answer"])
def _(queries):
    E, F = 5, 80; D = np.zeros((E + 1, F + 1), np.int64); D[0, 1:] = 1000000
    first = np.zeros((E + 1, F + 1), np.int32)
    for e in range(1, E + 1):
        for f in range(1, F + 1):
            c = [1 + max(D[e - 1, k - 1], D[e, f - k]) for k in range(1, f + 1)]
            D[e, f] = min(c); first[e, f] = 1 + int(np.argmin(c))
    C = np.zeros((F + 1, E + 1), np.int64)
    for t in range(1, F + 1):
        C[t, 1:] = C[t - 1, :-1] + C[t - 1, 1:] + 1
    fewest = np.int32([0] + [next((t for t in range(1, F + 1) if C[t, e] >= F), F + 1) for e in range(1, E + 1)])
    ans = np.int32([-1 if e == 0 else 0 if f == 0 else D[min(e, E), f] for e, f in queries])
    return dict(D=D.astype(np.int32), first=first, C=C.astype(np.int32), fewest=fewest, answer=ans)


# 3 coin change: combinations (u64), compositions (wrapping u64), fewest coins, greedy
@case("coin_change", inputs=lambda: dict(coins=np.int32([1, 3, 4, 7, 10, 25])),
      outputs=["ways", "ordered", "fewest", "largest", "greedy", "worse", "n_worse", "total_ways"])
def _(coins):
    A, INF, C = 120, 1000000, len(coins); M = 2 ** 64
    ways = [[1 if a == 0 else 0 for a in range(A + 1)]]
    for c in range(1, C + 1):
        row = []
        for a in range(A + 1):
            row.append(ways[c - 1][a] + (row[a - coins[c - 1]] if coins[c - 1] <= a else 0))
        ways.append(row)
    ordered = [1]
    for a in range(1, A + 1):
        ordered.append(sum(ordered[a - c] for c in coins if c <= a) % M)
    fewest = [0]; greedy = [0]; largest = [0]
    for a in range(1, A + 1):
        fewest.append(min([INF] + [fewest[a - c] + 1 for c in coins if c <= a]))
        lg = max([0] + [int(c) for c in coins if c <= a]); largest.append(lg)
        greedy.append(greedy[a - lg] + 1 if lg > 0 else INF)
    worse = [a for a in range(1, A + 1) if greedy[a] > fewest[a]]
    return dict(ways=np.array(ways, np.uint64), ordered=np.array(ordered, np.uint64), fewest=np.int32(fewest),
                largest=np.int32(largest), greedy=np.int32(greedy), worse=np.int32(worse),
                n_worse=np.int32(len(worse)), total_ways=np.uint64(ways[C][A]))


# 4 subset sums as a bitset packed in u64 words, the best partition and one subset reaching it
@case("subset_bitset", inputs=lambda: dict(w=R(604).integers(1, 16, 12).astype(np.int32)),
      outputs=["reach", "words", "count", "total", "best", "target", "left", "taken"])
def _(w):
    N, S = len(w), 192; reach = np.zeros((N + 1, S), bool); reach[0, 0] = True
    for i in range(1, N + 1):
        reach[i] = reach[i - 1]; reach[i, w[i - 1]:] |= reach[i - 1, :S - w[i - 1]]
    words = (reach.reshape(N + 1, 3, 64) * (np.uint64(1) << np.arange(64, dtype=np.uint64))).sum(2, dtype=np.uint64)
    total = int(w.sum()); gap = np.where(reach[N], np.abs(total - 2 * np.arange(S)), 1000000)
    best = gap.min(); target = int(np.argmax(gap == best)); left = [target]
    for u in range(1, N + 1):
        i = N + 1 - u; l = left[-1]; left.append(l if reach[i - 1, l] else l - w[i - 1])
    left = np.int32(left)
    return dict(reach=reach, words=words, count=reach.sum(1).astype(np.int32), total=np.int32(total), best=np.int32(best),
                target=np.int32(target), left=left, taken=np.array([left[N - j] != left[N - j - 1] for j in range(N)]))


# 5 Held-Karp TSP over 128 masks, layered by path length, with the tour recovered backward
@case("tsp_bitmask", inputs=lambda: dict(xy=R(605).uniform(0, 10, (7, 2))), tol=(1e-12, 1e-12),
      outputs=["d", "dp", "tour", "last", "at", "mask", "order", "length"])
def _(xy):
    n, INF = 7, 1e30; d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(2))
    has = lambda m, j: (m >> j) & 1 == 1
    dp = np.full((n, 128, n), INF); dp[0, 1, 0] = 0.0
    for s in range(1, n):
        for m in range(128):
            for j in range(n):
                if j != 0 and has(m, j) and has(m, 0):
                    dp[s, m, j] = min(dp[s - 1, m - (1 << j), k] + d[k, j] if k != j and has(m, k) else INF for k in range(n))
    ends = [dp[6, 127, j] + d[j, 0] for j in range(1, n)]; tour = min(ends); last = 1 + int(np.argmin(ends))
    at, mask = [last], [127]
    for u in range(1, n):
        a, m = at[-1], mask[-1]; m2 = m - (1 << a)
        at.append(next((k for k in range(n) if k != a and has(m2, k) and dp[6 - u, m2, k] + d[k, a] == dp[7 - u, m, a]), n))
        mask.append(m2)
    order = at[::-1]
    return dict(d=d, dp=dp, tour=tour, last=np.int32(last), at=np.int32(at), mask=np.int32(mask), order=np.int32(order),
                length=sum(d[order[i], order[(i + 1) % n]] for i in range(n)))


# 6 critical path in a topologically numbered DAG: finish times, u64 path counts, the chain, slack
def dag_inputs():
    rg = R(606); V = 14; adj = np.triu(rg.random((V, V)) < 0.3, 1); adj[3, 9] = True
    return dict(adj=adj | np.tril(rg.random((V, V)) < 0.2, -1), dur=np.round(rg.uniform(1, 6, V), 1))
@case("dag_critical_path", inputs=dag_inputs, tol=(1e-12, 1e-12),
      outputs=["finish", "paths", "makespan", "end", "best_pred", "chain", "on_chain", "late", "slack", "critical"])
def _(adj, dur):
    V = len(dur); ok = np.triu(adj, 1); fin = np.zeros(V); paths = np.zeros(V, np.uint64)
    for j in range(V):
        pr = np.nonzero(ok[:j, j])[0]
        fin[j] = dur[j] + max([0.0] + [fin[i] for i in pr])
        paths[j] = sum(int(paths[i]) for i in pr) if len(pr) else 1
    ms = fin.max(); end = int(np.argmax(fin == ms))
    bp = np.int32([next((i for i in range(V) if ok[i, j] and fin[i] == fin[j] - dur[j]), V) for j in range(V)])
    chain = [end]
    for _ in range(1, V):
        chain.append(bp[chain[-1]] if chain[-1] < V else V)
    late = np.zeros(V); late[V - 1] = ms - dur[V - 1]
    for j in range(V - 2, -1, -1):
        late[j] = min([ms] + [late[k] for k in range(j + 1, V) if ok[j, k]]) - dur[j]
    slack = late - (fin - dur)
    crit = np.int32([j for j in range(V) if slack[j] < 1e-9])
    return dict(finish=fin, paths=paths, makespan=ms, end=np.int32(end), best_pred=bp, chain=np.int32(chain),
                on_chain=np.isin(np.arange(V), chain), late=late[::-1], slack=slack, critical=crit,
                __stdout__=[f"makespan {ms:.3f} over {len(crit)} critical nodes"])


# 7 BFS levels as a min-plus recurrence, Prim's MST with keys and parents per step
def prim_inputs():
    rg = R(607); V = 16; W = rg.uniform(1, 9, (V, V)) * (rg.random((V, V)) < 0.35)
    W = np.triu(W, 1); W = W + W.T
    for v in range(1, V):     # a chain keeps it connected
        W[v - 1, v] = W[v, v - 1] = W[v - 1, v] or 9.5
    return dict(W=W.astype(np.float32), src=np.int32(5))
@case("bfs_prim", inputs=prim_inputs, tol=(1e-6, 1e-5), vk=True,
      outputs=["level", "reached", "frontier", "pick", "tree_parent", "weight", "key"])
def _(W, src):
    V = len(W); BIG, INF = 1000000, np.float32(1e9); edge = (W > 0) & ~np.eye(V, dtype=bool)
    lvl = np.full(V, BIG); lvl[src] = 0
    for _ in range(1, V):
        lvl = np.minimum(lvl, np.array([min([BIG] + [lvl[u] + 1 for u in range(V) if edge[u, v] and lvl[u] < BIG]) for v in range(V)]))
    cost = np.where(edge, W, INF); tree = np.arange(V) == 0; key = cost[0].copy(); par = np.where(edge[0], 0, -1)
    keys, picks = [key.copy()], [0]
    for t in range(1, V):
        best = np.where(tree, INF * 2, key).min(); p = int(np.argmax(~tree & (key == best)))
        picks.append(p); tree = tree.copy(); tree[p] = True
        better = ~tree & (cost[p] < key); par = np.where(better, p, par); key = np.where(better, cost[p], key); keys.append(key.copy())
    keys = np.array(keys); tp = par.copy(); tp[0] = -1
    return dict(level=lvl.astype(np.int32), reached=np.int32((lvl < BIG).sum()),
                frontier=np.int32([(lvl == d).sum() for d in range(V)]), pick=np.int32(picks), tree_parent=tp.astype(np.int32),
                weight=sum(keys[t - 1, picks[t]] for t in range(1, V)), key=keys)


# 8 strongly connected components through a closure by squaring, condensation edges
def scc_inputs():
    rg = R(608); V = 15; A = rg.random((V, V)) < 0.09
    for cyc in ([0, 4, 7], [2, 9, 11, 13], [5, 6]):
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            A[a, b] = True
    return dict(A=A)
@case("scc_reach", inputs=scc_inputs, outputs=["reach", "same", "comp", "is_rep", "n_comp", "size", "cond", "sources", "largest"])
def _(A):
    V = len(A); R_ = A | np.eye(V, dtype=bool)
    for _ in range(4):
        R_ = (R_.astype(int) @ R_.astype(int)) > 0
    same = R_ & R_.T; comp = np.argmax(same, 1).astype(np.int32); rep = comp == np.arange(V)
    size = np.int32([(comp == i).sum() for i in range(V)])
    cond = np.zeros((V, V), bool)
    for i, j in zip(*np.nonzero(A)):
        if comp[i] != comp[j]:
            cond[comp[i], comp[j]] = True
    return dict(reach=R_, same=same, comp=comp, is_rep=rep, n_comp=np.int32(rep.sum()), size=size, cond=cond,
                sources=np.int32(sum(rep[a] and not cond[:, a].any() for a in range(V))), largest=np.int32(size.max()))


# 9 Edmonds-Karp max flow with a bounded number of rounds, flow conservation, the min cut
def flow_inputs():
    rg = R(609); V = 10; cap = rg.integers(1, 12, (V, V)) * (rg.random((V, V)) < 0.35)
    np.fill_diagonal(cap, 0)
    return dict(cap=cap.astype(np.int32), s=np.int32(0), t=np.int32(V - 1))
@case("max_flow", inputs=flow_inputs, outputs=["flow", "value", "conserved", "feasible", "cut_side", "cut"])
def _(cap, s, t):
    V = len(cap); s, t = int(s), int(t)
    def parents(F):
        res = cap - F + F.T; par = [s if v == s else -1 for v in range(V)]
        for _ in range(1, V):
            par = [par[v] if par[v] != -1 else next((u for u in range(V) if par[u] != -1 and res[u, v] > 0), -1) for v in range(V)]
        return par
    flows = [np.zeros((V, V), np.int64)]
    for _ in range(1, 12):
        F = flows[-1]; p = parents(F)
        if p[t] == -1:
            flows.append(F); continue
        path, v = [], t
        while v != s:
            path.append((p[v], v)); v = p[v]
        res = cap - F + F.T; push = min(res[i, j] for i, j in path); G = F.copy()
        for i, j in path:
            c = min(push, F[j, i]); G[j, i] -= c; G[i, j] += push - c
        flows.append(G)
    F = flows[-1]; side = np.array(parents(F)) != -1
    return dict(flow=np.array(flows, np.int32), value=np.int32(F[s].sum() - F[:, s].sum()), conserved=np.bool_(True),
                feasible=np.bool_(True), cut_side=side, cut=np.int32(cap[side][:, ~side].sum()))


# 10 KMP failure function, Z-array, the KMP automaton run over a text, match positions
def kmp_inputs():
    rg = R(610); pat = np.int32([0, 1, 0, 1, 2, 0, 1, 0])
    text = rg.integers(0, 3, 90).astype(np.int32)
    for at in (5, 30, 34, 70):
        text[at:at + 8] = pat
    text[40:52] = [0, 1, 0, 1, 0, 1, 2, 0, 1, 0, 1, 2]
    return dict(pat=pat, text=text)
@case("kmp_z", inputs=kmp_inputs, outputs=["fail", "Z", "delta", "state", "found", "starts", "count"])
def _(pat, text):
    M, N = len(pat), len(text); p = list(pat)
    fail = [0] + [max(l for l in range(i + 1) if p[:l] == p[i + 1 - l:i + 1]) for i in range(1, M)]
    Z = [M] + [next((k for k in range(M) if i + k >= M or p[i + k] != p[k]), M) for i in range(1, M)]
    delta = np.int32([[max(l for l in range(min(M, q + 1) + 1) if (p[:q] + [c])[q + 1 - l:] == p[:l])
                       for c in range(4)] for q in range(M + 1)])
    st = [delta[0, text[0]]]
    for t in range(1, N):
        q = st[-1]; st.append(delta[fail[M - 1] if q == M else q, text[t]])
    found = np.array(st) == M
    return dict(fail=np.int32(fail), Z=np.int32(Z), delta=delta, state=np.int32(st), found=found,
                starts=np.int32(np.nonzero(found)[0] + 1 - M), count=np.int32(found.sum()))


# 11 suffix array by prefix doubling, LCP of neighbours, BWT with a sentinel and its runs
def sa_inputs():
    rg = R(611); base = rg.integers(0, 3, 9)
    return dict(s=np.concatenate([base, base, rg.integers(0, 4, 7), base[:5], [1, 1, 1, 1]]).astype(np.int32))
@case("suffix_array", inputs=sa_inputs, vk=True, outputs=["rank", "sa", "lcp", "bwt", "new_run", "run_id", "runs", "run_len", "longest_repeat"])
def _(s):
    N = len(s); r = s.astype(np.int64).copy(); ranks = [r.copy()]
    for st in range(1, 6):
        h = 2 ** (st - 1); sec = np.array([r[x + h] if x + h < N else -1 for x in range(N)])
        r = np.array([sum((r[j], sec[j]) < (r[i], sec[i]) for j in range(N)) for i in range(N)]); ranks.append(r)
    sa = np.argsort(r)
    lcp = [0] + [next((m for m in range(N) if sa[k] + m >= N or sa[k - 1] + m >= N or s[sa[k] + m] != s[sa[k - 1] + m]), N) for k in range(1, N)]
    bwt = np.int32([s[N - 1]] + [-1 if x == 0 else s[x - 1] for x in sa])
    new = np.r_[True, bwt[1:] != bwt[:-1]]; rid = np.cumsum(new) - 1
    return dict(rank=np.int32(ranks), sa=sa.astype(np.int32), lcp=np.int32(lcp), bwt=bwt, new_run=new, run_id=rid.astype(np.int32),
                runs=np.int32(rid[-1] + 1), run_len=np.int32([(rid == g).sum() for g in range(N + 1)]), longest_repeat=np.int32(max(lcp)))


# 12 Welch PSD with Hann windows, the analytic signal by the DFT, envelope and instantaneous frequency
def welch_inputs():
    rg = R(612); N, fs = 256, 100.0; t = np.arange(N) / fs
    x = (1 + 0.5 * np.sin(2 * np.pi * 0.7 * t)) * np.cos(2 * np.pi * 12.5 * t + 0.3) + 0.2 * rg.standard_normal(N)
    return dict(x=x, fs=np.float64(fs))
@case("welch_hilbert", inputs=welch_inputs, tol=(1e-8, 1e-9),
      outputs=["win", "U", "psd", "freq", "peak", "peak_bin", "zr", "zi", "envelope", "inst_freq"])
def _(x, fs):
    N, L, H = len(x), 32, 16; S = (N - L) // H + 1
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(L) / L); U = (win ** 2).sum()
    segs = np.array([(x[s * H:s * H + L] - x[s * H:s * H + L].mean()) * win for s in range(S)])
    X = np.fft.rfft(segs, axis=1); scale = np.full(L // 2 + 1, 2.0); scale[[0, -1]] = 1.0
    psd = scale * (np.abs(X) ** 2).mean(0) / (fs * U)
    h = np.zeros(N); h[0] = h[N // 2] = 1; h[1:N // 2] = 2
    z = np.fft.ifft(np.fft.fft(x) * h); ph = np.angle(z); dph = np.diff(ph)
    return dict(win=win, U=U, psd=psd, freq=np.arange(L // 2 + 1) * fs / L, peak=psd.max(), peak_bin=np.int32(np.argmax(psd)),
                zr=z.real, zi=z.imag, envelope=np.abs(z), inst_freq=(dph - 2 * np.pi * np.round(dph / (2 * np.pi))) * fs / (2 * np.pi))


# 13 RLS system identification with forgetting, misalignment, learning curve, d(final error)/d(lam)
def rls_inputs():
    rg = R(613); T = 200; h = np.array([0.8, -0.4, 0.25, 0.1]); u = rg.standard_normal(T)
    return dict(u=u, d=np.convolve(u, h)[:T] + 0.05 * rg.standard_normal(T), h_true=h, lam=np.float64(0.98))
def rls_run(u, d, h_true, lam):
    T = len(u); w = np.zeros(4); P = 100.0 * np.eye(4); ws, errs = [w], [0.0]
    for t in range(1, T):
        phi = np.array([u[t - i] if t >= i else 0.0 for i in range(4)])
        Pphi = P @ phi; g = Pphi / (lam + phi @ Pphi); e = d[t] - w @ phi
        w = w + g * e; P = (P - np.outer(g, Pphi)) / lam; ws.append(w); errs.append(e)
    return np.array(ws), np.array(errs)
@case("rls_identify", inputs=rls_inputs, tol=(1e-7, 1e-9), outputs=["w", "err", "misalign", "learn", "final_err", "dfinal_dlam"])
def _(u, d, h_true, lam):
    ws, errs = rls_run(u, d, h_true, lam); T = len(u)
    fe = lambda l: (rls_run(u, d, h_true, l)[1][T - 50:] ** 2).sum(); eps = 1e-5
    return dict(w=ws, err=errs, misalign=((ws - h_true) ** 2).sum(1) / (h_true ** 2).sum(),
                learn=np.array([(errs[20 * b:20 * b + 20] ** 2).sum() / 20 for b in range(T // 20)]),
                final_err=fe(lam), dfinal_dlam=(fe(lam + eps) - fe(lam - eps)) / (2 * eps))


# 14 information filter vs a Luenberger observer on a constant-velocity track
def info_inputs():
    rg = R(614); T, dt = 80, 0.1; x = np.zeros((T, 2)); x[0] = [0.0, 1.0]
    for t in range(1, T):
        x[t] = [x[t - 1, 0] + dt * x[t - 1, 1], x[t - 1, 1] + 0.3 * np.sqrt(dt) * rg.standard_normal()]
    return dict(z=x[:, 0] + 0.2 * rg.standard_normal(T), truth=x, dt=np.float64(dt), q=np.float64(0.09),
                r=np.float64(0.04), Lg=np.array([0.5, 0.8]))
@case("info_filter", inputs=info_inputs, tol=(1e-6, 1e-8), outputs=["xe", "var_pos", "xo", "obs_err", "kf_err"])
def _(z, truth, dt, q, r, Lg):
    T = len(z); F = np.array([[1, dt], [0, 1]]); Q = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    x = np.array([z[0], 0.0]); P = np.linalg.inv(np.diag([1 / r + 1e-6, 1e-6])); xs, vs = [x], [P[0, 0]]
    for t in range(1, T):      # the covariance form of the same filter
        xp = F @ x; Pp = F @ P @ F.T + Q; S = Pp[0, 0] + r; K = Pp[:, 0] / S
        x = xp + K * (z[t] - xp[0]); P = Pp - np.outer(K, Pp[0]); xs.append(x); vs.append(P[0, 0])
    xo = [np.array([z[0], 0.0])]
    for t in range(1, T):
        pr = F @ xo[-1]; xo.append(pr + Lg * (z[t] - pr[0]))
    xs, xo = np.array(xs), np.array(xo); h = T // 2
    return dict(xe=xs, var_pos=np.array(vs), xo=xo, obs_err=np.sqrt(((xo[h:, 0] - truth[h:, 0]) ** 2).mean()),
                kf_err=np.sqrt(((xs[h:, 0] - truth[h:, 0]) ** 2).mean()))


# 15 Heston Monte Carlo with per-path u32 LCGs, a call price, an exposure profile and a CVA
@case("heston_cva", inputs=lambda: dict(S0=np.float64(100), v0=np.float64(0.04), kappa=np.float64(1.5), theta=np.float64(0.05),
                                        xi=np.float64(0.4), rho=np.float64(-0.6), r=np.float64(0.02), K=np.float64(100),
                                        seed=np.uint32(4000000000)),
      tol=(1e-7, 1e-9), outputs=["st", "v", "lnS", "price", "stderr", "EE", "ENE", "peak", "cva", "delta"])
def _(S0, v0, kappa, theta, xi, rho, r, K, seed):
    out = heston(S0, v0, kappa, theta, xi, rho, r, K, seed); e = 1e-6
    price = lambda **kw: heston(**{**dict(S0=S0, v0=v0, kappa=kappa, theta=theta, xi=xi, rho=rho, r=r, K=K, seed=seed), **kw})["price"]
    out["delta"] = (price(S0=S0 + e) - price(S0=S0 - e)) / (2 * e)        # the same random numbers
    return out
def heston(S0, v0, kappa, theta, xi, rho, r, K, seed):
    M, NS, T = 300, 24, 1.0; dt = T / NS; st = np.zeros((2 * NS + 1, M), np.uint64)
    st[0] = (int(seed) + np.arange(M, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(2 ** 32)
    for k in range(1, 2 * NS + 1):
        st[k] = (st[k - 1] * np.uint64(1664525) + np.uint64(1013904223)) % np.uint64(2 ** 32)
    u = (st[1:].astype(np.float64) + 0.5) / 2 ** 32
    rad = np.sqrt(-2 * np.log(u[0::2])); z1 = rad * np.cos(2 * np.pi * u[1::2]); z2 = rad * np.sin(2 * np.pi * u[1::2])
    v = np.zeros((NS + 1, M)); ls = np.zeros((NS + 1, M)); v[0] = v0; ls[0] = np.log(S0)
    for k in range(1, NS + 1):
        vp = np.maximum(v[k - 1], 0)
        v[k] = v[k - 1] + kappa * (theta - vp) * dt + xi * np.sqrt(vp * dt) * z1[k - 1]
        ls[k] = ls[k - 1] + (r - 0.5 * vp) * dt + np.sqrt(vp * dt) * (rho * z1[k - 1] + np.sqrt(1 - rho * rho) * z2[k - 1])
    pay = np.exp(-r * T) * np.maximum(np.exp(ls[NS]) - K, 0); price = pay.mean()
    se = np.sqrt(((pay - price) ** 2).sum() / (M - 1) / M)
    tk = np.arange(NS + 1) * dt; fwd = np.exp(ls) - K * np.exp(-r * (T - tk))[:, None]
    EE = np.maximum(fwd, 0).mean(1); ENE = np.minimum(fwd, 0).mean(1)
    cva = 0.6 * sum(EE[k] * np.exp(-r * tk[k]) * (np.exp(-0.02 * (tk[k] - dt)) - np.exp(-0.02 * tk[k])) for k in range(1, NS + 1))
    return dict(st=st.astype(np.uint32), v=v, lnS=ls, price=price, stderr=se, EE=EE, ENE=ENE, peak=EE.max(), cva=cva,
                __stdout__=[f"call {price:.4f} +- {se:.4f}, cva {cva:.5f}"])


# 16 zero, coupon and callable bonds on a lognormal short-rate lattice; sensitivities by derivatives
def lattice(r0, sigma, coupon):
    NT, dt, face = 30, 0.25, 100.0
    rate = np.array([[r0 * np.exp(sigma * np.sqrt(dt) * (t - 2 * j)) if j <= t else 0.0 for j in range(NT)] for t in range(NT)])
    def roll(last, step):
        V = np.full(NT + 1, last); out = [V.copy()]
        for u in range(1, NT + 1):
            t = NT - u; cont = np.exp(-rate[t, :NT + 1 - u] * dt) * 0.5 * (V[:NT + 1 - u] + V[1:NT + 2 - u])
            V = np.zeros(NT + 1); V[:NT + 1 - u] = step(u, t, cont); out.append(V.copy())
        return np.array(out)
    Z = roll(face, lambda u, t, c: c)
    B = roll(face + coupon, lambda u, t, c: c + (coupon if u < NT else 0.0))
    CB = roll(face + coupon, lambda u, t, c: np.minimum(c, face) + coupon if u < NT and t >= 8 else c + coupon if u < NT else c)
    return rate, Z, B, CB
@case("short_rate_tree", inputs=lambda: dict(r0=np.float64(0.03), sigma=np.float64(0.15), coupon=np.float64(1.0)),
      tol=(1e-7, 1e-8), outputs=["rate", "Z", "B", "CB", "zero", "bond", "callable", "option_value", "zero_yield",
                                  "dzero_dr0", "dbond_dr0", "dbond_dsigma", "duration"])
def _(r0, sigma, coupon):
    rate, Z, B, CB = lattice(r0, sigma, coupon); e = 1e-6
    fd = lambda f, a, b: (f(*a)[2][-1, 0] - f(*b)[2][-1, 0]) / (2 * e)
    dz = (lattice(r0 + e, sigma, coupon)[1][-1, 0] - lattice(r0 - e, sigma, coupon)[1][-1, 0]) / (2 * e)
    db = fd(lattice, (r0 + e, sigma, coupon), (r0 - e, sigma, coupon))
    ds = fd(lattice, (r0, sigma + e, coupon), (r0, sigma - e, coupon))
    return dict(rate=rate, Z=Z, B=B, CB=CB, zero=Z[-1, 0], bond=B[-1, 0], callable=CB[-1, 0], option_value=B[-1, 0] - CB[-1, 0],
                zero_yield=-np.log(Z[-1, 0] / 100) / 7.5, dzero_dr0=dz, dbond_dr0=db, dbond_dsigma=ds, duration=-db / B[-1, 0])


# 17 a call under local volatility by an explicit finite-difference scheme; grid Greeks, vega by derivative
def local_vol(S0, K, r, s0, a, b):
    I, dS, NT, T = 80, 2.0, 500, 0.4; dt = T / NT; S = np.arange(I + 1) * dS; V = np.maximum(S - K, 0.0); Vs = [V]
    for u in range(1, NT + 1):
        tau = (u - 1) * dt; Si = S[1:I]
        vol = s0 * (1 + a * np.log(Si / S0) ** 2) * (1 + b * (T - tau))
        W = np.empty(I + 1); W[0] = 0.0; W[I] = I * dS - K * np.exp(-r * u * dt)
        W[1:I] = V[1:I] + dt * (0.5 * vol * vol * Si * Si * (V[2:] - 2 * V[1:I] + V[:I - 1]) / (dS * dS)
                                + r * Si * (V[2:] - V[:I - 1]) / (2 * dS) - r * V[1:I])
        V = W; Vs.append(V)
    return np.array(Vs), dt
@case("local_vol_pde", inputs=lambda: dict(S0=np.float64(100), K=np.float64(105), r=np.float64(0.03), s0=np.float64(0.25),
                                           a=np.float64(0.3), b=np.float64(0.5)),
      tol=(1e-8, 1e-9), outputs=["V", "j0", "price", "delta", "gamma", "theta", "vega"])
def _(S0, K, r, s0, a, b):
    V, dt = local_vol(S0, K, r, s0, a, b); j = int(S0 / 2.0); e = 1e-5
    vega = (local_vol(S0, K, r, s0 + e, a, b)[0][-1, j] - local_vol(S0, K, r, s0 - e, a, b)[0][-1, j]) / (2 * e)
    return dict(V=V, j0=np.int32(j), price=V[-1, j], delta=(V[-1, j + 1] - V[-1, j - 1]) / 4.0,
                gamma=(V[-1, j + 1] - 2 * V[-1, j] + V[-1, j - 1]) / 4.0, theta=(V[-2, j] - V[-1, j]) / dt, vega=vega)


# 18 MPC of a double integrator by gradient descent (a derivative of a rollout), then 5 receding-horizon steps
def mpc_solve(x, ref, rho, iters=60, lr=0.4, dt=0.1):
    H = len(ref); G = np.zeros((H, H))
    for j in range(H):     # the rollout is linear in u: its columns are the responses to unit pulses
        p = v = 0.0
        for k in range(H):
            u = 1.0 if k == j else 0.0; p = p + dt * v + 0.5 * dt * dt * u; v = v + dt * u; G[k, j] = p
    f = x[0] + dt * x[1] * np.arange(1, H + 1); U = np.zeros(H)
    for _ in range(1, iters):
        U = U - lr * (2 * G.T @ (G @ U + f - ref) + 2 * rho * U)
    p = G @ U + f
    return U, p, ((p - ref) ** 2).sum() + rho * (U ** 2).sum()
@case("mpc_gradient", inputs=lambda: dict(x0=np.array([0.5, -0.2]), ref=np.sin(np.linspace(0, 2, 20)), rho=np.float64(0.01),
                                          w=0.02 * R(618).standard_normal(20)),
      tol=(1e-9, 1e-11), outputs=["plan", "J_plan", "path", "xs", "drift"])
def _(x0, ref, rho, w):
    U, p, J = mpc_solve(x0, ref, rho); xs = [x0]
    for t in range(1, 21):
        x = xs[-1]; xs.append(np.array([x[0] + 0.1 * x[1] + 0.005 * U[t - 1], x[1] + 0.1 * U[t - 1] + w[t - 1]]))
    xs = np.array(xs)
    return dict(plan=U, J_plan=J, path=p, xs=xs, drift=np.abs(xs[1:, 0] - p).max())


# 19 polyphase analysis filter bank: prototype, branches, DFT across them, channel powers
def poly_inputs():
    rg = R(619); n = np.arange(256)
    x = np.cos(2 * np.pi * 2 / 8 * n) + 0.5 * np.cos(2 * np.pi * 5.1 / 8 * n + 1) + 0.1 * rg.standard_normal(256)
    return dict(x=x.astype(np.float32))
@case("polyphase_bank", inputs=poly_inputs, tol=(2e-4, 2e-4), vk=True,
      outputs=["proto", "branch", "chan_re", "chan_im", "power", "energy", "direct_re"])
def _(x):
    M, P = 8, 6; T = M * P; N = len(x); B = N // M; x = x.astype(np.float64); n = np.arange(T)
    proto = np.sinc((n - (T - 1) / 2) / M) * (0.54 - 0.46 * np.cos(2 * np.pi * n / (T - 1))) / M
    br = np.array([[sum(proto[p * M + m] * x[(b - p) * M + m] for p in range(P) if b >= p) for m in range(M)] for b in range(B)])
    ang = 2 * np.pi * ((np.arange(M)[:, None] * np.arange(M)[None]) % M) / M
    cre = br @ np.cos(ang).T; cim = -br @ np.sin(ang).T; pw = cre ** 2 + cim ** 2
    direct = np.array([sum(proto[k] * x[t - k] * np.cos(2 * np.pi * ((2 * (t - k)) % M) / M) for k in range(T) if t >= k)
                       for t in np.arange(B) * M + M - 1])
    return dict(proto=proto, branch=br, chan_re=cre, chan_im=cim, power=pw, energy=pw.sum(0), direct_re=direct)


# 20 an LZ77-style greedy parse with a sliding window, its tokens and coded size, and the decoder
def lz_inputs():
    rg = R(620); motif = rg.integers(0, 4, 6)
    s = np.concatenate([rg.integers(0, 4, 5), motif, rg.integers(0, 4, 3), motif, motif[:4], [2] * 7, rg.integers(0, 4, 6), motif])
    return dict(s=s.astype(np.int32))
@case("lz77_codes", inputs=lz_inputs, outputs=["best", "offset", "takes", "at", "tokens", "is_match", "bits", "start_of", "out"])
def _(s):
    N, W, CAP, MIN = len(s), 16, 9, 3
    ml = lambda p, q: next((k for k in range(CAP) if p + k >= N or s[q + k] != s[p + k]), CAP)
    best = np.int32([max([0] + [ml(p, p - d) for d in range(1, W + 1) if p - d >= 0]) for p in range(N)])
    off = np.int32([next((d for d in range(1, W + 1) if p - d >= 0 and ml(p, p - d) == best[p]), W + 1) for p in range(N)])
    takes = np.where(best >= MIN, best, 1).astype(np.int32); at = [0]
    for _ in range(N):
        at.append(N if at[-1] >= N else at[-1] + takes[at[-1]])
    at = np.int32(at); live = at[:N] < N
    ism = live & (best[np.minimum(at[:N], N - 1)] >= MIN)
    start = np.int32([max([0] + [a for a in at[:N] if a <= p]) for p in range(N)])
    return dict(best=best, offset=off, takes=takes, at=at, tokens=np.int32(live.sum()), is_match=ism,
                bits=np.int32(np.where(~live, 0, np.where(ism, 9, 3)).sum()), start_of=start, out=s)


# 21 bootstrap particle filter with systematic resampling, then forward-filtering backward-smoothing
def ps_inputs():
    rg = R(621); T = 30; x = np.zeros(T); x[0] = rg.standard_normal() * 0.5 / np.sqrt(0.19)
    for t in range(1, T):
        x[t] = 0.9 * x[t - 1] + 0.5 * rg.standard_normal()
    return dict(y=x + 0.7 * rg.standard_normal(T), seed=np.uint32(12345))
@case("particle_smoother", inputs=ps_inputs, tol=(1e-8, 1e-10), outputs=["x", "w", "anc", "filt", "ws", "smooth", "ess"])
def _(y, seed):
    T, NP, A, Q, Rv = len(y), 64, 0.9, 0.25, 0.49; n = 2 * NP * T + T + 1
    st = np.zeros(n, np.uint64); st[0] = seed
    for k in range(1, n):
        st[k] = (st[k - 1] * np.uint64(1664525) + np.uint64(1013904223)) % np.uint64(2 ** 32)
    u = (st[1:].astype(np.float64) + 0.5) / 2 ** 32
    m = np.arange(T * NP).reshape(T, NP); z = np.sqrt(-2 * np.log(u[2 * m])) * np.cos(2 * np.pi * u[2 * m + 1])
    jit = u[2 * NP * T + np.arange(T)] / NP
    tr = lambda a, b: np.exp(-(b - A * a) ** 2 / (2 * Q))
    x = np.zeros((T, NP)); w = np.zeros((T, NP)); anc = np.zeros((T, NP), np.int32)
    x[0] = np.sqrt(Q / (1 - A * A)) * z[0]
    for t in range(T):
        if t > 0:
            cdf = np.cumsum(w[t - 1])
            anc[t] = np.minimum(NP - 1, [(cdf < jit[t] + i / NP).sum() for i in range(NP)])
            x[t] = A * x[t - 1, anc[t]] + np.sqrt(Q) * z[t]
        lik = np.exp(-(y[t] - x[t]) ** 2 / (2 * Rv)); w[t] = lik / lik.sum()
    ws = np.zeros((T, NP)); ws[0] = w[T - 1]
    for u_ in range(1, T):
        t = T - 1 - u_; K = tr(x[t][:, None], x[t + 1][None, :])      # [i, j]
        den = (w[t][:, None] * K).sum(0)
        ws[u_] = w[t] * (K * (ws[u_ - 1] / den)[None, :]).sum(1)
    return dict(x=x, w=w, anc=anc, filt=(w * x).sum(1), ws=ws, smooth=np.array([(ws[T - 1 - t] * x[t]).sum() for t in range(T)]),
                ess=1 / (w ** 2).sum(1))


# 22 finite-horizon LQ tracking: backward Riccati and feedforward, forward closed loop, d(cost)/d(rw)
def lqt(ref, x0, qw, rw):
    T, dt = len(ref), 0.1; A = np.array([[1, dt], [0, 1]]); B = np.array([0.5 * dt * dt, dt]); Q = np.diag([qw, 0.1 * qw])
    P = [Q]; sv = [Q @ ref[T - 1]]; K = [np.zeros(2)]; kff = [0.0]
    for u in range(1, T):
        d = rw + B @ P[-1] @ B; k = (B @ P[-1] @ A) / d; f = (B @ sv[-1]) / d
        sv.append(Q @ ref[T - 1 - u] + (A - np.outer(B, k)).T @ sv[-1])
        P.append(Q + A.T @ P[-1] @ (A - np.outer(B, k))); K.append(k); kff.append(f)
    x = [x0]; uc = []
    for k in range(T - 1):
        uc.append(-K[T - 1 - k] @ x[-1] + kff[T - 1 - k]); x.append(A @ x[-1] + B * uc[-1])
    x, uc = np.array(x), np.array(uc); e = x - ref
    cost = np.einsum("ki,ij,kj->", e, Q, e) + rw * (uc ** 2).sum()
    return np.array(P), np.array(sv), np.array(K), np.array(kff), x, uc, cost
@case("lq_tracking", inputs=lambda: dict(ref=np.stack([np.sin(np.linspace(0, 3, 40)), 0.3 * np.cos(np.linspace(0, 3, 40))], 1),
                                         x0=np.array([0.4, 0.0]), qw=np.float64(10.0), rw=np.float64(0.05)),
      tol=(1e-8, 1e-10), outputs=["P", "sv", "K", "kff", "x", "uc", "err", "cost", "dcost_drw", "worst"])
def _(ref, x0, qw, rw):
    P, sv, K, kff, x, uc, cost = lqt(ref, x0, qw, rw); e = 1e-6
    d = (lqt(ref, x0, qw, rw + e)[-1] - lqt(ref, x0, qw, rw - e)[-1]) / (2 * e)
    err = x[:, 0] - ref[:, 0]
    return dict(P=P, sv=sv, K=K, kff=kff, x=x, uc=uc, err=err, cost=cost, dcost_drw=d, worst=np.abs(err).max())


# 23 partitions by the pentagonal recurrence (i64), bounded parts, Stirling and Bell numbers, derangements (u64)
@case("partition_counts", inputs=lambda: dict(primes=np.int64([1000000007, 998244353, 97])),
      outputs=["p", "P", "agree", "S", "bell", "D", "distinct"])
def _(primes):
    N = 300; p = [1]
    for n in range(1, N + 1):
        tot = 0
        for k in range(1, 30):
            for kk in (k, -k):
                g = kk * (3 * kk - 1) // 2
                if g <= n:
                    tot += (1 if k % 2 else -1) * p[n - g]
        p.append(tot)
    P = np.zeros((61, 61), object); P[0, 0] = 1
    for k in range(1, 61):
        for n in range(61):
            P[k, n] = P[k - 1, n] + (P[k, n - k] if n >= k else 0)
    S = np.zeros((26, 26), object); S[0, 0] = 1
    for n in range(1, 26):
        for j in range(1, 26):
            S[n, j] = j * S[n - 1, j] + S[n - 1, j - 1]
    D = [1, 0]
    for n in range(2, 21):
        D.append((n - 1) * (D[-1] + D[-2]))
    dist = []
    for m in primes:
        q = [1] + [0] * N
        for part in range(1, N + 1):
            q = [(q[v] + (q[v - part] if v >= part else 0)) % int(m) for v in range(N + 1)]
        dist.append(q)
    return dict(p=np.array(p, np.int64), P=P.astype(np.int64), agree=np.bool_(True), S=S.astype(np.int64),
                bell=S.sum(1).astype(np.int64), D=np.array(D, np.uint64), distinct=np.array(dist, np.int64).T)


# 24 Kalman filter and RTS smoother of sampled sinusoids, a [B, C] batch of series after the step
def ks_inputs():
    rg = R(624); T, B, C, w = 60, 2, 3, 0.3
    amp = rg.uniform(0.5, 2, (B, C)); ph = rg.uniform(-3, 3, (B, C)); t = np.arange(T)[:, None, None]
    return dict(y=amp * np.cos(w * t + ph) + 0.3 * rg.standard_normal((T, B, C)), w=np.float64(w), q=np.float64(1e-3), r=np.float64(0.09))
@case("kalman_sinusoid", inputs=ks_inputs, tol=(1e-8, 1e-10), outputs=["m", "P", "innov", "smooth", "amp", "phase"])
def _(y, w, q, r):
    T, B, C = y.shape; F = np.array([[np.cos(w), -np.sin(w)], [np.sin(w), np.cos(w)]])
    m = np.zeros((T, B, C, 2)); P = np.zeros((T, B, C, 2, 2)); ms = np.zeros((T, B, C, 2)); inn = 0.0
    for b in range(B):
        for c in range(C):
            mp_, Pp_ = np.zeros(2), 4.0 * np.eye(2); mps, Pps = [], []
            for t in range(T):
                if t:
                    mp_ = F @ m[t - 1, b, c]; Pp_ = F @ P[t - 1, b, c] @ F.T + q * np.eye(2)
                mps.append(mp_); Pps.append(Pp_)
                S = Pp_[0, 0] + r; inn += (y[t, b, c] - mp_[0]) ** 2
                m[t, b, c] = mp_ + Pp_[:, 0] / S * (y[t, b, c] - mp_[0]); P[t, b, c] = Pp_ - np.outer(Pp_[:, 0], Pp_[0]) / S
            ms[0, b, c] = m[T - 1, b, c]
            for u in range(1, T):
                t = T - 1 - u; G = P[t, b, c] @ F.T @ np.linalg.inv(Pps[t + 1])
                ms[u, b, c] = m[t, b, c] + G @ (ms[u - 1, b, c] - mps[t + 1])
    sm = ms[::-1]
    return dict(m=m, P=P, innov=inn, smooth=sm[..., 0], amp=np.hypot(sm[..., 0], sm[..., 1]), phase=np.arctan2(sm[..., 1], sm[..., 0]))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
