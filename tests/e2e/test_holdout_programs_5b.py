"""Hold-out programs, fifth round (real-size neural networks and sequence models), written as users
of the language would write them and checked against NumPy computed here: a graph convolutional
network trained by gradient descent, CTC loss, greedy and beam decoding, a top-2 mixture of experts, a
VAE, ResNet and MobileNet blocks, a 4-block transformer, a dilated TCN, an LSTM language model and a
small U-Net, with gradients. Each case states its tolerance (`tol`, rtol and atol; integers
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
@case("gcn_train", inputs=gcn_inputs, outputs=["An", "curve", "out", "pred", "acc"], tol=(2e-3, 2e-4), vk=True)
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
@case("greedy_rnn_decode", inputs=greedy_inputs, outputs=["tok", "logp", "emitted", "score", "length"], tol=(1e-3, 1e-4), vk=True)
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



# 4 beam search over a bigram model, candidates ranked by counting, the best path walked back
def beam_inputs(V=50):
    rg = R(504); z = 2.0 * rg.standard_normal((V, V))
    return dict(logp=(z - logsumexp(z)[:, None]).astype(f32), first=np.int32(3))
@case("beam_search", inputs=beam_inputs, outputs=["score", "last", "parent", "back", "best", "best_score"], tol=(1e-5, 1e-4),
      dims={"V": 50}, vk=True)          # a fixed V keeps the kernels within Vulkan's 128 bytes of push constants
def _(logp, first):
    K, T, V = 4, 12, len(logp); lp = logp.astype(f32)
    score = [np.array([0, -1e9, -1e9, -1e9], f32)]; last = [np.full(K, first)]; parent = [np.arange(K)]
    for t in range(1, T):
        cand = (score[-1][:, None] + lp[last[-1]]).ravel()          # float32 sums as the program's
        pick = np.argsort(-cand, kind="stable")[:K]
        score.append(cand[pick]); last.append(pick % V); parent.append(pick // V)
    back = [0]
    for u in range(1, T):
        back.append(parent[T - u][back[-1]])
    best = [last[t][back[T - 1 - t]] for t in range(T)]
    i32 = lambda a: np.array(a, np.int32)
    return dict(score=np.array(score), last=i32(last), parent=i32(parent), back=i32(back), best=i32(best), best_score=score[-1][0])



# 5 a mixture of experts with top-2 gating, a load-balancing term, gradients by router and experts
def moe_inputs(N=64, D=64, E=8, F=96):
    rg = R(505)
    return dict(x=rg.standard_normal((N, D)).astype(f32), target=rg.standard_normal((N, D)).astype(f32),
                Wg=(rg.standard_normal((D, E)) / 8).astype(f32), W1=(rg.standard_normal((E, D, F)) / 8).astype(f32),
                W2=(rg.standard_normal((E, F, D)) / 10).astype(f32))
@case("moe_top2", inputs=moe_inputs, outputs=["choice", "gate", "y", "load", "balance", "loss", "dWg", "dW1"], tol=(2e-3, 2e-4))
def _(x, target, Wg, W1, W2):
    x, target, Wg, W1, W2 = (a.astype(np.float64) for a in (x, target, Wg, W1, W2)); N, D = x.shape; E = Wg.shape[1]
    c = 0.7978846
    gelu = lambda z: 0.5 * z * (1 + np.tanh(c * (z + 0.044715 * z ** 3)))
    dgelu = lambda z: (lambda th: 0.5 * (1 + th) + 0.5 * z * (1 - th ** 2) * c * (1 + 3 * 0.044715 * z ** 2))(np.tanh(c * (z + 0.044715 * z ** 3)))
    r = x @ Wg; order = np.argsort(-r, 1, kind="stable"); a, b = order[:, 0], order[:, 1]; rows = np.arange(N)
    w1 = 1 / (1 + np.exp(r[rows, b] - r[rows, a]))
    g = np.zeros((N, E)); g[rows, a] = w1; g[rows, b] = 1 - w1
    z = np.einsum("nd,edf->nef", x, W1); o = np.einsum("nef,efd->ned", gelu(z), W2)
    y = x + np.einsum("ne,ned->nd", g, o)
    p = np.exp(r - logsumexp(r)[:, None]); load = np.bincount(a, minlength=E) / N
    bal = E * (load * p.mean(0)).sum(); loss = ((y - target) ** 2).mean() + 0.01 * bal
    dy = 2 * (y - target) / (N * D)
    dz = np.einsum("nd,efd->nef", dy, W2) * g[:, :, None] * dgelu(z)
    dg = np.einsum("nd,ned->ne", dy, o); dw = dg[rows, a] - dg[rows, b]; dl = dw * w1 * (1 - w1)
    dr = np.zeros((N, E)); dr[rows, a] += dl; dr[rows, b] -= dl
    dp = 0.01 * E * load / N; dr += p * (dp - (p * dp).sum(1, keepdims=True))
    return dict(choice=np.int32(order[:, :2]), gate=g, y=y, load=load, balance=bal, loss=loss,
                dWg=x.T @ dr, dW1=np.einsum("nd,nef->edf", x, dz))



# 6 a variational autoencoder trained S steps by gradient descent (reparameterized with fixed noise)
def vae_inputs(B=32, P=196, H=64, Z=8):
    rg = R(506); proto = rg.random((4, P)) < 0.3
    X = np.where(rg.random((B, P)) < 0.1, ~proto[rg.integers(0, 4, B)], proto[rg.integers(0, 4, B)]).astype(f32)
    return dict(X=X, eps=rg.standard_normal((B, Z)).astype(f32), Enc0=(rg.standard_normal((P, H)) / 14).astype(f32),
                Mu0=(rg.standard_normal((H, Z)) / 8).astype(f32), Lv0=(rg.standard_normal((H, Z)) / 16).astype(f32),
                Dec0=(rg.standard_normal((Z, P)) / 3).astype(f32))
def vae_step(X, eps, Enc, Mu, Lv, Dec):
    """(reconstruction, KL) and the four gradients of their sum."""
    B = len(X); h = np.tanh(X @ Enc); mu = h @ Mu; lv = h @ Lv; sd = np.exp(0.5 * lv); code = mu + sd * eps
    xr = 1 / (1 + np.exp(-(code @ Dec)))
    rec = -(X * np.log(xr + 1e-6) + (1 - X) * np.log(1 - xr + 1e-6)).sum() / B
    kl = -0.5 * (1 + lv - mu * mu - np.exp(lv)).sum() / B
    da = -(X / (xr + 1e-6) - (1 - X) / (1 - xr + 1e-6)) / B * xr * (1 - xr)
    dcode = da @ Dec.T; dmu = dcode + mu / B; dlv = dcode * eps * 0.5 * sd - 0.5 * (1 - np.exp(lv)) / B
    dpre = (dmu @ Mu.T + dlv @ Lv.T) * (1 - h * h)
    return rec, kl, (X.T @ dpre, h.T @ dmu, h.T @ dlv, code.T @ da)
@case("vae_train", inputs=vae_inputs, outputs=["rec_curve", "kl_curve", "Dec"], tol=(2e-3, 2e-4))
def _(X, eps, Enc0, Mu0, Lv0, Dec0):
    X, eps = X.astype(np.float64), eps.astype(np.float64)
    params = [a.astype(np.float64) for a in (Enc0, Mu0, Lv0, Dec0)]; recs, kls, decs = [], [], []
    for s in range(8):
        rec, kl, grads = vae_step(X, eps, *params); recs.append(rec); kls.append(kl); decs.append(params[3])
        params = [p - 0.005 * g for p, g in zip(params, grads)]
    return dict(rec_curve=np.array(recs), kl_curve=np.array(kls), Dec=np.array(decs))



# 7 a ResNet basic block and a MobileNet block (batch norm in training mode), a class score's
# gradient by the first kernel by hand-written backpropagation
def conv3_np(x, k):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))); H, W = x.shape[2:]
    return sum(np.einsum("nchw,oc->nohw", xp[:, :, a:a + H, b:b + W], k[:, :, a, b]) for a in range(3) for b in range(3))
def bn_np(x, g):
    m = x.mean((0, 2, 3), keepdims=True); sd = np.sqrt(x.var((0, 2, 3), keepdims=True) + 1e-5); xh = (x - m) / sd
    back = lambda dy: g[None, :, None, None] / sd * (dy - dy.mean((0, 2, 3), keepdims=True) - xh * (dy * xh).mean((0, 2, 3), keepdims=True))
    return g[None, :, None, None] * xh, back
def resnet_inputs(N=2, C=16, H=16, M=32):
    rg = R(507)
    return dict(X=rg.standard_normal((N, C, H, H)).astype(f32), K1=(rg.standard_normal((C, C, 3, 3)) / 12).astype(f32),
                K2=(rg.standard_normal((C, C, 3, 3)) / 12).astype(f32), Kd=(rg.standard_normal((C, 3, 3)) / 3).astype(f32),
                Kp=(rg.standard_normal((M, C)) / 4).astype(f32), gamma=(1 + 0.2 * rg.standard_normal((3, C))).astype(f32),
                Wfc=(rg.standard_normal((M, 10)) / 5).astype(f32))
@case("resnet_mobilenet", inputs=resnet_inputs, outputs=["res", "pw", "logits", "score", "dK1"], tol=(2e-3, 2e-4))
def _(X, K1, K2, Kd, Kp, gamma, Wfc):
    X, K1, K2, Kd, Kp, gamma, Wfc = (a.astype(np.float64) for a in (X, K1, K2, Kd, Kp, gamma, Wfc))
    H = X.shape[2]; h2 = H // 2
    z1 = conv3_np(X, K1); b1, bk1 = bn_np(z1, gamma[0]); a = relu(b1)
    z2 = conv3_np(a, K2); b2, bk2 = bn_np(z2, gamma[1]); r = relu(b2 + X)
    rp = np.pad(r, ((0, 0), (0, 0), (1, 1), (1, 1)))
    d = sum(rp[:, :, p:p + 2 * h2:2, q:q + 2 * h2:2] * Kd[None, :, p, q, None, None] for p in range(3) for q in range(3))
    dnp, bk3 = bn_np(d, gamma[2]); dn = np.clip(dnp, 0, 6)
    pwp = np.einsum("mc,nchw->nmhw", Kp, dn); pw = np.clip(pwp, 0, 6); logits = pw.mean((2, 3)) @ Wfc
    dpwp = np.broadcast_to(Wfc[None, :, 3, None, None] / h2 ** 2, pw.shape) * ((pwp > 0) & (pwp < 6))
    dd = bk3(np.einsum("mc,nmhw->nchw", Kp, dpwp) * ((dnp > 0) & (dnp < 6)))
    drp = np.zeros_like(rp)
    for p in range(3):
        for q in range(3):
            drp[:, :, p:p + 2 * h2:2, q:q + 2 * h2:2] += dd * Kd[None, :, p, q, None, None]
    dz2 = bk2(drp[:, :, 1:-1, 1:-1] * (b2 + X > 0))
    da = conv3_np(dz2, K2[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
    dz1 = bk1(da * (b1 > 0)); Xp = np.pad(X, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dK1 = np.array([[np.einsum("nohw,nchw->oc", dz1, Xp[:, :, a_:a_ + H, b_:b_ + H]) for b_ in range(3)] for a_ in range(3)]).transpose(2, 3, 0, 1)
    return dict(res=r, pw=pw, logits=logits, score=logits[:, 3].sum(), dK1=dK1)



# 8 a 4-block pre-norm causal transformer over named dims, tied readout, next-token loss
def transformer_inputs(B=2, T=32, D=64, V=96):
    rg = R(508); w = lambda *shape: (rg.standard_normal(shape) / np.sqrt(shape[-2])).astype(f32)
    return dict(tokens=rg.integers(0, V, (B, T)).astype(np.int32), Emb=(0.5 * rg.standard_normal((V, D))).astype(f32),
                Pos=(0.1 * rg.standard_normal((T, D))).astype(f32), Wqkv=w(4, D, 3 * D), Wo=w(4, D, D) / 2,
                W1=w(4, D, 4 * D), W2=w(4, 4 * D, D) / 2)
@case("transformer_stack", inputs=transformer_inputs, outputs=["x", "logp", "nll"], tol=(2e-3, 2e-4))
def _(tokens, Emb, Pos, Wqkv, Wo, W1, W2):
    Emb, Pos, Wqkv, Wo, W1, W2 = (a.astype(np.float64) for a in (Emb, Pos, Wqkv, Wo, W1, W2))
    B, T = tokens.shape; D = Emb.shape[1]; hd = D // 4
    norm = lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    gelu = lambda z: 0.5 * z * (1 + np.tanh(0.7978846 * (z + 0.044715 * z ** 3)))
    heads = lambda a: a.reshape(B, T, 4, hd).transpose(0, 2, 1, 3)
    xs = [Emb[tokens] + Pos]
    for l in range(4):
        x = xs[-1]; qkv = norm(x) @ Wqkv[l]; q, k, v = (heads(qkv[..., c * D:(c + 1) * D]) for c in range(3))
        sc = np.where(np.tril(np.ones((T, T), bool)), q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd), -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
        x1 = x + (p @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ Wo[l]
        xs.append(x1 + gelu(norm(x1) @ W1[l]) @ W2[l])
    lg = norm(xs[-1]) @ Emb.T; logp = lg - logsumexp(lg)[..., None]
    nll = -np.take_along_axis(logp[:, :-1], tokens[:, 1:, None], -1).mean()
    return dict(x=np.array(xs), logp=logp, nll=nll)



# 9 a temporal convolutional net: dilated causal convolutions as a recurrence over layers,
# the gradient of the next-sample error by the stacked kernels
def tcn_inputs(Cin=4, T=64, C=32, L=4):
    rg = R(509); t = np.arange(T)
    x = np.stack([np.sin(0.2 * t * (i + 1)) for i in range(Cin)]) + 0.1 * rg.standard_normal((Cin, T))
    return dict(x=x.astype(f32), Win=(rg.standard_normal((C, Cin)) / 2).astype(f32),
                K=(rg.standard_normal((L, C, C, 3)) / 10).astype(f32), bias=(0.1 * rg.standard_normal((L, C))).astype(f32),
                head=(rg.standard_normal(C) / 6).astype(f32))
def tcn_np(x, Win, K, bias, head):
    L = len(K); T = x.shape[1]; hs = [Win @ x]; zs = []
    for l in range(L):
        h = hs[-1]; d = 2 ** l
        z = sum(K[l, :, :, k] @ np.pad(h, ((0, 0), (k * d, 0)))[:, :T] for k in range(3)) + bias[l][:, None]
        zs.append(z); hs.append(h + relu(z))
    return hs, zs, head @ hs[-1][:, :-1]
@case("tcn_dilated", inputs=tcn_inputs, outputs=["h", "pred", "mse", "dK", "field", "full_from"], tol=(2e-3, 2e-4))
def _(x, Win, K, bias, head):
    x, Win, K, bias, head = (a.astype(np.float64) for a in (x, Win, K, bias, head)); L = len(K); T = x.shape[1]
    hs, zs, pred = tcn_np(x, Win, K, bias, head)
    dh = np.zeros_like(hs[-1]); dh[:, :-1] = np.outer(head, 2 * (pred - x[0, 1:]) / (T - 1)); dK = np.zeros_like(K)
    for l in range(L - 1, -1, -1):
        d = 2 ** l; dz = dh * (zs[l] > 0); h = hs[l]; dprev = dh.copy()
        for k in range(3):
            dK[l, :, :, k] = dz @ np.pad(h, ((0, 0), (k * d, 0)))[:, :T].T
            dprev[:, :T - k * d] += K[l, :, :, k].T @ dz[:, k * d:]
        dh = dprev
    return dict(h=np.array(hs), pred=pred, mse=((pred - x[0, 1:]) ** 2).mean(), dK=dK,
                field=np.int32(1 + sum(2 * 2 ** l for l in range(L))), full_from=np.int32([2 * (2 ** (l + 1) - 1) for l in range(L)]))



# 10 an LSTM language model (gates stacked, activations by a match), BPTT by the embedding and
# the recurrent weights
def lstm_inputs(T=24, B=4, V=80, E=32, H=48):
    rg = R(510)
    return dict(tokens=rg.integers(0, V, (T, B)).astype(np.int32), Emb=(0.5 * rg.standard_normal((V, E))).astype(f32),
                Wx=(rg.standard_normal((4, E, H)) / np.sqrt(E)).astype(f32), Wh=(rg.standard_normal((4, H, H)) / np.sqrt(H)).astype(f32),
                bias=(0.1 * rg.standard_normal((4, H))).astype(f32), Wout=(rg.standard_normal((H, V)) / np.sqrt(H)).astype(f32))
@case("lstm_lm", inputs=lstm_inputs, outputs=["logits", "loss", "dEmb", "dWh", "perplexity", "hits"], tol=(2e-3, 2e-5))
def _(tokens, Emb, Wx, Wh, bias, Wout):
    Emb, Wx, Wh, bias, Wout = (a.astype(np.float64) for a in (Emb, Wx, Wh, bias, Wout))
    T, B = tokens.shape; H = Wh.shape[1]; sig = lambda z: 1 / (1 + np.exp(-z))
    hs, cs, gs = [np.zeros((B, H))], [np.zeros((B, H))], [None]
    for t in range(1, T):
        z = np.einsum("be,geh->gbh", Emb[tokens[t - 1]], Wx) + np.einsum("bk,gkh->gbh", hs[-1], Wh) + bias[:, None]
        g = np.stack([sig(z[0]), sig(z[1]), np.tanh(z[2]), sig(z[3])]); gs.append(g)
        cs.append(g[1] * cs[-1] + g[0] * g[2]); hs.append(g[3] * np.tanh(cs[-1]))
    logits = np.zeros((T, B, Wout.shape[1])); logits[1:] = np.array(hs[1:]) @ Wout
    n = (T - 1) * B; p = np.exp(logits - logsumexp(logits)[..., None])
    loss = sum(logsumexp(logits[t])[b] - logits[t, b, tokens[t, b]] for t in range(1, T) for b in range(B)) / n
    dEmb = np.zeros_like(Emb); dWh = np.zeros_like(Wh); dh = np.zeros((B, H)); dc = np.zeros((B, H))
    for t in range(T - 1, 0, -1):
        dl = p[t].copy(); dl[np.arange(B), tokens[t]] -= 1; dh = dh + dl @ Wout.T / n
        g = gs[t]; tc = np.tanh(cs[t]); dc = dc + dh * g[3] * (1 - tc ** 2)
        dg = np.stack([dc * g[2], dc * cs[t - 1], dc * g[0], dh * tc])
        dz = dg * np.stack([g[0] * (1 - g[0]), g[1] * (1 - g[1]), 1 - g[2] ** 2, g[3] * (1 - g[3])])
        dWh += np.einsum("bk,gbh->gkh", hs[t - 1], dz)
        np.add.at(dEmb, tokens[t - 1], np.einsum("gbh,geh->be", dz, Wx))
        dh = np.einsum("gbh,gkh->bk", dz, Wh); dc = dc * g[1]
    hits = sum(int(logits[t, b].argmax() == tokens[t, b]) for t in range(1, T) for b in range(B))
    return dict(logits=logits, loss=loss, dEmb=dEmb, dWh=dWh, perplexity=np.exp(loss), hits=np.int32(hits))



# 11 a small U-Net (library conv and max pool, a skip joined by two clauses), Dice loss gradients
def conv3_grads(x, k, dy):
    """The gradients of conv3_np(x, k) by x and by k, given dy."""
    H, W = x.shape[2:]; xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dk = np.array([[np.einsum("nohw,nchw->oc", dy, xp[:, :, a:a + H, b:b + W]) for b in range(3)] for a in range(3)]).transpose(2, 3, 0, 1)
    return conv3_np(dy, k[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)), dk
def unet_inputs(N=2, S=32):
    rg = R(511); yy, xx = np.mgrid[0:S, 0:S]
    mask = np.array([((yy - 10 - 8 * n) ** 2 + (xx - 14) ** 2 < 60).astype(f32) for n in range(N)])
    X = (np.stack([mask, 1 - mask, mask * 0.5], 1) + 0.3 * rg.standard_normal((N, 3, S, S))).astype(f32)
    return dict(X=X, mask=mask, K1=(rg.standard_normal((16, 3, 3, 3)) / 4).astype(f32), K2=(rg.standard_normal((32, 16, 3, 3)) / 10).astype(f32),
                K3=(rg.standard_normal((16, 48, 3, 3)) / 15).astype(f32), Kh=(rg.standard_normal(16) / 3).astype(f32))
@case("unet_small", inputs=unet_inputs, outputs=["prob", "dice", "dK1", "dK2", "predicted"], tol=(2e-3, 2e-5))
def _(X, mask, K1, K2, K3, Kh):
    X, mask, K1, K2, K3, Kh = (a.astype(np.float64) for a in (X, mask, K1, K2, K3, Kh))
    N, _, S, _ = X.shape; h = S // 2
    z1 = conv3_np(X, K1); e1 = relu(z1)
    win = e1.reshape(N, 16, h, 2, h, 2); p1 = win.max((3, 5))
    z2 = conv3_np(p1, K2); b = relu(z2)
    cat = np.concatenate([e1, b.repeat(2, 2).repeat(2, 3)], 1)
    z3 = conv3_np(cat, K3); d = relu(z3); prob = 1 / (1 + np.exp(-np.einsum("c,nchw->nhw", Kh, d)))
    inter = (prob * mask).sum(); den = (prob + mask).sum() + 1; dice = 1 - (2 * inter + 1) / den
    dprob = -(2 * mask * den - (2 * inter + 1)) / den ** 2
    dd = np.einsum("c,nhw->nchw", Kh, dprob * prob * (1 - prob))
    dcat, _ = conv3_grads(cat, K3, dd * (z3 > 0))
    db = dcat[:, 16:].reshape(N, 32, h, 2, h, 2).sum((3, 5))
    dp1, dK2 = conv3_grads(p1, K2, db * (z2 > 0))
    hit = win == p1[:, :, :, None, :, None]
    de1 = dcat[:, :16] + (hit * dp1[:, :, :, None, :, None]).reshape(e1.shape)
    _, dK1 = conv3_grads(X, K1, de1 * (z1 > 0))
    return dict(prob=prob, dice=dice, dK1=dK1, dK2=dK2, predicted=np.int32((prob > 0.5).sum()))


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
