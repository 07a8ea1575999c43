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
@case("nw_argmax_trace", inputs=nw_inputs, outputs=["S", "cand", "mv", "ti", "tj", "steps", "identities", "score_total"], vk=True)
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


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
