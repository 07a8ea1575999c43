"""Hold-out programs, fifth round (real-size neural networks and sequence models), written as users
of the language would write them and checked against NumPy computed here: a graph convolutional
network trained by gradient descent. Each case states its tolerance (`tol`, rtol and atol; integers
and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32


def relu(x):
    return np.maximum(x, 0)


def logsumexp(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis, keepdims=True))).squeeze(axis)


# 1 a two-layer GCN with a degree-normalized adjacency, trained S steps by gradient descent
def gcn_inputs(N=96, F=48):
    rg = R(501); A = (rg.random((N, N)) < 0.06).astype(f32); A = np.maximum(A, A.T); np.fill_diagonal(A, 0)
    labels = rg.integers(0, 4, N).astype(np.int32)
    X = (rg.standard_normal((N, F)) + np.eye(4)[labels] @ rg.standard_normal((4, F))).astype(f32)
    return dict(A=A, X=X, labels=labels, train=rg.random(N) < 0.5,
                W1i=(0.2 * rg.standard_normal((F, 16))).astype(f32), W2i=(0.3 * rg.standard_normal((16, 4))).astype(f32))
@case("gcn_train", inputs=gcn_inputs, outputs=["An", "curve", "out", "pred", "acc"], tol=(2e-3, 2e-4))
def _(A, X, labels, train, W1i, W2i):
    A, X = A.astype(np.float64), X.astype(np.float64)
    Ah = A + np.eye(len(A)); d = Ah.sum(1); An = Ah / np.sqrt(d[:, None] * d[None, :]); XA = An @ X
    n = train.sum(); Y = np.eye(4)[labels]
    def fwd(W1, W2):
        z = XA @ W1; h = relu(z); o = An @ (h @ W2)
        return z, h, o
    def loss_grad(W1, W2):
        z, h, o = fwd(W1, W2)
        p = np.exp(o - logsumexp(o)[:, None]); L = ((logsumexp(o) - o[np.arange(len(o)), labels]) * train).sum()
        do = (p - Y) * train[:, None]; dhw = An.T @ do; dW2 = h.T @ dhw; dz = (dhw @ W2.T) * (z > 0)
        return L, XA.T @ dz, dW2
    W1, W2 = W1i.astype(np.float64), W2i.astype(np.float64); curve = []
    for s in range(5):
        L, g1, g2 = loss_grad(W1, W2); curve.append(L / n)
        if s < 4:
            W1, W2 = W1 - 0.5 * g1 / n, W2 - 0.5 * g2 / n
    out = fwd(W1, W2)[2]; pred = out.argmax(1)
    return dict(An=An, curve=np.array(curve), out=out, pred=pred.astype(np.int32),
                acc=np.int32(((pred == labels) & ~train).sum()))



# 2 CTC forward loss in log space over a batch, with its gradient by the logits
def ctc_np(lp, lab):
    """Negative log-likelihood and its gradient by the logits (alpha-beta in log space)."""
    T, C = lp.shape; ext = np.zeros(2 * len(lab) + 1, int); ext[1::2] = lab; S = len(ext)
    skip = np.array([s >= 2 and s % 2 == 1 and ext[s] != ext[s - 2] for s in range(S)])
    la = np.full((T, S), -np.inf); lb = np.full((T, S), -np.inf)
    la[0, :2] = lp[0, ext[:2]]; lb[T - 1, S - 2:] = lp[T - 1, ext[S - 2:]]
    for t in range(1, T):
        for s in range(S):
            terms = [la[t - 1, s]] + ([la[t - 1, s - 1]] if s >= 1 else []) + ([la[t - 1, s - 2]] if skip[s] else [])
            la[t, s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
    for t in range(T - 2, -1, -1):
        for s in range(S):
            terms = [lb[t + 1, s]] + ([lb[t + 1, s + 1]] if s + 1 < S else []) + ([lb[t + 1, s + 2]] if s + 2 < S and skip[s + 2] else [])
            lb[t, s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
    logp = np.logaddexp(la[T - 1, S - 1], la[T - 1, S - 2])
    post = np.exp(la + lb - lp[:, ext] - logp)              # occupancy of each state
    occ = np.zeros((T, C))
    for s in range(S):
        occ[:, ext[s]] += post[:, s]
    return -logp, np.exp(lp) - occ
def ctc_inputs(B=4, T=48, C=28, L=12):
    rg = R(502); labels = rg.integers(1, C, (B, L)).astype(np.int32); labels[:, 3] = labels[:, 2]  # a repeat needs a blank
    return dict(logits=rg.standard_normal((B, T, C)).astype(f32), labels=labels)
@case("ctc_loss", inputs=ctc_inputs, outputs=["ext", "alpha", "nll", "loss", "dlogits"], tol=(1e-3, 1e-4), vk=True)
def _(logits, labels):
    x = logits.astype(np.float64); lp = x - logsumexp(x)[..., None]; B, T, _ = x.shape; S = 2 * labels.shape[1] + 1
    res = [ctc_np(lp[b], labels[b]) for b in range(B)]
    ext = np.zeros((B, S), np.int32); ext[:, 1::2] = labels
    alpha = np.full((B, T, S), -1e30)
    for b in range(B):
        skip = [s >= 2 and s % 2 == 1 and ext[b, s] != ext[b, s - 2] for s in range(S)]
        alpha[b, 0, :2] = lp[b, 0, ext[b, :2]]
        for t in range(1, T):
            for s in range(S):
                terms = [alpha[b, t - 1, s]] + ([alpha[b, t - 1, s - 1]] if s >= 1 else [-1e30]) + ([alpha[b, t - 1, s - 2]] if skip[s] else [-1e30])
                alpha[b, t, s] = np.logaddexp.reduce(terms) + lp[b, t, ext[b, s]]
    nll = np.array([r[0] for r in res])
    return dict(ext=ext, alpha=alpha, nll=nll, loss=nll.mean(), dlogits=np.array([r[1] for r in res]) / B)



# 3 greedy decoding from a tanh RNN, each step's argmax fed back as the next input
def greedy_inputs(V=64, D=96):
    rg = R(503)
    return dict(Emb=rg.standard_normal((V, D)).astype(f32), Wh=(rg.standard_normal((D, D)) / np.sqrt(D)).astype(f32),
                Wo=(1.5 * rg.standard_normal((D, V)) / np.sqrt(D)).astype(f32), h0=(0.1 * rg.standard_normal(D)).astype(f32),
                start=np.int32(7), eos=np.int32(45))
@case("greedy_rnn_decode", inputs=greedy_inputs, outputs=["tok", "logp", "emitted", "score", "length"], tol=(1e-3, 1e-4))
def _(Emb, Wh, Wo, h0, start, eos):
    h = h0.astype(np.float64); toks = [int(start)]; lps = [0.0]
    for t in range(1, 40):
        h = np.tanh(h @ Wh + Emb[toks[-1]]); lg = h @ Wo; toks.append(int(lg.argmax())); lps.append(lg.max() - logsumexp(lg))
    toks = np.int32(toks); ended = np.zeros(40, bool); ended[0] = start == eos
    for t in range(1, 40):
        ended[t] = ended[t - 1] or toks[t - 1] == eos
    lps = np.array(lps)
    return dict(tok=toks, logp=lps, emitted=np.where(ended, -1, toks).astype(np.int32),
                score=lps[1:][~ended[1:]].sum(), length=np.int32((~ended).sum()))


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
