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


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
