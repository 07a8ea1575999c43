"""einc.dask.map_blocks on a real distributed.LocalCluster of two worker processes: a batched
Kalman filter and the MNIST CNN over chunked batches against NumPy, and one module load per
worker however many blocks it runs."""
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import einc  # noqa: E402
import einc.dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MNIST = ROOT.parent / "shared" / "data" / "mnist"

# The Kalman filter of examples/filters/kalman_filter.ein over B series at once.
KALMAN = """
let z: [f64; B, T];
let dt: f64 = 1.0;
let F = [[1.0, dt], [0.0, 1.0]];
let H: [f64; 2] = [1.0, 0.0];
let q: f64 = 0.01;
let Q = [[q * dt ** 3 / 3.0, q * dt ** 2 / 2.0], [q * dt ** 2 / 2.0, q * dt]];
let r: f64 = 4.0;
let x[0, b in 0..B, i in 0..2] = if i == 0 { z[b, 0] } else { 0.0 };
let P[0, b in 0..B, i in 0..2, j in 0..2] = if i == j { if i == 0 { r } else { 100.0 } } else { 0.0 };
let x_pred[t in 1..T, b in 0..B, i in 0..2] = sum[j](F[i, j] * x[t - 1, b, j]);
let P_pred[t in 1..T, b in 0..B, i in 0..2, j in 0..2] =
    sum[k, l](F[i, k] * P[t - 1, b, k, l] * F[j, l]) + Q[i, j];
let S[t in 1..T, b in 0..B] = sum[i, j](H[i] * P_pred[t, b, i, j] * H[j]) + r;
let K[t in 1..T, b in 0..B, i in 0..2] = sum[j](P_pred[t, b, i, j] * H[j]) / S[t, b];
let innovation[t in 1..T, b in 0..B] = z[b, t] - sum[i](H[i] * x_pred[t, b, i]);
let x[t in 1..T, b in 0..B, i in 0..2] = x_pred[t, b, i] + K[t, b, i] * innovation[t, b];
let P[t in 1..T, b in 0..B, i in 0..2, j in 0..2] =
    P_pred[t, b, i, j] - K[t, b, i] * sum[k](H[k] * P_pred[t, b, k, j]);
let estimate[b in 0..B, t in 0..T, i in 0..2] = x[t, b, i];
"""


def kalman_reference(z: np.ndarray) -> np.ndarray:
    """The same filter in NumPy, all series at once: estimates [B, T, 2]."""
    F = np.array([[1.0, 1.0], [0.0, 1.0]])
    H = np.array([1.0, 0.0])
    Q = 0.01 * np.array([[1 / 3, 1 / 2], [1 / 2, 1.0]])
    r = 4.0
    b, steps = z.shape
    x = np.zeros((b, steps, 2))
    x[:, 0, 0] = z[:, 0]
    P = np.broadcast_to(np.diag([r, 100.0]), (b, 2, 2)).copy()
    for t in range(1, steps):
        xp = x[:, t - 1] @ F.T
        Pp = F @ P @ F.T + Q
        S = Pp @ H @ H + r
        K = Pp @ H / S[:, None]
        x[:, t] = xp + K * (z[:, t] - xp @ H)[:, None]
        P = Pp - K[:, :, None] * (H @ Pp)[:, None, :]
    return x


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as dask_client:
        yield dask_client


def test_kalman_filter_over_many_series(client, tmp_path):
    rng = np.random.default_rng(3)
    truth = np.cumsum(rng.standard_normal((40, 30)) * 0.3, axis=1)
    z = truth + 2.0 * rng.standard_normal(truth.shape)
    source = tmp_path / "kalman.ein"
    source.write_text(KALMAN)
    artifact = einc.compile(source, outputs=["estimate"])
    out = einc.dask.map_blocks(artifact, batch_dim="B", z=da.from_array(z, chunks=(7, 30)))
    assert list(out) == ["estimate"] and out["estimate"].chunks[0] == (7, 7, 7, 7, 7, 5)
    estimate = client.compute(out["estimate"]).result()
    np.testing.assert_allclose(estimate, kalman_reference(z), rtol=1e-10, atol=1e-10)   # f64


@pytest.mark.skipif(not MNIST.is_dir(), reason="shared/data/mnist is not beside the repository")
def test_mnist_cnn_over_a_chunked_batch_loads_the_module_once_per_worker(client):
    from tests.e2e.test_examples import mnist_reference

    weights = {k: np.load(MNIST / f"{f}.npy") for k, f in [
        ("W1", "conv1_w"), ("b1", "conv1_b"), ("W2", "conv2_w"), ("b2", "conv2_b"), ("Wf", "fc_w"), ("bf", "fc_b")]}
    samples, labels = np.load(MNIST / "samples.npy"), np.load(MNIST / "labels.npy")
    images = np.concatenate([samples, 1.0 - samples, samples[::-1]])      # 30 images
    expected = mnist_reference(images.astype(np.float64), *(weights[k].astype(np.float64) for k in weights))
    artifact = einc.compile(ROOT / "examples" / "mnist" / "cnn.ein", outputs=["logits", "digit"])
    X = da.from_array(images, chunks=(4, 1, 28, 28))                      # 8 blocks
    out = einc.dask.map_blocks(artifact, batch_dim="B", X=X, **weights)
    logits, digits = client.compute([out["logits"], out["digit"]], sync=True)
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(digits[:10], labels)
    np.testing.assert_array_equal(digits, expected.argmax(axis=1))
    archive = b"" if artifact.archive is None else artifact.archive.read()
    digest = einc.dask.Module(artifact.vmfb, archive).digest
    loads = client.run(einc.dask.loads)                        # {worker: {module digest: loads}}
    per_worker = [counts.get(digest, 0) for counts in loads.values()]
    assert len(per_worker) == 2 and max(per_worker) == 1       # 8 blocks, at most one load per worker


def test_outputs_without_the_batch_dim_and_bad_inputs_are_refused(tmp_path):
    source = tmp_path / "kalman.ein"
    source.write_text(KALMAN)
    artifact = einc.compile(source, outputs=["estimate", "F"])
    z = da.zeros((4, 6), chunks=(2, 6))
    assert list(einc.dask.map_blocks(artifact, z=z)) == ["estimate"]
    with pytest.raises(ValueError, match="output F does not have the batch dim B"):
        einc.dask.map_blocks(artifact, outputs=["F"], z=z)
    with pytest.raises(ValueError, match="no input of the program is declared with the dim 'N'"):
        einc.dask.map_blocks(artifact, batch_dim="N", z=z)
    with pytest.raises(ValueError, match="the program has no input y"):
        einc.dask.map_blocks(artifact, z=z, y=z)
    with dask.config.set(scheduler="synchronous"):
        estimate = einc.dask.map_blocks(artifact, z=z)["estimate"].compute()
    np.testing.assert_allclose(estimate, kalman_reference(np.zeros((4, 6))), rtol=1e-10, atol=1e-10)


def test_a_program_that_cannot_run_on_zeros_is_refused_before_computing(tmp_path):
    source = tmp_path / "checked.ein"
    source.write_text('let x: [f32; B, 3];\nassert(sum[b, i](x[b, i]) > 0.0, "positive");\nlet y[b, i] = x[b, i] * 2.0;\n')
    artifact = einc.compile(source)
    with pytest.raises(ValueError, match=r"cannot learn the shapes of the outputs: .*failed \(.*assertion failed"):
        einc.dask.map_blocks(artifact, x=da.ones((4, 3), chunks=(2, 3)))
