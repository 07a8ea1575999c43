"""External weights: large `load_npy` arrays go to a parameter archive (.irpa) beside the module
instead of into it; the module stays small, the results equal NumPy's, and a missing or damaged
archive is a one-line error."""
import gc
import os
import pickle

import numpy as np
import pytest

import einc
from benchmarks.build_time import weights_build, weights_reference
from einc.runtime import RunError
from tests.tiers import VULKAN_FULL

RNG = np.random.default_rng(20)
W = (RNG.standard_normal((512, 512)) / 32).astype(np.float32)       # 1 MiB
B = RNG.standard_normal(512).astype(np.float32)                      # 2 KiB: stays inside
X = RNG.standard_normal((3, 512)).astype(np.float32)
LAYER = ('let W = load_npy("W.npy");\nlet b = load_npy("b.npy");\nlet x: [f32; N, 512];\n'
         'let y[n, j] = sum[k](x[n, k] * W[k, j]) + b[j];\n')
# A recurrence stepping with the weight: the parameter is read inside the loop of every step.
RNN = ('let W = load_npy("W.npy");\nlet x: [f32; T, 512];\n'
       'let h[0, i in 0..512] = x[0, i];\n'
       'let h[t in 1..T, i in 0..512] = 0.5 * sum[j](W[i, j] * h[t - 1, j]) + x[t, i];\n')
TOLERANCE = dict(rtol=1e-5, atol=1e-5)   # float32 sums of 512 products in another order


def layer_reference(x):
    return x @ W + B


def rnn_reference(x):
    h = [x[0]]
    for t in range(1, len(x)):
        h.append(np.float32(0.5) * (W @ h[-1]) + x[t])
    return np.stack(h)


def _write_project(folder):
    np.save(folder / "W.npy", W)
    np.save(folder / "b.npy", B)
    (folder / "layer.ein").write_text(LAYER)
    (folder / "rnn.ein").write_text(RNN)
    return folder


@pytest.fixture
def project(tmp_path):
    return _write_project(tmp_path)


@pytest.fixture(scope="module")
def layer(tmp_path_factory):
    """layer.ein built once for llvm-cpu with the default threshold, for the tests that only read
    the artifact (the pickling test builds its own: it checks the archive's file goes with it)."""
    return einc.compile(_write_project(tmp_path_factory.mktemp("layer")) / "layer.ein", outputs=["y"])


def test_large_weight_leaves_the_module_and_results_equal_numpy(project, layer):
    artifact = layer
    embedded = einc.compile(project / "layer.ein", outputs=["y"], weights_threshold=None)
    assert len(artifact.vmfb) < 100_000 < W.nbytes < len(embedded.vmfb)
    assert W.nbytes <= artifact.archive.size < W.nbytes + 64 * 1024    # W only; b stays inside
    assert embedded.archive is None
    artifact.save(project / "layer.vmfb")
    assert (project / "layer.irpa").read_bytes() == artifact.archive.read()
    with einc.load(project / "layer.vmfb") as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


def test_every_constant_array_with_threshold_zero(project):
    artifact = einc.compile(project / "layer.ein", outputs=["y"], weights_threshold=0)
    artifact.save(project / "all.vmfb")
    assert artifact.archive.size >= W.nbytes + B.nbytes
    with einc.load(project / "all.vmfb") as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_weight_read_in_every_step_of_a_recurrence(project, target):
    x = RNG.standard_normal((6, 512)).astype(np.float32)
    artifact = einc.compile(project / "rnn.ein", target, outputs=["h"])
    assert artifact.archive is not None and len(artifact.vmfb) < 200_000
    artifact.save(project / "rnn.vmfb")
    with einc.load(project / "rnn.vmfb") as program:
        np.testing.assert_allclose(program(x=x)["h"], rnn_reference(x), **TOLERANCE)


@pytest.mark.vulkan
def test_vulkan_reads_its_weights_from_the_archive(project):
    artifact = einc.compile(project / "layer.ein", "vulkan-spirv", outputs=["y"])
    assert artifact.archive is not None and len(artifact.vmfb) < 100_000
    artifact.save(project / "layer-vk.vmfb")
    with einc.load(project / "layer-vk.vmfb") as program:
        assert program.device == "vulkan"
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


def test_bytes_and_an_archive_given_by_path(project, layer):
    artifact = layer
    archive = project / "elsewhere.irpa"
    archive.write_bytes(artifact.archive.read())
    with einc.load(artifact.vmfb, parameters=archive) as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)
    with pytest.raises(RunError, match=r"^<module bytes> keeps its weights in a parameter archive"):
        einc.load(artifact.vmfb)


def test_an_artifact_loads_as_it_is_with_its_own_archive(layer):
    with einc.load(layer) as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


def test_missing_damaged_or_foreign_archive_is_one_line(project, layer):
    artifact = layer
    module = project / "layer.vmfb"
    artifact.save(module)
    archive = project / "layer.irpa"
    archive.unlink()
    with pytest.raises(RunError, match=r"^cannot read the weights archive .*layer.irpa: no such file"):
        einc.load(module)
    damaged = bytearray(artifact.archive.read())
    damaged[len(damaged) // 2] ^= 0x40
    for contents in (bytes(damaged), bytes(damaged[:-100]), b"not an archive"):
        archive.write_bytes(contents)
        with pytest.raises(RunError, match=r"layer.irpa is damaged or belongs to another build") as err:
            einc.load(module)
        assert "\n" not in str(err.value)


@pytest.mark.full
def test_build_memory_stays_flat_in_the_size_of_the_weights(tmp_path):
    """A 128 MiB weight builds in about the memory of a 32 MiB one: load_npy maps its file,
    IREE copies the archive from that file, and every digest reads it in chunks. Before, the
    peak grew by about 2x the weights (by 384 MiB for 192 MiB more). Allowed: 16 MiB, a sixth
    of the difference in the weights' size (measured: under 1 MiB at 64 and 256 MiB)."""
    small, large = weights_build(tmp_path / "small", 32), weights_build(tmp_path / "large", 128)
    assert large["peak_mib"] - small["peak_mib"] < 16, (small, large)
    # the weights stay in the archive: both modules are small, and differ only by the code for
    # the weight's row count (8 bytes on an AVX2 host, none on AVX-512), not by 96 MiB
    sizes = small["module"].stat().st_size, large["module"].stat().st_size
    assert max(sizes) < 100_000 and abs(sizes[0] - sizes[1]) < 1024, sizes
    x = np.arange(1, 8, dtype=np.float32) / 7
    for built in (small, large):
        weight = np.load(built["module"].parent / "w.npy", mmap_mode="r")
        with einc.load(built["module"]) as program:
            # float32 sums of up to 65,536 products of unit normals, against float64
            np.testing.assert_allclose(program(x=x)["y"], weights_reference(weight, x), rtol=1e-4, atol=1e-2)


def test_an_artifact_pickles_with_its_archive_and_its_temporary_file_goes_with_it(project):
    artifact = einc.compile(project / "layer.ein", outputs=["y"])
    copy = pickle.loads(pickle.dumps(artifact))
    assert copy.archive.path != artifact.archive.path and copy.archive.read() == artifact.archive.read()
    copy.save(project / "copy.vmfb")
    with einc.load(project / "copy.vmfb") as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)
    temporary = [artifact.archive.path, copy.archive.path]
    del artifact, copy
    gc.collect()
    assert not any(os.path.exists(path) for path in temporary)
