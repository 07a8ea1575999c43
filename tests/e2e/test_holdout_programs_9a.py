"""Hold-out programs, ninth round (sequences, strings and combinatorial dynamic programming):
Smith-Waterman with affine gaps as three coupled tables, Needleman-Wunsch with an argmax-driven
traceback, HMM forward-backward and Viterbi in log space with their derivatives, Nussinov folding
over intervals, integer-width edit distances and Hamming distances by shifts, position weight
matrix scans, the KMP failure function as a recurrence, run-length coding, k-mer spectra by one-hot
sums, CTC's forward-backward and gradient, and banded dynamic time warping, each checked against
NumPy computed here. Each case states its tolerance (`tol`, rtol and atol; integers and bools
compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32


# 1 Needleman-Wunsch in i16 with an argmax-driven traceback
def nw_inputs(M=8, N=10, seed=902):
    rg = R(seed); b = rg.integers(0, 4, N).astype(np.int8)
    a = np.r_[b[:3], rg.integers(0, 4, 2), b[5:8]].astype(np.int8)
    return dict(a=a, b=b)
@case("nw_argmax_trace", inputs=nw_inputs, outputs=["S", "cand", "mv", "ti", "tj", "steps", "identities", "score_total"])
def _(a, b):
    M, N = len(a), len(b); sc = lambda x, y: 3 if x == y else -1
    S = np.zeros((M + 1, N + 1), np.int16); S[:, 0] = -2 * np.arange(M + 1); S[0, :] = -2 * np.arange(N + 1)
    for i in range(1, M + 1):
        for j in range(1, N + 1):
            S[i, j] = max(S[i - 1, j - 1] + sc(a[i - 1], b[j - 1]), max(S[i - 1, j], S[i, j - 1]) - 2)
    cand = np.full((M + 1, N + 1, 3), -30000, np.int16)
    cand[1:, 1:, 0] = S[:-1, :-1] + np.where(a[:, None] == b[None, :], 3, -1)
    cand[1:, :, 1] = S[:-1, :] - 2; cand[:, 1:, 2] = S[:, :-1] - 2
    ti, tj, mv = [M], [N], []
    for s in range(M + N):
        m = 3 if ti[-1] == 0 and tj[-1] == 0 else int(np.argmax(cand[ti[-1], tj[-1]]))
        mv.append(m); ti.append(ti[-1] - (m in (0, 1))); tj.append(tj[-1] - (m in (0, 2)))
    mv = np.int32(mv); steps = int((mv < 3).sum())
    ident = sum(1 for s in range(M + N) if mv[s] == 0 and a[ti[s] - 1] == b[tj[s] - 1])
    return dict(S=S, cand=cand, mv=mv, ti=np.int32(ti), tj=np.int32(tj), steps=np.int32(steps), identities=np.int32(ident),
                score_total=S[M, N], __stdout__=[f"score {S[M, N]}, {ident} identities in {steps} columns"])


# 2 HMM forward-backward in log space, posteriors and the log-likelihood's derivatives
def hmm_inputs(S=3, O=4, T=12, seed=903):
    rg = R(seed); A = rg.dirichlet(np.ones(S) * 2, S); B = rg.dirichlet(np.ones(O), S); pi = rg.dirichlet(np.ones(S))
    return dict(logA=np.log(A), logB=np.log(B), logpi=np.log(pi), obs=rg.integers(0, O, T).astype(np.int32))
@case("hmm_posterior_grad", inputs=hmm_inputs, tol=(1e-9, 1e-11), outputs=["alpha", "rbeta", "loglik", "gamma", "counts", "dA", "decoded"])
def _(logA, logB, logpi, obs):
    from scipy.special import logsumexp
    S, T = len(logpi), len(obs)
    al = [logpi + logB[:, obs[0]]]
    for t in range(1, T):
        al.append(logsumexp(al[-1][:, None] + logA, axis=0) + logB[:, obs[t]])
    be = [np.zeros(S)]
    for r in range(1, T):
        be.append(logsumexp(logA + (logB[:, obs[T - r]] + be[-1])[None, :], axis=1))
    al, be = np.array(al), np.array(be); ll = logsumexp(al[-1])
    gamma = np.exp(al + be[::-1] - ll)
    counts = np.zeros_like(logB)
    for t in range(T):
        counts[:, obs[t]] += gamma[t]
    dA = np.zeros_like(logA)
    for t in range(1, T):
        dA += np.exp(al[t - 1][:, None] + logA + (logB[:, obs[t]] + be[T - 1 - t])[None, :] - ll)
    return dict(alpha=al, rbeta=be, loglik=ll, gamma=gamma, counts=counts, dA=dA, decoded=np.argmax(gamma, 1).astype(np.int32),
                __stdout__=[f"loglik {ll:.6f}"])


# 3 Nussinov folding over spans
def nussinov_np(seq, minloop=3):
    N = len(seq); ok = {(0, 3), (3, 0), (1, 2), (2, 1), (2, 3), (3, 2)}
    can = np.array([[j - i > minloop and (seq[i], seq[j]) in ok for j in range(N)] for i in range(N)])
    P = np.zeros((N, N), np.int32)
    for l in range(minloop + 1, N):
        for i in range(N - l):
            j = i + l; closed = P[l - 2, i + 1] + 1 if can[i, j] else 0
            split = max(P[k - 1, i] + P[l - k - 1, i + k] for k in range(1, l))
            P[l, i] = max(P[l - 1, i + 1], P[l - 1, i], closed, split)
    return can, P
@case("nussinov_fold", inputs=lambda: dict(seq=R(904).integers(0, 4, 18).astype(np.int32)),
      outputs=["can", "P", "best", "pairable", "closing", "closing_count"])
def _(seq):
    can, P = nussinov_np(seq); N = len(seq)
    closing = np.zeros((N, N), bool)
    for l in range(4, N):
        for i in range(N - l):
            closing[l, i] = can[i, i + l] and P[l, i] == P[l - 2, i + 1] + 1
    return dict(can=can, P=P, best=P[N - 1, 0], pairable=np.int32(can.sum()), closing=closing,
                closing_count=np.int32(closing.sum()), __stdout__=[f"{P[N - 1, 0]} pairs"])


# 4 Hamming distances of reads packed two bits per base
def packed_inputs(R_=5, W=2, seed=905):
    rg = R(seed); bases = rg.integers(0, 4, (R_, W, 16))
    bases[1] = bases[0]; bases[1, 0, [2, 9]] = (bases[1, 0, [2, 9]] + 1) % 4; bases[3, 1, 5] ^= 3
    return dict(words=(bases * 4 ** np.arange(16)).sum(-1).astype(np.int64))
@case("hamming_packed", inputs=packed_inputs, outputs=["X", "bit_dist", "base_dist", "nearest", "base", "gc"])
def _(words):
    R_, W = words.shape
    X = words[:, None, :] ^ words[None, :, :]
    bit_dist = np.vectorize(lambda v: bin(v).count("1"))(X).sum(-1).astype(np.int32)
    pairs = (X[..., None] >> (2 * np.arange(16))) & 3
    base_dist = (pairs != 0).sum((-1, -2)).astype(np.int32)
    d = base_dist + np.eye(R_, dtype=np.int32) * 10 ** 6
    base = ((words[..., None] >> (2 * np.arange(16))) & 3)
    nearest = np.argmin(d, 1).astype(np.int32)
    return dict(X=X, bit_dist=bit_dist, base_dist=base_dist, nearest=nearest, base=base,
                gc=((base == 1) | (base == 2)).sum((1, 2)).astype(np.int32), __stdout__=["nearest"])


# 5 position weight matrix scan on both strands
def pwm_inputs(Lm=6, B=3, L=20, seed=906):
    rg = R(seed); motif = rg.integers(0, 4, Lm); counts = rg.integers(0, 3, (Lm, 4)).astype(f32)
    counts[np.arange(Lm), motif] += 12; seqs = rg.integers(0, 4, (B, L))
    seqs[0, 4:4 + Lm] = motif; seqs[2, 10:10 + Lm] = 3 - motif[::-1]
    return dict(counts=counts, bg=f32([0.3, 0.2, 0.2, 0.3]), seqs=seqs.astype(np.int32))
@case("pwm_scan", inputs=pwm_inputs, outputs=["freq", "pwm", "fwd", "rev", "best", "hit", "strand", "info", "occupancy", "g"],
      tol=(2e-5, 2e-5), vk=True)
def _(counts, bg, seqs):
    Lm, (B, L) = len(counts), seqs.shape; NW = L - Lm + 1
    freq = (counts + f32(0.5)) / (counts.sum(1, keepdims=True) + f32(2)); pwm = np.log(freq / bg)
    win = np.array([[seqs[b, s:s + Lm] for s in range(NW)] for b in range(B)])
    fwd = pwm[np.arange(Lm), win].sum(-1); rwin = 3 - win[..., ::-1]; rev = pwm[np.arange(Lm), rwin].sum(-1)
    best = np.maximum(fwd, rev).max(1)
    hit = np.array([min(s for s in range(NW) if fwd[b, s] == best[b] or rev[b, s] == best[b]) for b in range(B)], np.int32)
    strand = np.where(fwd[np.arange(B), hit] == best, 1, -1).astype(np.int32)
    z = np.exp(fwd).sum(1) + np.exp(rev).sum(1); occ = np.log(z).sum()
    g = np.zeros_like(pwm)
    for b in range(B):
        for s_ in range(NW):
            for p in range(Lm):
                g[p, win[b, s_, p]] += np.exp(fwd[b, s_]) / z[b]; g[p, rwin[b, s_, p]] += np.exp(rev[b, s_]) / z[b]
    return dict(freq=freq, pwm=pwm, fwd=fwd, rev=rev, best=best, hit=hit, strand=strand,
                info=(freq * np.log(freq / bg)).sum(1), occupancy=occ, g=g, __stdout__=["hits"])


# 6 the KMP failure function and matcher as recurrences with a chain of borders
def kmp_np(pat, text):
    M = len(pat); fail = [0]
    for q in range(1, M):
        k = fail[-1]
        while k > 0 and pat[k] != pat[q]: k = fail[k - 1]
        fail.append(k + 1 if pat[k] == pat[q] else 0)
    st = []
    for t, c in enumerate(text):
        k = 0 if t == 0 else (fail[-1] if st[-1] == M else st[-1])
        while k > 0 and pat[k] != c: k = fail[k - 1]
        st.append(k + 1 if pat[k] == c else 0)
    return np.int32(fail), np.int32(st)
def kmp_inputs():
    pat = np.int32([0, 1, 0, 0, 1, 0, 1]); rg = R(907); text = rg.integers(0, 2, 40).astype(np.int32)
    text[5:12] = pat; text[20:27] = pat; text[25:32] = pat
    return dict(pat=pat, text=text)
@case("kmp_failure_rec", inputs=kmp_inputs, outputs=["fail", "state", "found", "starts", "count", "period"])
def _(pat, text):
    fail, st = kmp_np(pat, text); M = len(pat); cnt = int((st == M).sum())
    return dict(fail=fail, state=st, found=st == M, starts=np.int32(np.nonzero(st == M)[0] + 1 - M), count=np.int32(cnt),
                period=np.int32(M - fail[-1]),
                __stdout__=[f"{cnt} matches, period {M - fail[-1]}"])


# 7 k-mer spectra by one-hot sums
def spectrum_np(s, K=3):
    code = np.array([sum(s[i + p] * 4 ** (K - 1 - p) for p in range(K)) for i in range(len(s) - K + 1)])
    rc = np.array([sum((3 - s[i + p]) * 4 ** p for p in range(K)) for i in range(len(s) - K + 1)])
    return np.bincount(np.minimum(code, rc), minlength=64).astype(np.int32)
@case("kmer_spectrum", inputs=lambda: dict(x=R(908).integers(0, 4, 40).astype(np.int32), y=R(909).integers(0, 4, 33).astype(np.int32)),
      outputs=["hx", "hy", "l1", "cosine", "shared", "jaccard", "top", "top_bases"], vk=True)
def _(x, y):
    hx, hy = spectrum_np(x), spectrum_np(y); top = int(np.argmax(hx))
    cos = f32(hx @ hy) / np.sqrt(f32(hx @ hx) * f32(hy @ hy)); sh = ((hx > 0) & (hy > 0)).sum(); ei = ((hx > 0) | (hy > 0)).sum()
    return dict(hx=hx, hy=hy, l1=np.int32(np.abs(hx - hy).sum()), cosine=cos, shared=np.int32(sh), jaccard=f32(sh) / f32(ei),
                top=np.int32(top), top_bases=np.int32([top // 16 % 4, top // 4 % 4, top % 4]),
                __stdout__=[f"l1 {np.abs(hx - hy).sum()}, jaccard {sh / ei:.4f}"])


# 8 CTC forward-backward and its gradient
def ctc_inputs(T=9, C=5, seed=910):
    rg = R(seed); return dict(logits=rg.standard_normal((T, C)) * 1.5, labels=np.int32([2, 2, 4, 1]))
@case("ctc_alpha_beta", inputs=ctc_inputs, tol=(1e-8, 1e-10), outputs=["lp", "ext", "alpha", "rb", "logZ", "loss", "occ", "grad", "closed"])
def _(logits, labels):
    from scipy.special import logsumexp
    T, C = logits.shape; S = 2 * len(labels) + 1; NEG = -1e30
    lp = logits - logsumexp(logits, axis=1, keepdims=True)
    ext = np.zeros(S, np.int32); ext[1::2] = labels
    skip = np.array([s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2] for s in range(S)] + [False, False])
    al = np.full((T, S), NEG); al[0, :2] = lp[0, ext[:2]]
    for t in range(1, T):
        for s_ in range(S):
            al[t, s_] = logsumexp([al[t - 1, s_], al[t - 1, s_ - 1] if s_ >= 1 else NEG, al[t - 1, s_ - 2] if skip[s_] else NEG]) + lp[t, ext[s_]]
    rb = np.full((T, S), NEG); rb[0, S - 2:] = 0
    for r in range(1, T):
        u = T - r
        for s_ in range(S):
            rb[r, s_] = logsumexp([rb[r - 1, s_] + lp[u, ext[s_]], rb[r - 1, s_ + 1] + lp[u, ext[s_ + 1]] if s_ + 1 < S else NEG,
                                   rb[r - 1, s_ + 2] + lp[u, ext[s_ + 2]] if skip[s_ + 2] else NEG])
    logZ = logsumexp(al[-1, -2:]); occ = np.exp(al + rb[::-1] - logZ)
    closed = np.exp(lp) - np.stack([occ[:, ext == c].sum(1) for c in range(C)], 1)
    return dict(lp=lp, ext=ext, alpha=al, rb=rb, logZ=logZ, loss=-logZ, occ=occ, grad=closed, closed=closed,
                __stdout__=[f"ctc loss {-logZ:.6f}"])


# 9 banded DTW with guarded clauses and an argmin traceback
def dtw_inputs(T=9, U=10, F=2, seed=911):
    rg = R(seed); t = np.linspace(0, 3, T)[:, None]; u = np.linspace(0, 3, U)[:, None]
    return dict(x=(np.sin(t + np.arange(F)) + 0.1 * rg.standard_normal((T, F))).astype(f32),
                y=np.sin(u * 1.1 + np.arange(F)).astype(f32))
@case("dtw_band_guards", inputs=dtw_inputs, tol=(1e-5, 1e-5), outputs=["cost", "D", "dist", "mv", "pi", "pj", "path_len", "normalized", "dy"])
def _(x, y):
    T, U = len(x), len(y); cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    D = np.full((T, U), f32(1e9)); D[0, 0] = cost[0, 0]
    for i in range(T):
        for j in range(U):
            if abs(i - j) > 2 or i + j == 0: continue
            prev = [D[i - 1, j - 1] if i and j else np.inf, D[i - 1, j] if i else np.inf, D[i, j - 1] if j else np.inf]
            D[i, j] = cost[i, j] + min(prev)
    pi, pj, mv = [T - 1], [U - 1], []
    for s_ in range(T + U - 1):
        a, b = pi[-1], pj[-1]
        m = 3 if a == 0 and b == 0 else 2 if a == 0 else 1 if b == 0 else int(np.argmin([D[a - 1, b - 1], D[a - 1, b], D[a, b - 1]]))
        mv.append(m)
        if s_ < T + U - 2: pi.append(a - (m in (0, 1))); pj.append(b - (m in (0, 2)))
    mv = np.int32(mv); plen = 1 + int((mv < 3).sum())
    dy = np.zeros_like(y)
    for s_ in range(T + U - 1):
        if s_ == 0 or mv[s_ - 1] < 3:
            dy[pj[s_]] += -2 * (x[pi[s_]] - y[pj[s_]])
    return dict(cost=cost, D=D, dist=D[-1, -1], mv=mv, pi=np.int32(pi), pj=np.int32(pj), path_len=np.int32(plen),
                normalized=D[-1, -1] / f32(plen), dy=dy, __stdout__=[f"over {plen} cells"])


# 10 the dishonest casino's Viterbi path and its score's derivatives
def casino_inputs(seed=912):
    rg = R(seed); state = np.r_[np.zeros(8), np.ones(14), np.zeros(8)].astype(int)
    rolls = np.where(state == 1, np.where(rg.random(30) < 0.8, 5, rg.integers(0, 5, 30)), rg.integers(0, 6, 30))
    return dict(rolls=rolls.astype(np.int32), p_six=np.float64(0.5), stay=np.float64(0.95))
@case("casino_viterbi", inputs=casino_inputs, tol=(1e-10, 1e-12), outputs=["emit", "logT", "V", "bp", "best", "path", "edge", "stretches", "loaded", "d_six", "d_stay"])
def _(rolls, p_six, stay):
    emit = np.vstack([np.full(6, 1 / 6), np.r_[np.full(5, (1 - p_six) / 5), p_six]]); logE = np.log(emit)
    logT = np.log(np.array([[stay, 1 - stay], [1 - stay, stay]]))
    V = [np.log(0.5) + logE[:, rolls[0]]]; bp = []
    for t in range(1, 30):
        c = V[-1][:, None] + logT; bp.append(np.argmax(c, 0)); V.append(c.max(0) + logE[:, rolls[t]])
    V, bp = np.array(V), np.array([[0, 0]] + bp, np.int32); back = [int(np.argmax(V[-1]))]
    for k in range(1, 30):
        back.append(bp[30 - k, back[-1]])
    path = np.int32(back[::-1]); edge = np.int32([0] + [{(0, 1): 1, (1, 0): -1}.get((path[t - 1], path[t]), 0) for t in range(1, 30)])
    d_six = sum((1 / p_six if rolls[t] == 5 else -1 / (1 - p_six)) for t in range(30) if path[t] == 1)
    same = int((path[1:] == path[:-1]).sum())
    return dict(emit=emit, logT=logT, V=V, bp=bp, best=V[-1].max(), path=path, edge=edge,
                stretches=np.int32((edge == 1).sum() + (path[0] == 1)), loaded=np.int32(path.sum()), d_six=np.float64(d_six),
                d_stay=np.float64(same / stay - (29 - same) / (1 - stay)), __stdout__=[f"{path.sum()} loaded rolls"])


# 11 run-length coding both ways
@case("rle_roundtrip", inputs=lambda: dict(vals=np.int32([4, 4, 7, 1, 1, 1, 9, 3, 3]), counts=np.int32([3, 2, 1, 150, 0, 4, 2, 1, 1])),
      outputs=["decoded", "n", "starts", "runs", "run_vals", "run_lens", "bytes", "merged", "again"], vk=True)
def _(vals, counts):
    dec = np.repeat(vals, counts).astype(np.int32); n = len(dec)
    starts = np.int32([i for i in range(n) if i == 0 or dec[i] != dec[i - 1]]); runs = len(starts)
    lens = np.diff(np.r_[starts, n]).astype(np.int32)
    size = lambda m: 2 if m <= 127 else 2 * ((m + 126) // 127)
    return dict(decoded=dec, n=np.int32(n), starts=starts, runs=np.int32(runs), run_vals=dec[starts], run_lens=lens,
                bytes=np.int32(sum(size(m) for m in lens)), merged=np.int32(len(vals) - runs), again=dec,
                __stdout__=[f"{n} symbols in {runs} runs, {sum(size(m) for m in lens)} bytes"])


# 12 LCS in i8 and the Damerau (OSA) distance in i16 over a batch of pairs
def edit_inputs(B=4, M=7, N=9, seed=913):
    rg = R(seed); a = rg.integers(0, 4, (B, M)); b = rg.integers(0, 4, (B, N))
    b[0, :M] = a[0]; b[1, :M] = a[1]; b[1, [2, 3]] = b[1, [3, 2]]
    return dict(a=a.astype(np.int8), b=b.astype(np.int8))
@case("edit_widths", inputs=edit_inputs, outputs=["L", "D", "lcs", "osa", "indel", "closer"])
def _(a, b):
    B, M = a.shape; N = b.shape[1]
    L = np.zeros((B, M + 1, N + 1), np.int8); D = np.zeros((B, M + 1, N + 1), np.int16)
    D[:, :, 0] = np.arange(M + 1); D[:, 0, :] = np.arange(N + 1)
    for p in range(B):
        for i in range(1, M + 1):
            for j in range(1, N + 1):
                L[p, i, j] = L[p, i - 1, j - 1] + 1 if a[p, i - 1] == b[p, j - 1] else max(L[p, i - 1, j], L[p, i, j - 1])
                d = min(D[p, i - 1, j] + 1, D[p, i, j - 1] + 1, D[p, i - 1, j - 1] + (a[p, i - 1] != b[p, j - 1]))
                if i > 1 and j > 1 and a[p, i - 1] == b[p, j - 2] and a[p, i - 2] == b[p, j - 1]:
                    d = min(d, D[p, i - 2, j - 2] + 1)
                D[p, i, j] = d
    lcs = L[:, M, N].astype(np.int32); osa = D[:, M, N].astype(np.int32); indel = M + N - 2 * lcs
    return dict(L=L, D=D, lcs=lcs, osa=osa, indel=indel, closer=np.where(osa < indel, 1, np.where(osa == indel, 0, -1)).astype(np.int32),
                __stdout__=["lcs", "osa"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
