"""The examples, run on real data against independent NumPy references."""
from pathlib import Path

import numpy as np
import pytest

import einc

ROOT = Path(__file__).resolve().parents[2]
MNIST = ROOT.parent / "shared" / "data" / "mnist"


def mnist_reference(x, w1, b1, w2, b2, wf, bf):
    """The network of shared/data/mnist/README.md in float64 NumPy."""
    def conv_relu(a, w, b):
        n, c, h, wd = a.shape
        padded = np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2)))
        out = np.zeros((n, w.shape[0], h, wd))
        for kh in range(5):
            for kw in range(5):
                out += np.einsum("nchw,oc->nohw", padded[:, :, kh:kh + h, kw:kw + wd], w[:, :, kh, kw])
        return np.maximum(out + b[None, :, None, None], 0)

    def pool(a, k):
        n, c, h, w = a.shape
        a = a[:, :, :h // k * k, :w // k * k]
        return a.reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))

    feats = pool(conv_relu(pool(conv_relu(1.0 - x, w1, b1), 2), w2, b2), 3).reshape(len(x), -1)
    return feats @ wf + bf


@pytest.mark.skipif(not MNIST.is_dir(), reason="shared/data/mnist is not beside the repository")
@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_mnist_cnn_classifies_all_ten_digits(target):
    # named convolutions, pooling and a matmul over a collapsed operand on both targets
    data = {k: np.load(MNIST / f"{f}.npy") for k, f in [
        ("X", "samples"), ("W1", "conv1_w"), ("b1", "conv1_b"), ("W2", "conv2_w"),
        ("b2", "conv2_b"), ("Wf", "fc_w"), ("bf", "fc_b")]}
    labels = np.load(MNIST / "labels.npy")
    art = einc.compile(ROOT / "examples" / "mnist" / "cnn.ein", target=target, outputs=["logits", "digit"])
    out = einc.load(art.vmfb)(**data)
    ref = mnist_reference(*(data[k].astype(np.float64) for k in ("X", "W1", "b1", "W2", "b2", "Wf", "bf")))
    np.testing.assert_allclose(out["logits"], ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(out["digit"], labels)
