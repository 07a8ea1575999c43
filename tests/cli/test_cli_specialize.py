"""`einc run FILE.ein` builds for the sizes of its inputs, as jax.jit does: one module per size
signature in the build cache (a hit for sizes seen before, one build for new ones), `--generic`
for the module with run-time sizes. Builds are counted by the cache's entries."""
from pathlib import Path

import numpy as np
import pytest

import einc.driver
from einc.runtime.program import read_signature

CONV = """let X: [f32; B, C, H, W];
let K: [f32; F, C, 3, 3];
let Y[n, o, h, w] = sum[c, kh, kw](X[n, c, h + kh, w + kw] * K[o, c, kh, kw]);
"""
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}   # f32 sums of 27 products, summed in another order


def conv_reference(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A 'valid' 3x3 convolution (cross-correlation), NCHW image, FCHW filter, in float64."""
    h, w = x.shape[2] - 2, x.shape[3] - 2
    out = np.zeros((x.shape[0], k.shape[0], h, w))
    for kh in range(3):
        for kw in range(3):
            out += np.einsum("nchw,oc->nohw", x[:, :, kh:kh + h, kw:kw + w].astype(np.float64), k[:, :, kh, kw])
    return out


@pytest.fixture
def conv(tmp_path) -> Path:
    path = tmp_path / "conv.ein"
    path.write_text(CONV)
    return path


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "modules").rglob("*.vmfb"))


def run_conv(einc_cli, conv: Path, batch: int, height: int, *options):
    """Run the conv on random inputs of those sizes; (status, stderr, Y, reference)."""
    rng = np.random.default_rng(batch * 100 + height)
    x = rng.standard_normal((batch, 3, height, 7)).astype(np.float32)
    k = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    folder = conv.parent
    np.save(folder / "x.npy", x)
    np.save(folder / "k.npy", k)
    status, _, err = einc_cli("run", conv, "-v", "-i", f"X={folder / 'x.npy'}", "-i", f"K={folder / 'k.npy'}",
                              "--out", folder / "out.npz", *options)
    y = np.load(folder / "out.npz")["Y"] if status == 0 else None
    return status, err, y, conv_reference(x, k)


def test_same_sizes_hit_and_new_sizes_build_once(einc_cli, cache, conv, monkeypatch):
    status, err, y, reference = run_conv(einc_cli, conv, 2, 6)
    [first] = entries(cache)
    assert status == 0 and "specialized to the sizes of the inputs: B=2, C=3, F=4, H=6, W=7" in err
    assert "cache miss" in err
    np.testing.assert_allclose(y, reference, **TOLERANCE)
    assert read_signature(first.read_bytes(), str(first)).fixed_dims == {"B": 2, "C": 3, "F": 4, "H": 6, "W": 7}

    built = []
    original = einc.driver.build_ir
    monkeypatch.setattr(einc.driver, "build_ir", lambda *args, **kwargs: built.append(args) or original(*args, **kwargs))
    status, err, y, reference = run_conv(einc_cli, conv, 2, 6)
    assert status == 0 and "cache hit" in err and entries(cache) == [first] and built == []
    np.testing.assert_allclose(y, reference, **TOLERANCE)

    status, err, y, reference = run_conv(einc_cli, conv, 3, 9)      # new sizes: one build more
    assert status == 0 and "B=3, C=3, F=4, H=9, W=7" in err and "cache miss" in err
    assert len(entries(cache)) == 2 and len(built) == 1
    np.testing.assert_allclose(y, reference, **TOLERANCE)
    assert run_conv(einc_cli, conv, 3, 9)[1].endswith(f"cache hit for {conv}: {(set(entries(cache)) - {first}).pop()}\n")
    assert len(entries(cache)) == 2 and len(built) == 1


def test_generic_builds_one_module_with_run_time_sizes(einc_cli, cache, conv):
    status, err, y, reference = run_conv(einc_cli, conv, 2, 6, "--generic")
    [module] = entries(cache)
    assert status == 0 and "specialized" not in err and "cache miss" in err
    np.testing.assert_allclose(y, reference, **TOLERANCE)
    assert read_signature(module.read_bytes(), str(module)).fixed_dims == {}
    status, err, y, reference = run_conv(einc_cli, conv, 3, 9, "--generic")   # other sizes, same module
    assert status == 0 and err.endswith(f"cache hit for {conv}: {module}\n") and entries(cache) == [module]
    np.testing.assert_allclose(y, reference, **TOLERANCE)


def test_a_dim_given_stays_and_the_others_come_from_the_inputs(einc_cli, cache, conv):
    status, err, y, reference = run_conv(einc_cli, conv, 2, 6, "--dim", "C=3")
    assert status == 0 and "specialized to the sizes of the inputs: B=2, F=4, H=6, W=7\n" in err
    np.testing.assert_allclose(y, reference, **TOLERANCE)


def test_contradicting_inputs_are_one_line_and_build_nothing(einc_cli, cache, tmp_path):
    path = tmp_path / "add.ein"
    path.write_text("let X: [f32; B, N];\nlet Z: [f32; B, N];\nlet S[b, n] = X[b, n] + Z[b, n];\n")
    np.save(tmp_path / "x.npy", np.ones((2, 4), np.float32))
    np.save(tmp_path / "z.npy", np.ones((3, 4), np.float32))
    status, out, err = einc_cli("run", path, "-i", f"X={tmp_path / 'x.npy'}", "-i", f"Z={tmp_path / 'z.npy'}")
    assert (status, out, err) == (1, "", "error: named dim B is 2 from X but 3 from Z\n")
    assert entries(cache) == []


@pytest.mark.full
def test_sizes_that_do_not_fit_say_so_as_the_generic_module_does(einc_cli, cache, conv):
    np.save(conv.parent / "x.npy", np.ones((1, 3, 1, 7), np.float32))        # H = 1: no 3-row window fits
    np.save(conv.parent / "k.npy", np.ones((4, 3, 3, 3), np.float32))
    inputs = ("-i", f"X={conv.parent / 'x.npy'}", "-i", f"K={conv.parent / 'k.npy'}")
    message = (f"error: input size H = 1 (X axis 2) does not fit the program: the range of `h` at {conv}:3:13 "
               "would have extent H - 2 = -1\n")
    assert einc_cli("run", conv, *inputs) == (1, "", message)
    assert entries(cache) == []                # known before any build
    assert einc_cli("run", conv, "--generic", *inputs) == (1, "", message)


@pytest.mark.full
def test_sizes_that_empty_a_range_run_the_generic_module(einc_cli, cache, conv):
    """H = 2 leaves `h` no value: fixed at build time that is an error in the program (E004),
    while the run-time-size module runs it and returns an empty Y."""
    status, err, y, reference = run_conv(einc_cli, conv, 1, 2)
    [module] = entries(cache)
    assert status == 0 and "specialized" not in err and y.shape == reference.shape == (1, 4, 0, 5)
    assert read_signature(module.read_bytes(), str(module)).fixed_dims == {}


def test_help_says_when_run_specializes(einc_cli):
    status, out, _ = einc_cli("run", "--help")
    assert status == 0 and "built for the sizes of the inputs given" in " ".join(out.split())
    assert "--generic" in out


def test_an_any_rank_input_takes_the_rank_of_its_array(einc_cli, cache, tmp_path):
    """`einc run` builds a `[f32; *]` input for the rank of the .npy given (one module per
    rank); `einc build`, which has no input, keeps E011 and says how to run it."""
    path = tmp_path / "any_rank.ein"
    path.write_text("let x: [f32; *];\nlet y = x * 2.0;\nlet s = sum(x);\nlet z[..r] = x[..r] * x[..r] + 1.0;\n")
    rng = np.random.default_rng(7)
    for shape in [(2, 3, 4), (6,)]:
        x = rng.standard_normal(shape).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        status, _, err = einc_cli("run", path, "-v", "-i", f"x={tmp_path / 'x.npy'}",
                                  "--out", tmp_path / "out.npz")
        assert status == 0 and "cache miss" in err, err
        out = np.load(tmp_path / "out.npz")
        np.testing.assert_array_equal(out["y"], x * 2)
        np.testing.assert_allclose(out["s"], x.astype(np.float64).sum(), **TOLERANCE)
        np.testing.assert_allclose(out["z"], x * x + 1, rtol=1e-6)
    assert len(entries(cache)) == 2
    status, _, err = einc_cli("build", path, "-o", tmp_path / "m.vmfb")
    assert status == 1 and "E011" in err and "needs a known rank" in err and "einc run" in err
