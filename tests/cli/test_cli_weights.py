"""The CLI with external weights (`einc build` writes FILE.irpa beside FILE.vmfb, `einc run`
reads it, the build cache keeps it) and with .safetensors inputs and outputs."""
import json
import struct
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from einc.runtime import RunError
from einc.runtime.safetensors import read_safetensors, safetensors_bytes

RNG = np.random.default_rng(5)
W = RNG.standard_normal((300, 256)).astype(np.float32)         # 300 KiB: over the default threshold
X = RNG.standard_normal((2, 300)).astype(np.float32)
PROGRAM = 'let W = load_npy("W.npy");\nlet x: [f32; N, 300];\nlet y[n, j] = sum[k](x[n, k] * W[k, j]);\n'
TOLERANCE = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("EINC_CACHE", str(tmp_path / "cache"))
    np.save(tmp_path / "W.npy", W)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "layer.ein").write_text(PROGRAM)
    return tmp_path


def test_build_then_run_with_the_archive_beside(einc_cli, project):
    module = project / "layer.vmfb"
    assert einc_cli("build", project / "layer.ein", "-o", module, "--output", "y") == (0, "", "")
    assert module.stat().st_size < 100_000 and (project / "layer.irpa").stat().st_size >= W.nbytes
    status, _, err = einc_cli("run", module, "-i", f"x={project / 'x.npy'}", "--out", project / "out.npz")
    assert (status, err) == (0, "")
    np.testing.assert_allclose(np.load(project / "out.npz")["y"], X @ W, **TOLERANCE)
    (project / "layer.irpa").unlink()
    status, out, err = einc_cli("run", module, "-i", f"x={project / 'x.npy'}")
    assert status == 1 and out == ""
    assert err == f"error: cannot read the weights archive {project / 'layer.irpa'}: no such file (einc build " \
                  "writes it beside the module; keep the two together)\n"


def test_the_build_cache_keeps_the_archive_and_rebuilds_a_damaged_one(einc_cli, project):
    run = ("run", project / "layer.ein", "-v", "--output", "y", "-i", f"x={project / 'x.npy'}",
           "--out", project / "out.npz")
    status, _, err = einc_cli(*run)
    assert status == 0 and "cache miss" in err
    [archive] = (project / "cache").rglob("*.irpa")
    assert archive.with_suffix(".vmfb").exists()
    status, _, err = einc_cli(*run)
    assert status == 0 and "cache hit" in err
    damaged = bytearray(archive.read_bytes())
    damaged[-1] ^= 1
    archive.write_bytes(bytes(damaged))
    status, _, err = einc_cli(*run)
    assert status == 0 and "cache miss" in err
    np.testing.assert_allclose(np.load(project / "out.npz")["y"], X @ W, **TOLERANCE)


def test_safetensors_round_trip_of_every_dtype(tmp_path):
    arrays = {"f": RNG.standard_normal((2, 3)).astype(np.float32), "d": np.arange(4.0),
              "i": np.array([[-1, 2]], np.int64), "u": np.arange(5, dtype=np.uint8),
              "b": np.array([True, False]), "s": np.array(7, np.int32), "e": np.zeros((0, 3), np.float32),
              "h": np.array([1.5, -0.1], np.float16), "bh": np.array([1.5, -0.1], ml_dtypes.bfloat16)}
    path = tmp_path / "a.safetensors"
    path.write_bytes(safetensors_bytes(arrays))
    back = read_safetensors(str(path))
    assert list(back) == list(arrays)
    for name, array in arrays.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape
        np.testing.assert_array_equal(back[name], array)


def _file(header: dict, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("contents, why", [
    (b"\x01\x02", "shorter than its 8-byte header length"),
    (struct.pack("<Q", 1000) + b"{}", "its header length 1000 runs past the end of the file"),
    (struct.pack("<Q", 3) + b"{x}", "its header is not JSON"),
    (_file([1]), "its header is not a JSON object"),
    (_file({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0"), "no dtype einc reads"),
    (_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4), "malformed shape"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}}, b"\0" * 8), "malformed data_offsets"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4), "do not fit its shape"),
    (_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8), "do not fit its shape"),
])
def test_malformed_safetensors_is_one_line(tmp_path, contents, why):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(contents)
    with pytest.raises(RunError, match=r"^cannot read .*bad.safetensors: not a valid .safetensors file") as err:
        read_safetensors(str(path))
    assert why in str(err.value) and "\n" not in str(err.value)


def test_run_binds_safetensors_inputs_by_name_and_writes_safetensors(einc_cli, project):
    inputs = project / "in.safetensors"
    inputs.write_bytes(safetensors_bytes({"x": X}))
    out = project / "out.safetensors"
    status, _, err = einc_cli("run", project / "layer.ein", "--output", "y", "-i", inputs, "--out", out)
    assert (status, err) == (0, "")
    np.testing.assert_allclose(read_safetensors(str(out))["y"], X @ W, **TOLERANCE)
    inputs.write_bytes(safetensors_bytes({"x": X, "z": X}))
    status, _, err = einc_cli("run", project / "layer.ein", "--output", "y", "-i", inputs)
    assert status == 1 and err.startswith(f"error: {inputs} has an array 'z' that is not an input")
