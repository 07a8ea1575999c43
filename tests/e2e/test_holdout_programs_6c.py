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
@case("coin_change", inputs=lambda: dict(coins=np.int32([1, 3, 4, 7, 10, 25])), vk=True,
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


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
