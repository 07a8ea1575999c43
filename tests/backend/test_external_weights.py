"""External weights: large `load_npy` arrays go to a parameter archive (.irpa) beside the module
instead of into it; the module stays small, the results equal NumPy's, and a missing or damaged
archive is a one-line error."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import einc
from einc.runtime import RunError

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.fixture
def project(tmp_path) -> Path:
    np.save(tmp_path / "W.npy", W)
    np.save(tmp_path / "b.npy", B)
    (tmp_path / "layer.ein").write_text(LAYER)
    (tmp_path / "rnn.ein").write_text(RNN)
    return tmp_path


def test_large_weight_leaves_the_module_and_results_equal_numpy(project):
    artifact = einc.compile(project / "layer.ein", outputs=["y"])
    embedded = einc.compile(project / "layer.ein", outputs=["y"], weights_threshold=None)
    assert len(artifact.vmfb) < 100_000 < W.nbytes < len(embedded.vmfb)
    assert W.nbytes <= len(artifact.parameters) < W.nbytes + 64 * 1024    # W only; b stays inside
    assert embedded.parameters == b""
    artifact.save(project / "layer.vmfb")
    assert (project / "layer.irpa").read_bytes() == artifact.parameters
    with einc.load(project / "layer.vmfb") as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


def test_every_constant_array_with_threshold_zero(project):
    artifact = einc.compile(project / "layer.ein", outputs=["y"], weights_threshold=0)
    artifact.save(project / "all.vmfb")
    assert len(artifact.parameters) >= W.nbytes + B.nbytes
    with einc.load(project / "all.vmfb") as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_a_weight_read_in_every_step_of_a_recurrence(project, target):
    x = RNG.standard_normal((6, 512)).astype(np.float32)
    artifact = einc.compile(project / "rnn.ein", target, outputs=["h"])
    assert artifact.parameters and len(artifact.vmfb) < 200_000
    artifact.save(project / "rnn.vmfb")
    with einc.load(project / "rnn.vmfb") as program:
        np.testing.assert_allclose(program(x=x)["h"], rnn_reference(x), **TOLERANCE)


@pytest.mark.vulkan
def test_vulkan_reads_its_weights_from_the_archive(project):
    artifact = einc.compile(project / "layer.ein", "vulkan-spirv", outputs=["y"])
    assert artifact.parameters and len(artifact.vmfb) < 100_000
    artifact.save(project / "layer-vk.vmfb")
    with einc.load(project / "layer-vk.vmfb") as program:
        assert program.device == "vulkan"
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)


def test_bytes_and_an_archive_given_by_path(project):
    artifact = einc.compile(project / "layer.ein", outputs=["y"])
    archive = project / "elsewhere.irpa"
    archive.write_bytes(artifact.parameters)
    with einc.load(artifact.vmfb, parameters=archive) as program:
        np.testing.assert_allclose(program(x=X)["y"], layer_reference(X), **TOLERANCE)
    with pytest.raises(RunError, match=r"^<module bytes> keeps its weights in a parameter archive"):
        einc.load(artifact.vmfb)


def test_missing_damaged_or_foreign_archive_is_one_line(project):
    artifact = einc.compile(project / "layer.ein", outputs=["y"])
    module = project / "layer.vmfb"
    artifact.save(module)
    archive = project / "layer.irpa"
    archive.unlink()
    with pytest.raises(RunError, match=r"^cannot read the weights archive .*layer.irpa: no such file"):
        einc.load(module)
    damaged = bytearray(artifact.parameters)
    damaged[len(damaged) // 2] ^= 0x40
    for contents in (bytes(damaged), artifact.parameters[:-100], b"not an archive"):
        archive.write_bytes(contents)
        with pytest.raises(RunError, match=r"layer.irpa is damaged or belongs to another build") as err:
            einc.load(module)
        assert "\n" not in str(err.value)


_RSS_PROBE = """
import json, resource, sys
import numpy as np
import einc
rows = int(sys.argv[1])
np.save("w.npy", np.random.default_rng(0).standard_normal((rows, 1024)).astype(np.float32))
with open("p.ein", "w") as f:
    f.write('let w = load_npy("w.npy");\\nlet x: [f32; 7];\\nlet y[j] = sum[k](w[k, j] * x[k % 7]);\\n')
with open("warm.ein", "w") as f:
    f.write('let x: [f32; 7];\\nlet y[j] = x[j] * 2.0;\\n')
einc.compile("warm.ein")                       # the compiler's own memory, before measuring
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
artifact = einc.compile("p.ein", outputs=["y"])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth_mib": (after - before) / 1024, "vmfb": len(artifact.vmfb)}))
"""


def _build_rss(folder: Path, rows: int) -> dict:
    folder.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(rows)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_build_memory_does_not_grow_with_the_weights(tmp_path):
    """Embedded, a 4 MiB weight took a 257 MB build (IREE copies and folds the data). External,
    the build holds the array read and the archive written: peak growth from an 8 MiB to a
    64 MiB weight stays within 3x the 56 MiB difference (measured: about 2x), and the module
    does not grow at all."""
    small = _build_rss(tmp_path / "small", 2048)      # 8 MiB
    large = _build_rss(tmp_path / "large", 16384)     # 64 MiB
    assert large["vmfb"] == small["vmfb"] < 100_000
    assert large["growth_mib"] - small["growth_mib"] < 3 * 56
