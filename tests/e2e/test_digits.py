"""The digits classifier (examples/digits): softmax regression trained by gradient descent written
in Einlang on scikit-learn's bundled 8x8 digits, against the same loop in NumPy float64."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import einc

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("sklearn")


def digits_split() -> dict:
    spec = importlib.util.spec_from_file_location("digits_data", ROOT / "tools" / "digits_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.digits_split()


def softmax_regression(X_train, y_train, steps=300, lr=0.5):
    """The example's training loop in float64: returns the first and last weights' losses, W."""
    F = np.hstack([X_train / 16.0, np.ones((len(X_train), 1))])
    rows = np.arange(len(F))
    W = np.zeros((65, 10))

    def loss_and_gradient(W):
        z = F @ W
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        dz = p.copy()
        dz[rows, y_train] -= 1
        return -np.log(p[rows, y_train]).mean(), F.T @ dz / len(F)

    first = loss_and_gradient(W)[0]
    for _ in range(1, steps):
        W = W - lr * loss_and_gradient(W)[1]
    return first, loss_and_gradient(W)[0], W


@pytest.mark.full
def test_digits_classifier_reaches_90_percent_on_held_out_digits(capfd):
    data = digits_split()
    art = einc.compile(ROOT / "examples" / "digits" / "train_digits.ein",
                       outputs=["W", "first_loss", "final_loss", "accuracy"])
    out = einc.load(art.vmfb)(**data)
    first, final, W = softmax_regression(data["X_train"].astype(np.float64), data["y_train"])
    # float32 training against float64: 300 steps drift by ~1e-5 relative
    np.testing.assert_allclose(out["W"][-1], W, rtol=0, atol=1e-3)
    np.testing.assert_allclose([out["first_loss"], out["final_loss"]], [first, final], rtol=1e-4)
    F_test = np.hstack([data["X_test"] / 16.0, np.ones((len(data["X_test"]), 1))])
    reference_accuracy = ((F_test @ W).argmax(1) == data["y_test"]).mean()
    assert abs(out["accuracy"] - reference_accuracy) <= 1 / len(data["y_test"])
    assert out["accuracy"] >= 0.9 and final < 0.25
    assert f"held-out accuracy {out['accuracy']:.4f}" in capfd.readouterr().out
