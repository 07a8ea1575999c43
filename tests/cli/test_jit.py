"""einc.jit: a callable that builds one module per size signature, like jax.jit; an in-memory
LRU of `max_cached` loaded modules over the build cache einc run uses; one build for concurrent
calls with the same new sizes. Builds are counted by the cache's own record (cache_info)."""
import threading
import time

import numpy as np
import pytest

import einc
import einc.driver
from einc.runtime.program import read_signature

SOURCE = """let X: [f32; B, C, H, W];
let P[n, c, h, w] = max[dh in 0..2, dw in 0..2](X[n, c, 2 * h + dh, 2 * w + dw]);
let Y[n, c] = sum[h, w](P[n, c, h, w]);
"""
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}   # f32 sums of the maxima, summed in another order


def reference(x: np.ndarray) -> dict:
    """2x2 max pooling (stride 2, the odd last row or column dropped), then its sum per channel."""
    n, c, h, w = x.shape
    pooled = x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    return {"P": pooled, "Y": pooled.astype(np.float64).sum(axis=(2, 3))}


def image(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def check(outputs: dict, x: np.ndarray) -> None:
    expected = reference(x)
    np.testing.assert_array_equal(outputs["P"], expected["P"])
    np.testing.assert_allclose(outputs["Y"], expected["Y"], **TOLERANCE)


@pytest.fixture
def program(tmp_path, monkeypatch):
    monkeypatch.setenv("EINC_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "pool.ein"
    path.write_text(SOURCE)
    return path


def test_one_build_per_size_signature(program):
    f = einc.jit(program)
    small, large = image(2, 3, 6, 8), image(1, 2, 9, 4)
    check(f(X=small), small)
    assert f.cache_info() == (0, 1, 1, 1, 8)                 # hits, misses, builds, kept, max_cached
    check(f(X=small), small)
    assert f.cache_info() == (1, 1, 1, 1, 8)
    check(f(X=large), large)                                 # new sizes: built once
    check(f(X=large), large)
    assert f.cache_info() == (2, 2, 2, 2, 8)


def test_the_lru_keeps_max_cached_over_the_build_cache(program, einc_cli, tmp_path):
    f = einc.jit(program, max_cached=2)
    images = [image(1, 1, 4, 4), image(1, 1, 6, 6), image(1, 1, 8, 8)]
    for x in images:
        check(f(X=x), x)
    assert f.cache_info() == (0, 3, 3, 2, 2)
    check(f(X=images[0]), images[0])                         # dropped from memory: loaded, not built
    assert f.cache_info() == (0, 4, 3, 2, 2)
    check(f(X=images[2]), images[2])                         # still kept
    assert f.cache_info() == (1, 4, 3, 2, 2)
    np.save(tmp_path / "x.npy", images[1])                   # einc run finds what einc.jit built
    status, _, err = einc_cli("run", program, "-v", "-i", f"X={tmp_path / 'x.npy'}")
    assert status == 0 and "cache hit" in err


def test_two_threads_with_the_same_new_sizes_build_once(program, monkeypatch):
    original = einc.driver.build_ir

    def slow_build(*args, **kwargs):          # time for the other thread to ask meanwhile
        time.sleep(0.5)
        return original(*args, **kwargs)
    monkeypatch.setattr(einc.driver, "build_ir", slow_build)
    f = einc.jit(program)
    x = image(2, 2, 6, 6)
    start, results = threading.Barrier(2), [None, None]

    def call(k: int) -> None:
        start.wait()
        results[k] = f(X=x)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for outputs in results:
        check(outputs, x)
    assert f.cache_info() == (1, 1, 1, 1, 8)


def test_generic_is_the_run_time_size_module(program, tmp_path):
    f = einc.jit(program)
    generic = f.generic()
    assert generic.signature.fixed_dims == {} and f.generic() is generic
    for x in (image(2, 3, 6, 8), image(1, 2, 9, 4)):
        check(generic(X=x), x)
    f(X=image(2, 3, 6, 8))
    assert f.cache_info().builds == 2
    built = [read_signature(path.read_bytes(), str(path)).fixed_dims for path in (tmp_path / "cache").rglob("*.vmfb")]
    assert sorted(built, key=len) == [{}, {"B": 2, "C": 3, "H": 6, "W": 8}]


def test_bad_calls_are_one_line_errors(program, tmp_path):
    f = einc.jit(program)
    with pytest.raises(einc.RunError, match=r"^missing input 'X' \(float32\[B, C, H, W\]\)$"):
        f()
    with pytest.raises(einc.RunError, match=r"^unknown input 'Z'; the program's inputs are: X$"):
        f(X=image(1, 1, 2, 2), Z=1.0)
    with pytest.raises(einc.RunError, match=r"^input X: expected rank 4"):
        f(X=image(2, 2, 2))
    with pytest.raises(einc.OptionError, match="max_cached"):
        einc.jit(program, max_cached=0)
    two = tmp_path / "two.ein"
    two.write_text("let X: [f32; B];\nlet Z: [f32; B];\nlet S[b] = X[b] + Z[b];\n")
    with pytest.raises(einc.RunError, match=r"^named dim B is 2 from X but 3 from Z$"):
        einc.jit(two)(X=np.ones(2, np.float32), Z=np.ones(3, np.float32))


ANY_RANK = """let x: [f32; *];
let y = x * 2.0;
let s = sum(x);
let z[..r] = x[..r] * x[..r] + 1.0;
"""


def test_an_any_rank_input_builds_once_per_rank(tmp_path, monkeypatch):
    """`[f32; *]` takes the rank of the array of each call, as jax.jit traces per shape: one
    build per rank (its axes stay run-time sizes), whole-array operations and `..r` over them."""
    monkeypatch.setenv("EINC_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "any_rank.ein"
    path.write_text(ANY_RANK)
    f = einc.jit(path)
    for shape in [(5,), (2, 3), (2, 3, 4), (4, 1)]:
        x = image(*shape)
        outputs = f(x=x)
        np.testing.assert_array_equal(outputs["y"], x * 2)
        np.testing.assert_allclose(outputs["s"], x.astype(np.float64).sum(), **TOLERANCE)
        np.testing.assert_allclose(outputs["z"], x * x + 1, rtol=1e-6)
    assert f.cache_info() == (1, 3, 3, 3, 8)     # (4, 1): the rank-2 module, kept
