"""Front-end features the standard library is written on: rest indices over sub-arrays and over
no axes, `x.shape[k]` of symbolic sizes in ranges, `x.size`, `shape` of a scalar, `__cast_like`."""
import numpy as np


def test_generic_helpers_the_stdlib_relies_on(run):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    v = np.arange(5, dtype=np.float64)
    out = run("""
        let x: [f32; 2, 3, 4];
        let v: [f64; N];
        fn last_max(a) { let m[..b] = max[i](a[..b, i]); m }
        fn scaled_by_max(a) { let m = last_max(a); let y[..b, i] = a[..b, i] / m[..b]; y }
        let row = last_max(x[1]);               // a sub-array argument: `..b` is one axis
        let s = scaled_by_max(v + 1.0);         // rank 1: `m[..b]` reads a scalar
        let n = v.shape[0];                     // a symbolic size, usable in a range
        let firsts[i in 0..n - 1] = v[i];
        let count = x.size;
        let scalar_rank = len(shape(2.0));
        let mean = sum[i](v[i]) / __cast_like(len(v), v);
        let as_int = __cast_like(v, count);
    """, x=x, v=v)
    np.testing.assert_array_equal(out["row"], x[1].max(-1))
    np.testing.assert_allclose(out["s"], (v + 1) / (v + 1).max())
    np.testing.assert_array_equal(out["firsts"], v[:-1])
    assert out["count"] == 24 and out["scalar_rank"] == 0
    assert out["mean"].dtype == np.float64 and out["mean"] == v.mean()
    assert out["as_int"].dtype == np.int32
