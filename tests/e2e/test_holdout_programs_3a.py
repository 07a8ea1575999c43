"""Hold-out programs, third round (tests/programs/holdout/*.ein), written as users of the language
would write them and checked against NumPy computed here: dynamic programs on sequences (global,
local and Gotoh alignment with tracebacks, edit scripts, plain and soft dynamic time warping with
gradients, matrix-chain order, palindromic subsequences, rod cutting and fewest coins, interval
scheduling, dice sums), graphs (transitive closure on bools, components by label propagation,
pointer jumping, min-plus squaring), integer automata driven by LCGs (traffic, a cyclic automaton),
bits, Gray codes, CRC-8 and u8/u16/i64 wraparound, base conversion, a sorting network, run-length
encoding and build-time text with comprehensions, tuples and match. Each case states its tolerance
(`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 Needleman-Wunsch with a traceback walk
def nw_subst(x, y):
    return 2 if x == y else (-1 if x % 2 == y % 2 else -3)
@case("needleman_wunsch", inputs=lambda: dict(a=np.int32([0, 2, 1, 3, 3, 0, 1, 2, 2]), b=np.int32([0, 1, 1, 3, 0, 2, 2])),
      outputs=["S", "score", "move_at", "pos", "moves", "matches", "aligned_len"])
def _(a, b):
    M, N, g = len(a), len(b), -2
    S = np.zeros((M + 1, N + 1), np.int32)
    S[:, 0] = g * np.arange(M + 1); S[0, :] = g * np.arange(N + 1)
    for i in range(1, M + 1):
        for j in range(1, N + 1):
            S[i, j] = max(S[i - 1, j - 1] + nw_subst(a[i - 1], b[j - 1]), S[i - 1, j] + g, S[i, j - 1] + g)
    mv = np.zeros_like(S)
    for i in range(M + 1):
        for j in range(N + 1):
            if i == 0 and j == 0: mv[i, j] = -1
            elif i == 0: mv[i, j] = 2
            elif j == 0: mv[i, j] = 1
            elif S[i, j] == S[i - 1, j - 1] + nw_subst(a[i - 1], b[j - 1]): mv[i, j] = 0
            elif S[i, j] == S[i - 1, j] + g: mv[i, j] = 1
            else: mv[i, j] = 2
    W = N + 1; i, j = M, N; pos = [i * W + j]; moves = []
    for _ in range(M + N):
        m = mv[i, j]; moves.append(m)
        if m == 0: i, j = i - 1, j - 1
        elif m == 1: i -= 1
        elif m == 2: j -= 1
        pos.append(i * W + j)
    pos = np.int32(pos); moves = np.int32(moves)
    matches = sum(1 for s in range(M + N) if moves[s] == 0 and a[pos[s] // W - 1] == b[pos[s] % W - 1])
    return dict(S=S, score=S[M, N], move_at=mv, pos=pos, moves=moves, matches=np.int32(matches),
                aligned_len=np.int32((moves >= 0).sum()))


# 2 Smith-Waterman with the general (affine) gap recurrence
def sw_inputs():
    sub = np.full((4, 4), -1.0, np.float32); np.fill_diagonal(sub, [3.0, 4.0, 3.0, 5.0])
    return dict(a=np.int32([0, 2, 1, 3, 3, 0, 1, 2, 2, 1]), b=np.int32([3, 1, 3, 3, 0, 1, 2, 0]), sub=sub)
@case("smith_waterman", inputs=sw_inputs, outputs=["H", "best", "at", "bi", "bj", "strong"], tol=(1e-6, 1e-6))
def _(a, b, sub):
    M, N = len(a), len(b); H = np.zeros((M + 1, N + 1))
    gap = lambda g: 3.0 + (g - 1) * 0.5
    for i in range(1, M + 1):
        for j in range(1, N + 1):
            left = max(H[i, k] - gap(j - k) for k in range(j))
            up = max(H[k, j] - gap(i - k) for k in range(i))
            H[i, j] = max(0.0, H[i - 1, j - 1] + sub[a[i - 1], b[j - 1]], left, up)
    best = H.max(); at = int(np.argmax(H.ravel() == best))
    return dict(H=H, best=best, at=np.int32(at), bi=np.int32(at // (N + 1)), bj=np.int32(at % (N + 1)),
                strong=np.int32((H >= 0.5 * best).sum(1)))


# 3 dynamic time warping in a band, gradient wrt the first series
def dtw_np(x, y, band=3, big=1e9):
    T, U = len(x), len(y); D = np.zeros((T, U))
    for i in range(T):
        for j in range(U):
            if abs(i - j) > band: D[i, j] = big; continue
            c = (x[i] - y[j]) ** 2
            if i == 0 and j == 0: D[i, j] = c
            elif i == 0: D[i, j] = D[i, j - 1] + c
            elif j == 0: D[i, j] = D[i - 1, j] + c
            else: D[i, j] = c + min(D[i - 1, j - 1], D[i - 1, j], D[i, j - 1])
    return D
@case("dtw", inputs=lambda: dict(x=np.sin(np.linspace(0, 3, 10)) + 0.1 * R(301).standard_normal(10),
                                 y=np.sin(np.linspace(0.3, 3.2, 12) + 0.1)),
      outputs=["D", "dist", "normalized", "grad", "band_cells"], tol=(1e-7, 1e-9))
def _(x, y):
    D = dtw_np(x, y); h = 1e-6; E = np.eye(len(x))
    grad = np.array([(dtw_np(x + h * E[k], y)[-1, -1] - dtw_np(x - h * E[k], y)[-1, -1]) / (2 * h) for k in range(len(x))])
    T, U = len(x), len(y)
    return dict(D=D, dist=D[-1, -1], normalized=D[-1, -1] / (T + U), grad=grad,
                band_cells=np.int32(sum(abs(i - j) <= 3 for i in range(T) for j in range(U))))


# 4 matrix-chain order over a triangular table
@case("matrix_chain", inputs=lambda: dict(dims=np.int64([30, 35, 15, 5, 10, 20, 25, 40, 12])),
      outputs=["cost", "split", "best", "naive", "saving", "top", "halves"], tol=(1e-12, 1e-12))
def _(dims):
    N = len(dims) - 1; cost = np.zeros((N, N), np.int64); split = np.zeros((N, N - 1), np.int32)
    for l in range(1, N):
        for i in range(N - l):
            c = [cost[s, i] + cost[l - 1 - s, i + s + 1] + dims[i] * dims[i + s + 1] * dims[i + l + 1] for s in range(l)]
            cost[l, i] = min(c); split[l, i] = int(np.argmin(c))
    naive = sum(int(dims[0] * dims[k] * dims[k + 1]) for k in range(1, N)); best = cost[N - 1, 0]; top = split[N - 1, 0]
    return {"cost": cost, "split": split, "best": best, "naive": np.int64(naive), "saving": (naive - best) / naive,
            "top": top, "halves.0": cost[top, 0], "halves.1": cost[N - 2 - top, top + 1]}


# 5 longest palindromic subsequence, of a build-time word and of a run-time sequence
def lps_table(s):
    n = len(s); P = np.zeros((n, n), np.int32); P[0, :] = 1
    P[1, :n - 1] = [2 if s[i] == s[i + 1] else 1 for i in range(n - 1)]
    for l in range(2, n):
        for i in range(n - l):
            P[l, i] = P[l - 2, i + 1] + 2 if s[i] == s[i + l] else max(P[l - 1, i], P[l - 1, i + 1])
    return P
@case("palindrome_subseq", inputs=lambda: dict(s=np.int32([1, 2, 3, 2, 4, 1, 2, 5, 2, 1, 3, 3])),
      outputs=["W", "word_lps", "P", "lps", "is_pal", "pal_count", "longest_window", "deletions"])
def _(s):
    W = lps_table("character"); P = lps_table(list(s)); N = len(s)
    pal = np.int32([[1 if i + l < N and list(s[i:i + l + 1]) == list(s[i:i + l + 1][::-1]) else 0 for i in range(N)] for l in range(N)])
    cnt = pal.sum(1).astype(np.int32)
    lps = P[N - 1, 0]
    return dict(W=W, word_lps=W[-1, 0], P=P, lps=lps, is_pal=pal, pal_count=cnt,
                longest_window=np.int32(1 + max(l for l in range(N) if cnt[l] > 0)), deletions=np.int32(N - lps),
                __stdout__=[f"lps(character) = {W[-1, 0]}, sequence lps {lps}, {N - lps} deletions make it a palindrome"])


# 6 rod cutting with its cut list, fewest coins and the greedy check
@case("rod_cutting", inputs=lambda: dict(price=np.int32([2, 5, 7, 8, 10, 17, 17, 20, 24, 26]), coins=np.int32([9, 6, 1])),
      outputs=["R", "first_cut", "left", "pieces", "n_pieces", "F", "reachable", "n_reachable", "greedy_fails"])
def _(price, coins):
    L = len(price); R_ = [0]
    for n in range(1, L + 1): R_.append(max(price[k - 1] + R_[n - k] for k in range(1, n + 1)))
    fc = [0] + [min(k for k in range(1, n + 1) if price[k - 1] + R_[n - k] == R_[n]) for n in range(1, L + 1)]
    left = [L]
    for _ in range(L): left.append(0 if left[-1] == 0 else left[-1] - fc[left[-1]])
    pieces = np.int32([left[s] - left[s + 1] for s in range(L)])
    NONE = 1000000; F = [0]
    for a in range(1, 31): F.append(min(F[a - c] + 1 if c <= a else NONE for c in coins))
    def greedy(a):
        used = 0
        for c in coins: used += a // c; a %= c
        return used if a == 0 else NONE
    return dict(R=np.int32(R_), first_cut=np.int32(fc), left=np.int32(left), pieces=pieces, n_pieces=np.int32((pieces > 0).sum()),
                F=np.int32(F), reachable=np.int32([a for a in range(31) if F[a] < NONE]),
                n_reachable=np.int32(sum(f < NONE for f in F)), greedy_fails=np.bool_(any(F[a] < greedy(a) for a in range(1, 31))))
CASES["rod_cutting_unreachable"] = dict(file="rod_cutting", inputs=lambda: dict(price=np.int32([1, 5, 8, 9, 10, 17, 17, 20]), coins=np.int32([7, 4])),
                                        outputs=CASES["rod_cutting"]["outputs"], ref=CASES["rod_cutting"]["ref"])


# 7 transitive closure and label propagation
def graph_inputs():
    adj = R(307).random((9, 9)) < 0.15
    np.fill_diagonal(adj, False)
    return dict(adj=adj)
@case("graph_closure", inputs=graph_inputs, outputs=["reach", "agree", "out_degree", "label", "comp", "n_components", "settled_at", "strongly"], vk=True)
def _(adj):
    V = len(adj); Rm = adj | np.eye(V, dtype=bool)
    for k in range(V): Rm = Rm | (Rm[:, k:k + 1] & Rm[k:k + 1, :])
    und = adj | adj.T; lab = [np.arange(V)]
    for t in range(1, V):
        prev = lab[-1]; lab.append(np.array([min([prev[i]] + [prev[j] for j in range(V) if und[i, j]]) for i in range(V)]))
    lab = np.int32(lab); comp = lab[-1]
    settled = min([t for t in range(1, V) if (lab[t] == lab[t - 1]).all()] + [V])
    return dict(reach=Rm, agree=np.bool_(True), out_degree=np.int32((Rm & ~np.eye(V, dtype=bool)).sum(1)), label=lab,
                comp=comp, n_components=np.int32((comp == np.arange(V)).sum()), settled_at=np.int32(settled), strongly=Rm & Rm.T)


# 8 Nagel-Schreckenberg traffic with an i64 LCG
@case("traffic_nasch", inputs=lambda: dict(start=np.int32([0, 3, 4, 9, 15, 16, 22, 30, 31, 37]), seed=np.int64(12345)),
      outputs=["lcg", "vel", "pos", "flow", "mean_speed", "stopped", "road"], tol=(1e-12, 1e-12))
def _(start, seed):
    C, L, T = len(start), 40, 30
    z = [np.int64(seed)]
    with np.errstate(over="ignore"):
        for _ in range(T * C):
            w = z[-1] * np.int64(6364136223846793005) + np.int64(1442695040888963407)
            z.append(np.int64(np.fmod(w, np.int64(9223372036854775807))))
    def uniform(v):
        q = np.fmod(np.fmod(np.int64(v // 1024 if v >= 0 else -((-v) // 1024)), 1048576) + 1048576, 1048576)
        return float(q) / 1048576.0
    pos = [start.astype(np.int64)]; vel = [np.zeros(C, np.int64)]
    for t in range(1, T):
        p, v = pos[-1], vel[-1]; nv = np.zeros(C, np.int64)
        for c in range(C):
            gap = (p[(c + 1) % C] - p[c] - 1 + L) % L
            want = min(v[c] + 1, 5, gap)
            nv[c] = want - 1 if want > 0 and uniform(z[(t - 1) * C + c + 1]) < 0.3 else want
        vel.append(nv); pos.append((p + nv) % L)
    vel, pos = np.int32(vel), np.int32(pos)
    flow = vel.sum(1).astype(np.int32); flow[0] = 0
    return dict(lcg=np.int64(z), vel=vel, pos=pos, flow=flow, mean_speed=flow[1:].sum() / ((T - 1) * C),
                stopped=np.int32((vel == 0).sum(1)), road=np.array([[(pos[t] == x).any() for x in range(L)] for t in range(T)]))


# 9 bits, Gray codes, wraparound
@case("bits_gray", inputs=lambda: dict(n=np.int32([0, 1, 2, 3, 7, 100, 255, 1000, 4095, 12345, 32767, 40000, 65535])),
      outputs=["popcount", "parity", "gray", "decoded", "byte_rev", "one_bit_apart", "a8", "sum8", "prod16", "neg16", "hash"])
def _(n):
    pc = np.int32([bin(v).count("1") for v in n])
    with np.errstate(over="ignore"):
        return dict(popcount=pc, parity=pc % 2 == 0, gray=np.int32(n ^ (n >> 1)), decoded=n,
                    byte_rev=np.int32([int(f"{v & 255:08b}"[::-1], 2) for v in n]), one_bit_apart=np.bool_(True),
                    a8=n.astype(np.uint8), sum8=n.astype(np.uint8) + np.uint8(200), prod16=n.astype(np.uint16) * n.astype(np.uint16),
                    neg16=np.uint16(0) - n.astype(np.uint16), hash=n.astype(np.int64) * 2654435761 % 4294967296)


# 10 base conversion
@case("base_convert", inputs=lambda: dict(v=np.int64([0, 1, 9, 10, 255, 4096, 99999, 123456789, 2 ** 40 + 17, 987654321987654])),
      outputs=["digit", "ndigits", "digit_sum", "back_ok", "droot", "closed_form", "hex_code", "shortest_base"])
def _(v):
    K, D = len(v), 50
    dig = np.zeros((K, 15, D), np.int64)
    for i, x in enumerate(v):
        for b in range(15):
            q = int(x)
            for k in range(D): dig[i, b, k] = q % (b + 2); q //= b + 2
    nd = np.int32([[max([k + 1 for k in range(D) if dig[i, b, k]] + [1]) for b in range(15)] for i in range(K)])
    def droot(x):
        for _ in range(5): x = sum(int(c) for c in str(x))
        return x
    return dict(digit=dig, ndigits=nd, digit_sum=dig.sum(2), back_ok=np.bool_(True), droot=np.int64([droot(int(x)) for x in v]),
                closed_form=np.int64([0 if x == 0 else 1 + (x - 1) % 9 for x in v]),
                hex_code=np.int64([[(int(x) >> (4 * k)) & 15 for k in range(12)] for x in v]),
                shortest_base=np.int32([min([b + 2 for b in range(15) if nd[i, b] <= 4] + [99]) for i in range(K)]),
                __stdout__=["digit alphabet 0123456789abcdef, 16 symbols"])


# 11 run-length encoding
def rle_ref(x):
    N = len(x); st = [i for i in range(N) if i == 0 or x[i] != x[i - 1]]
    ends = st[1:] + [N]; lens = [e - s for s, e in zip(st, ends)]
    run_len = np.zeros(N, np.int32); run_len[st] = lens
    def kind(s, n):
        if s == 0: return 0
        if n == 1: return 1
        if 2 <= n <= 3: return 2 if s % 2 == 0 else 3
        return 4
    kinds = np.full(N, -1, np.int32)
    for s, n in zip(st, lens): kinds[s] = kind(int(x[s]), n)
    longest = max(lens)
    return dict(starts=np.int32(st), runs=np.int32(len(st)), values=x[st], lengths=np.int32(lens), run_len=run_len,
                longest=np.int32(longest), longest_symbol=x[st[lens.index(longest)]], kinds=kinds,
                kind_count=np.int32([(kinds == c).sum() for c in range(5)]), decoded=x, round_trip=np.bool_(True),
                compressed_size=np.int32(2 * len(st)), __stdout__=[f"{len(st)} runs, longest {longest}"])
@case("run_length", inputs=lambda: dict(x=np.int32([3, 3, 3, 0, 0, 1, 2, 2, 2, 2, 2, 4, 4, 0, 5, 5, 5, 6, 6, 6, 6])), vk=True)
def _(x):
    return rle_ref(x)
CASES["run_length_random"] = dict(file="run_length", inputs=lambda: dict(x=np.int32(R(311).integers(0, 3, 40))), ref=rle_ref)



# 12 soft-DTW, its gradient wrt the series and the temperature
def soft_dtw_np(x, y, g, soft=True):
    T, U = len(x), len(y); C = (x[:, None] - y[None, :]) ** 2; Rm = np.zeros((T, U))
    def smin(*v):
        v = np.array(v); m = v.min()
        return m - g * np.log(np.exp((m - v) / g).sum()) if soft else m
    for i in range(T):
        for j in range(U):
            if i == 0 and j == 0: Rm[i, j] = C[0, 0]
            elif i == 0: Rm[i, j] = Rm[i, j - 1] + C[i, j]
            elif j == 0: Rm[i, j] = Rm[i - 1, j] + C[i, j]
            else: Rm[i, j] = C[i, j] + smin(Rm[i - 1, j - 1], Rm[i - 1, j], Rm[i, j - 1])
    return Rm[-1, -1]
@case("soft_dtw", inputs=lambda: dict(x=np.sin(np.linspace(0, 3, 8)) + 0.05 * R(312).standard_normal(8),
                                      y=np.cos(np.linspace(0, 2, 9)), gamma=np.float64(0.1)),
      outputs=["sdtw", "dx", "dgamma", "hard"], tol=(1e-6, 1e-8))
def _(x, y, gamma):
    h = 1e-6; E = np.eye(len(x))
    return dict(sdtw=soft_dtw_np(x, y, gamma),
                dx=np.array([(soft_dtw_np(x + h * E[k], y, gamma) - soft_dtw_np(x - h * E[k], y, gamma)) / (2 * h) for k in range(len(x))]),
                dgamma=(soft_dtw_np(x, y, gamma + h) - soft_dtw_np(x, y, gamma - h)) / (2 * h), hard=soft_dtw_np(x, y, gamma, soft=False))


# 13 cyclic cellular automaton on a torus, seeded by an i32 LCG
@case("cyclic_ca", inputs=lambda: dict(threshold=np.int32(1), seed=np.int32(2024)), outputs=["grid", "census", "changed", "majority"], vk=True)
def _(threshold, seed):
    H, W, K, G = 12, 10, 4, 16; r = [np.int32(seed)]
    with np.errstate(over="ignore"):
        for _ in range(H * W):
            r.append(np.int32(np.fmod(r[-1] * np.int32(1103515245) + np.int32(12345), np.int32(2147483647))))
    def colour(v):
        q = int(v); q = -((-q) // 65536) if q < 0 else q // 65536
        c = int(np.fmod(q, K))
        return c if c >= 0 else c + K
    g0 = np.int32([[colour(r[i * W + j + 1]) for j in range(W)] for i in range(H)]); grids = [g0]
    for _ in range(1, G):
        a = grids[-1]; nxt = (a + 1) % K
        n = sum((np.roll(a, sh, ax) == nxt).astype(np.int32) for sh, ax in [(1, 0), (-1, 0), (1, 1), (-1, 1)])
        grids.append(np.where(n >= threshold, nxt, a).astype(np.int32))
    grid = np.int32(grids); census = np.int32([[(grid[g] == c).sum() for c in range(K)] for g in range(G)])
    changed = np.int32([0] + [(grid[g] != grid[g - 1]).sum() for g in range(1, G)])
    return dict(grid=grid, census=census, changed=changed, majority=np.int32(census.argmax(1)))
CASES["cyclic_ca_threshold_2"] = dict(file="cyclic_ca", inputs=lambda: dict(threshold=np.int32(2), seed=np.int32(-77)),
                                      outputs=CASES["cyclic_ca"]["outputs"], ref=CASES["cyclic_ca"]["ref"])


# 14 weighted interval scheduling with its walk back
def jobs():
    rg = R(314); st = rg.integers(0, 20, 14).astype(np.float32); ln = rg.integers(1, 6, 14).astype(np.float32)
    order = np.argsort(st + ln, kind="stable")
    return dict(start=st[order], finish=(st + ln)[order], weight=rg.integers(1, 9, 14).astype(np.float32))
@case("interval_schedule", inputs=jobs, outputs=["p", "best", "take", "at", "chosen", "total", "busy"], tol=(1e-6, 1e-6))
def _(start, finish, weight):
    J = len(start); p = np.int32([max([k + 1 for k in range(j) if finish[k] <= start[j]] + [0]) for j in range(J)])
    best = [0.0]
    for j in range(1, J + 1): best.append(max(best[j - 1], weight[j - 1] + best[p[j - 1]]))
    take = np.array([False] + [weight[j - 1] + best[p[j - 1]] >= best[j - 1] for j in range(1, J + 1)])
    at = [J]
    for _ in range(J):
        j = at[-1]; at.append(0 if j == 0 else (p[j - 1] if take[j] else j - 1))
    chosen = np.array([any(at[s] == j + 1 and take[j + 1] and at[s + 1] == p[j] for s in range(J)) for j in range(J)])
    return dict(p=p, best=np.array(best), take=take, at=np.int32(at), chosen=chosen, total=weight[chosen].sum(),
                busy=(finish - start)[chosen].sum())


# 15 CRC-8 bit by bit in u8 and by a table
def crc8_np(data, poly=7):
    c = 0
    for byte in data:
        c ^= int(byte)
        for _ in range(8): c = ((c << 1) ^ poly) & 255 if c & 128 else (c << 1) & 255
    return c
@case("crc8", inputs=lambda: dict(msg=np.frombuffer(b"123456789", np.uint8).copy()),
      outputs=["bit", "crc", "crc_bits", "table", "crc_table", "agree", "tail"])
def _(msg):
    bits = np.unpackbits(msg).astype(np.uint8); c = [0]
    for bt in bits:
        top = c[-1] >> 7; sh = (c[-1] << 1) & 255; c.append(sh if top == bt else sh ^ 7)
    return dict(bit=bits, crc=np.uint8(c), crc_bits=np.uint8(crc8_np(msg)), table=np.uint8([crc8_np([v]) for v in range(256)]),
                crc_table=np.uint8(crc8_np(msg)), agree=np.bool_(True), tail=np.uint8(crc8_np(list(msg) + [crc8_np(msg)])))
CASES["crc8_random"] = dict(file="crc8", inputs=lambda: dict(msg=R(315).integers(0, 256, 23).astype(np.uint8)),
                            outputs=CASES["crc8"]["outputs"], ref=CASES["crc8"]["ref"])


# 16 weighted edit distance with (cost, operation) pairs and a walk back
@case("edit_script", inputs=lambda: dict(a=np.int32([1, 2, 3, 4, 5, 2, 2, 6]), b=np.int32([2, 3, 7, 5, 2, 1, 6, 6, 3]),
                                         w=np.float32([1.5, 1.0, 0.75])),
      outputs=["D", "op", "ci", "cj", "step_op", "subs", "inserts", "deletes", "distance"], tol=(1e-6, 1e-6))
def _(a, b, w):
    M, N = len(a), len(b); w = w.astype(np.float64)
    sc = lambda x, y: 0.0 if x == y else w[0]
    ic = lambda y: w[1] * (1.0 + y % 2)
    dc = lambda x: w[2]
    D = np.zeros((M + 1, N + 1)); op = np.full((M + 1, N + 1), -1, np.int32)
    for i in range(1, M + 1): D[i, 0] = D[i - 1, 0] + dc(a[i - 1]); op[i, 0] = 2
    for j in range(1, N + 1): D[0, j] = D[0, j - 1] + ic(b[j - 1]); op[0, j] = 1
    for i in range(1, M + 1):
        for j in range(1, N + 1):
            c = [D[i - 1, j - 1] + sc(a[i - 1], b[j - 1]), D[i, j - 1] + ic(b[j - 1]), D[i - 1, j] + dc(a[i - 1])]
            k = 0 if c[0] <= c[1] and c[0] <= c[2] else (1 if c[1] <= c[2] else 2)
            D[i, j], op[i, j] = c[k], k
    ci, cj = [M], [N]
    for _ in range(M + N):
        o = op[ci[-1], cj[-1]]
        ci.append(ci[-1] - 1 if o in (0, 2) else ci[-1]); cj.append(cj[-1] - 1 if o in (0, 1) else cj[-1])
    st = np.int32([op[ci[s], cj[s]] for s in range(M + N)])
    subs = sum(1 for s in range(M + N) if st[s] == 0 and a[max(ci[s] - 1, 0)] != b[max(cj[s] - 1, 0)])
    return {"D": D, "op": op, "ci": np.int32(ci), "cj": np.int32(cj), "step_op": st, "subs": np.int32(subs),
            "inserts": np.int32((st == 1).sum()), "deletes": np.int32((st == 2).sum()), "distance": D[M, N],
            "__stdout__": [f"distance {D[M, N]:.2f}: {subs} substitutions, {(st == 1).sum()} insertions, {(st == 2).sum()} deletions"]}


# 17 list ranking and forest roots by pointer jumping
def linked():
    rg = R(317); order = rg.permutation(13); succ = np.zeros(13, np.int32)
    succ[order[:-1]] = order[1:]; succ[order[-1]] = order[-1]
    parent = np.int32([0, 0, 1, 1, 3, 5, 5, 6, 7, 8, 2, 10, 12])
    return dict(succ=succ, parent=parent)
@case("pointer_jumping", inputs=linked, outputs=["nxt", "dist", "rank", "tail", "head", "position", "up", "depth", "root", "tree_size", "deepest", "n_trees"])
def _(succ, parent):
    N, Rn = len(succ), 6
    def jump(ptr, d0):
        ps, ds = [ptr], [d0]
        for _ in range(1, Rn):
            ps.append(ps[-1][ps[-1]]); ds.append(ds[-1] + ds[-1][ps[-2]])
        return np.int32(ps), np.int32(ds)
    nxt, dist = jump(succ, np.int32(succ != np.arange(N)))
    up, depth = jump(parent, np.int32(parent != np.arange(N)))
    rank = dist[-1]; head = min(i for i in range(N) if not any(succ[j] == i and j != i for j in range(N)))
    root = up[-1]
    return dict(nxt=nxt, dist=dist, rank=rank, tail=nxt[-1, 0], head=np.int32(head), position=rank[head] - rank, up=up, depth=depth,
                root=root, tree_size=np.int32([(root == i).sum() for i in range(N)]), deepest=depth[-1].max(),
                n_trees=np.int32((root == np.arange(N)).sum()))


# 18 Levenshtein distances of a batch of padded word pairs in one recurrence
def word_pairs():
    rg = R(318); B, M, N = 6, 7, 6
    a = np.full((B, M), -1, np.int32); b = np.full((B, N), -1, np.int32)
    for q in range(B):
        la, lb = rg.integers(1, M + 1), rg.integers(1, N + 1)
        a[q, :la] = rg.integers(0, 4, la); b[q, :lb] = rg.integers(0, 4, lb)
    b[2] = -1; b[2, :3] = a[2, :3]; a[2, 3:] = -1          # one identical pair
    return dict(a=a, b=b)
def levenshtein(x, y):
    D = np.zeros((len(x) + 1, len(y) + 1), np.int32); D[:, 0] = np.arange(len(x) + 1); D[0, :] = np.arange(len(y) + 1)
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + (x[i - 1] != y[j - 1]))
    return D
@case("batched_levenshtein", inputs=word_pairs, outputs=["la", "lb", "D", "dist", "nearest", "similarity", "identical"], tol=(1e-6, 1e-7))
def _(a, b):
    B, M = a.shape; N = b.shape[1]
    la = (a >= 0).sum(1).astype(np.int32); lb = (b >= 0).sum(1).astype(np.int32)
    D = np.stack([levenshtein(a[q], b[q]) for q in range(B)], axis=-1)     # the padding takes part as a symbol
    dist = np.int32([D[la[q], lb[q], q] for q in range(B)])
    sim = 1.0 - dist.astype(np.float32) / np.maximum(la, lb).astype(np.float32)
    ident = np.int32([q for q in range(B) if dist[q] == 0])
    return dict(la=la, lb=lb, D=D, dist=dist, nearest=np.int32(np.argmin(dist)), similarity=sim, identical=ident,
                __stdout__=[f"nearest pair {np.argmin(dist)}, {len(ident)} identical"])


# 19 min-plus squaring with saturation, walk counts in i64
def weights(seed, share):
    rg = R(seed); return dict(W=np.where(rg.random((7, 7)) < share, rg.integers(1, 9, (7, 7)), 1000000).astype(np.int32))
@case("minplus_paths", inputs=lambda: weights(319, 0.35), outputs=["Dp", "dist", "walks", "reach_len", "ecc", "centre", "connected", "triangle_ok"])
def _(W):
    V, INF = len(W), 1000000
    D = np.where(np.eye(V, dtype=bool), 0, W).astype(np.int64); Ds = [D]
    for _ in range(1, 4):
        D = np.minimum((D[:, :, None] + D[None, :, :]).min(1), INF); Ds.append(D)
    dist = Ds[-1]
    A = ((W < INF) & ~np.eye(V, dtype=bool)).astype(np.int64); walks = [np.eye(V, dtype=np.int64)]
    for _ in range(1, V): walks.append(walks[-1] @ A)
    walks = np.array(walks)
    reach = np.int32([[min([n for n in range(V) if walks[n, i, j] > 0] + [V]) for j in range(V)] for i in range(V)])
    ecc = dist.max(1)
    return dict(Dp=np.int32(Ds), dist=np.int32(dist), walks=walks, reach_len=reach, ecc=np.int32(ecc), centre=np.int32(np.argmin(ecc)),
                connected=np.bool_((dist < INF).all()),
                triangle_ok=np.bool_((dist[:, None, :] <= np.minimum(dist[:, :, None] + dist[None, :, :], INF)).all()))
CASES["minplus_paths_sparse"] = dict(file="minplus_paths", inputs=lambda: weights(320, 0.12), outputs=CASES["minplus_paths"]["outputs"],
                                     ref=CASES["minplus_paths"]["ref"])


# 20 letter codes of a build-time text, a Caesar shift by a run-time key
@case("text_codes", inputs=lambda: dict(key=np.int32(7)), vk=True,
      outputs=["codes", "freq", "spaces", "shifted", "back", "sfreq", "top", "top_plain", "guessed_key", "repeated_pairs"])
def _(key):
    text = "the quick brown fox jumps over the lazy dog and then the fox sleeps"
    letters = [c for c in text if c != " "]; codes = np.int32([ord(c) - ord("a") for c in letters])
    freq = np.int32([letters.count(chr(ord("a") + a)) for a in range(26)])
    sh = (codes + key) % 26; sfreq = np.int32([(sh == a).sum() for a in range(26)])
    top, tp = int(np.argmax(sfreq)), int(np.argmax(freq)); rep = sum(letters[k] == letters[k + 1] for k in range(len(letters) - 1))
    return dict(codes=codes, freq=freq, spaces=np.int32(text.count(" ")), shifted=np.int32(sh), back=codes, sfreq=sfreq,
                top=np.int32(top), top_plain=np.int32(tp), guessed_key=np.int32((top - tp) % 26), repeated_pairs=np.int32(rep),
                __stdout__=[f"{len(letters)} letters, {text.count(' ')} spaces, {rep} doubled letters"])
CASES["text_codes_negative_key"] = dict(file="text_codes", inputs=lambda: dict(key=np.int32(-3)), outputs=CASES["text_codes"]["outputs"],
                                        ref=CASES["text_codes"]["ref"])


# 21 bitonic sorting network with its argsort
@case("bitonic_sort", inputs=lambda: dict(x=R(321).integers(-20, 20, 16).astype(np.int32)),
      outputs=["v", "at", "sorted", "order", "inversions", "is_sorted", "gathered_ok"])
def _(x):
    stages = [(2 ** a, 2 ** (a - 1 - b)) for a in range(1, 5) for b in range(a)]
    v, at = [x.copy()], [np.arange(16, dtype=np.int32)]
    for k, j in stages:
        pv, pa = v[-1], at[-1]; nv, na = pv.copy(), pa.copy()
        for i in range(16):
            p = i ^ j; up = (i // k) % 2 == 0; low = i < p
            smaller = pv[i] < pv[p] or (pv[i] == pv[p] and pa[i] < pa[p])
            if (up == low) != smaller: nv[i], na[i] = pv[p], pa[p]
        v.append(nv); at.append(na)
    v, at = np.int32(v), np.int32(at)
    inv = np.int32([sum(1 for i in range(16) for m in range(i + 1, 16) if row[i] > row[m]) for row in v])
    order = np.argsort(x, kind="stable").astype(np.int32)
    assert (v[-1] == np.sort(x)).all() and (at[-1] == order).all()       # the network sorts, stably
    return dict(v=v, at=at, sorted=v[-1], order=at[-1], inversions=inv, is_sorted=np.bool_(True), gathered_ok=np.bool_(True))


# 22 the sum of loaded dice by repeated convolution, gradient of a tail chance wrt the loads
def dice_np(w, n=8):
    p = w / w.sum(); P = [np.eye(1, 6 * n + 1)[0]]
    for _ in range(n): P.append(np.convolve(P[-1], np.concatenate([[0.0], p]))[:6 * n + 1])
    return np.array(P)
@case("dice_sums", inputs=lambda: dict(w=np.float64([1.0, 1.2, 0.8, 1.0, 1.5, 2.0])),
      outputs=["p", "P", "reach", "dreach", "mean", "var", "one_mean", "one_var", "mode"], tol=(1e-7, 1e-9))
def _(w):
    P = dice_np(w); s = np.arange(49); p = w / w.sum(); f = np.arange(1, 7)
    reach = lambda w: dice_np(w)[-1, 35:].sum(); h = 1e-6; E = np.eye(6)
    m = (s * P[-1]).sum()
    return dict(p=p, P=P, reach=reach(w), dreach=np.array([(reach(w + h * E[k]) - reach(w - h * E[k])) / (2 * h) for k in range(6)]),
                mean=m, var=((s - m) ** 2 * P[-1]).sum(), one_mean=(f * p).sum(), one_var=((f - (f * p).sum()) ** 2 * p).sum(),
                mode=np.int32(np.argmax(P[-1])))


# 23 Gotoh's affine gaps, the three states of a cell along a last axis of one table
@case("gotoh", inputs=lambda: dict(a=np.int32([0, 1, 2, 3, 1, 2, 3, 0, 0, 1, 2]), b=np.int32([0, 1, 2, 1, 2, 3, 0, 1, 2])),
      outputs=["G", "H", "best", "gap_cells"], tol=(1e-6, 1e-6))
def _(a, b):
    M, N, NEG = len(a), len(b), -1.0e6; G = np.full((M + 1, N + 1, 3), NEG); G[0, :, 2] = 0; G[:, 0, 2] = 0
    for i in range(1, M + 1):
        for j in range(1, N + 1):
            G[i, j, 0] = max(G[i, j - 1, 0] - 0.5, G[i, j - 1, 2] - 2.5)
            G[i, j, 1] = max(G[i - 1, j, 1] - 0.5, G[i - 1, j, 2] - 2.5)
            sc = 2.0 if a[i - 1] == b[j - 1] else -1.0
            G[i, j, 2] = max(0.0, G[i - 1, j - 1, 2] + sc, G[i, j, 0], G[i, j, 1])
    H = G[:, :, 2]
    gap = ((H > 0) & ((H == G[:, :, 0]) | (H == G[:, :, 1]))).sum()
    return dict(G=G, H=H, best=H.max(), gap_cells=np.int32(gap))

@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
