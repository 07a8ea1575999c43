"""std::ml conv_ops, pool_ops and layers against direct NumPy loops (float64 references)."""
import numpy as np
import pytest

from stdlib_harness import close, diagnostic_of, rand, run_program

SOURCE = """
use std::ml::*;
let X: [f32; 2, 4, 7, 6];
let W: [f32; 6, 2, 3, 3];
let B: [f32; 6];
let X1: [f32; 2, 3, 9];
let W1: [f32; 4, 3, 3];
let B1: [f32; 4];
let Wd: [f32; 4, 1, 3, 3];
let Wt: [f32; 4, 3, 3, 2];
let W4: [f32; 5, 4, 2, 3];
let Xd: [f64; 1, 2, 5, 5];
let Wdd: [f64; 3, 2, 2, 2];
let Wl: [f32; 6, 3];
let bl: [f32; 3];
let A: [f32; 4, 5];
let Bm: [f32; 3, 4];
let Cm: [f32; 3];
let X3: [f32; 1, 2, 5, 4, 6];
let W3: [f32; 4, 1, 2, 3, 2];
let Xp: [f64; 2, 3, 7];
let Wt1: [f64; 3, 2, 3];
let Wt3: [f32; 2, 3, 2, 2, 3];
let grouped = conv(X, W, B, [2, 1], [1, 0, 1, 2], [1, 2], 2);
let conv_1d = conv(X1, W1, B1, [2], [1, 1], [1], 1);
let conv_f64 = conv(Xd, Wdd, [0.5f64, -1.0, 2.0], [1, 1], [0, 0, 0, 0], [1, 1], 1);
let depthwise = depthwise_conv(X, Wd, [0.0, 1.0, 2.0, 3.0], [1, 1], [1, 1, 1, 1], [1, 1]);
let transposed = conv_transpose(X, Wt, [0.5, 1.0, 1.5], [2, 2], [1, 0, 1, 0], [1, 0]);
let layer_conv = conv2d(X, W4, [0.0, 1.0, 2.0, 3.0, 4.0], 2, 1, 1, 0, 1, 2);
let maxp = max_pool(X, [3, 2], [2, 2], [1, 0, 1, 1]);
let avgp = average_pool(X, [3, 3], [2, 1], [1, 1, 1, 1]);
let gap = global_average_pool(X);
let gmp = global_max_pool(X1);
let lpp = lp_pool(X, [2, 2], [2, 2], 2.0);
let conv_3d = conv(X3, W3, [0.5, 0.0, -0.5, 1.0], [2, 1, 2], [1, 0, 1, 0, 1, 1], [1, 2, 1], 2);
let ct1 = conv_transpose(Xp, Wt1, [0.0f64, 1.0], [2], [1, 0], [1]);
let ct3 = conv_transpose(X3, Wt3, [0.5, -0.5, 0.0], [1, 2, 2], [0, 1, 1, 1, 0, 0], [0, 1, 0]);
let maxp1 = max_pool(Xp, [3], [2], [1, 1]);
let avgp1 = average_pool(Xp, [2], [1], [1, 0]);
let lpp1 = lp_pool(Xp, [3], [2], 3.0);
let maxp3 = max_pool(X3, [2, 3, 2], [1, 2, 2], [1, 1, 0, 0, 1, 1]);
let avgp3 = average_pool(X3, [3, 2, 3], [2, 1, 2], [1, 0, 1, 1, 1, 0]);
let lpp3 = lp_pool(X3, [2, 2, 3], [2, 2, 3], 2.0);
let lin = linear(X[0, 0], Wl, bl);
let lin3 = linear(X[0], Wl, bl);
let gm = gemm(A, Bm, Cm, 0.5, 2.0, 1, 1);
let gm0 = gemm(Bm, A, 1.0, 1.0, 0.5, 0, 0);
let maxp_per_axis = max_pool(X, [2, 2], [2, 2], [0, 0]);
let avgp_per_axis = average_pool(X, [3, 3], [2, 1], [1, 1]);
let maxp1_per_axis = max_pool(Xp, [3], [2], [1]);
let conv_per_axis = conv(X, W, B, [2, 1], [1, 0], [1, 2], 2);
let ct_per_axis = conv_transpose(X, Wt, [0.5, 0.0, -0.5], [2, 1], [1, 0], [1, 0]);
"""

INPUTS = dict(X=rand(2, 4, 7, 6), W=rand(6, 2, 3, 3, seed=1), B=rand(6, seed=2),
              X1=rand(2, 3, 9, seed=3), W1=rand(4, 3, 3, seed=4), B1=rand(4, seed=5),
              Wd=rand(4, 1, 3, 3, seed=6), Wt=rand(4, 3, 3, 2, seed=7), W4=rand(5, 4, 2, 3, seed=8),
              Xd=rand(1, 2, 5, 5, dtype=np.float64, seed=9), Wdd=rand(3, 2, 2, 2, dtype=np.float64, seed=10),
              Wl=rand(6, 3, seed=11), bl=rand(3, seed=12), A=rand(4, 5, seed=13), Bm=rand(3, 4, seed=14),
              Cm=rand(3, seed=15), X3=rand(1, 2, 5, 4, 6, seed=16), W3=rand(4, 1, 2, 3, 2, seed=17),
              Xp=rand(2, 3, 7, dtype=np.float64, seed=18), Wt1=rand(3, 2, 3, dtype=np.float64, seed=19),
              Wt3=rand(2, 3, 2, 2, 3, seed=20))
F = {k: v.astype(np.float64) for k, v in INPUTS.items()}


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, **INPUTS)


def ref_conv(x, w, b, strides, pads, dilations, group):
    """ONNX Conv, N spatial axes, by explicit loops over output points."""
    nsp = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[k], pads[k + nsp]) for k in range(nsp)])
    ksz = w.shape[2:]
    osz = [(xp.shape[2 + k] - dilations[k] * (ksz[k] - 1) - 1) // strides[k] + 1 for k in range(nsp)]
    m, cg = w.shape[0], w.shape[1]
    y = np.zeros((x.shape[0], m, *osz))
    for o in range(m):
        g = o // (m // group)
        for pos in np.ndindex(*osz):
            sl = tuple(slice(pos[k] * strides[k], pos[k] * strides[k] + dilations[k] * (ksz[k] - 1) + 1,
                             dilations[k]) for k in range(nsp))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            y[(slice(None), o) + pos] = (patch * w[o]).reshape(x.shape[0], -1).sum(1) + b[o]
    return y


def ref_conv_transpose(x, w, b, strides, pads, output_padding):
    """ONNX ConvTranspose, N spatial axes: every input point adds its kernel-weighted patch."""
    nsp = x.ndim - 2
    ksz = w.shape[2:]
    full = np.zeros((x.shape[0], w.shape[1]) + tuple((x.shape[2 + a] - 1) * strides[a] + ksz[a]
                                                     + output_padding[a] for a in range(nsp)))
    for pos in np.ndindex(*x.shape[2:]):
        patch = tuple(slice(pos[a] * strides[a], pos[a] * strides[a] + ksz[a]) for a in range(nsp))
        full[(slice(None), slice(None)) + patch] += np.tensordot(x[(slice(None), slice(None)) + pos], w, (1, 0))
    out = tuple(slice(pads[a], full.shape[2 + a] - pads[nsp + a] + 0) for a in range(nsp))
    return full[(slice(None), slice(None)) + out] + b.reshape((1, -1) + (1,) * nsp)


def ref_pool(x, k, s, pads, how, p=2.0):
    """ONNX MaxPool / AveragePool (padding excluded) / LpPool over any number of spatial axes."""
    nsp = x.ndim - 2
    pad_value = -np.inf if how == "max" else np.nan
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[a], pads[a + nsp]) for a in range(nsp)], constant_values=pad_value)
    osz = [(xp.shape[2 + a] - k[a]) // s[a] + 1 for a in range(nsp)]
    y = np.zeros(x.shape[:2] + tuple(osz))
    axes = tuple(range(2, 2 + nsp))
    for pos in np.ndindex(*osz):
        win = xp[(slice(None), slice(None)) + tuple(slice(pos[a] * s[a], pos[a] * s[a] + k[a]) for a in range(nsp))]
        if how == "max":
            y[(Ellipsis,) + pos] = win.max(axes)
        elif how == "avg":
            y[(Ellipsis,) + pos] = np.nanmean(win, axes)
        else:
            y[(Ellipsis,) + pos] = (np.abs(win) ** p).sum(axes) ** (1 / p)
    return y


def test_conv_grouped_strided_dilated_padded(out):
    close(out["grouped"], ref_conv(F["X"], F["W"], F["B"], [2, 1], [1, 0, 1, 2], [1, 2], 2), atol=1e-5)


def test_conv_1d(out):
    close(out["conv_1d"], ref_conv(F["X1"], F["W1"], F["B1"], [2], [1, 1], [1], 1), atol=1e-5)


def test_conv_f64(out):
    close(out["conv_f64"], ref_conv(F["Xd"], F["Wdd"], np.array([0.5, -1, 2]), [1, 1], [0] * 4, [1, 1], 1),
          np.float64)


def test_depthwise_conv(out):
    close(out["depthwise"], ref_conv(F["X"], F["Wd"], np.arange(4.0), [1, 1], [1] * 4, [1, 1], 4), atol=1e-5)


def test_conv_transpose(out):
    close(out["transposed"], ref_conv_transpose(F["X"], F["Wt"], np.array([0.5, 1, 1.5]), [2, 2],
                                                [1, 0, 1, 0], [1, 0]), atol=1e-5)


def test_layers_conv2d(out):
    close(out["layer_conv"], ref_conv(F["X"], F["W4"], np.arange(5.0), [2, 1], [1, 0, 1, 0], [1, 2], 1),
          atol=1e-5)


def test_max_pool(out):
    close(out["maxp"], ref_pool(F["X"], [3, 2], [2, 2], [1, 0, 1, 1], "max"))


def test_average_pool_excludes_padding(out):
    close(out["avgp"], ref_pool(F["X"], [3, 3], [2, 1], [1, 1, 1, 1], "avg"))


def test_global_pools_keep_unit_axes(out):
    close(out["gap"], F["X"].mean((2, 3), keepdims=True))
    close(out["gmp"], F["X1"].max(2, keepdims=True))


def test_lp_pool(out):
    x = F["X"][:, :, :6, :6].reshape(2, 4, 3, 2, 3, 2)
    close(out["lpp"], np.sqrt((x ** 2).sum((3, 5))))      # closed form: 2x2 blocks


def test_conv_3d_grouped_strided_dilated(out):
    close(out["conv_3d"], ref_conv(F["X3"], F["W3"], np.array([0.5, 0, -0.5, 1]), [2, 1, 2], [1, 0, 1, 0, 1, 1],
                                   [1, 2, 1], 2), atol=1e-5)


def test_conv_transpose_1d_f64_and_3d(out):
    close(out["ct1"], ref_conv_transpose(F["Xp"], F["Wt1"], np.array([0.0, 1]), [2], [1, 0], [1]), np.float64)
    close(out["ct3"], ref_conv_transpose(F["X3"], F["Wt3"], np.array([0.5, -0.5, 0]), [1, 2, 2], [0, 1, 1, 1, 0, 0],
                                         [0, 1, 0]), atol=1e-5)


def test_pools_1d_f64(out):
    close(out["maxp1"], ref_pool(F["Xp"], [3], [2], [1, 1], "max"), np.float64)
    close(out["avgp1"], ref_pool(F["Xp"], [2], [1], [1, 0], "avg"), np.float64)
    close(out["lpp1"], ref_pool(F["Xp"], [3], [2], [0, 0], "lp", 3.0), np.float64)


def test_pools_3d(out):
    close(out["maxp3"], ref_pool(F["X3"], [2, 3, 2], [1, 2, 2], [1, 1, 0, 0, 1, 1], "max"))
    close(out["avgp3"], ref_pool(F["X3"], [3, 2, 3], [2, 1, 2], [1, 0, 1, 1, 1, 0], "avg"))
    close(out["lpp3"], ref_pool(F["X3"], [2, 2, 3], [2, 2, 3], [0] * 6, "lp"))


def test_linear(out):
    close(out["lin"], F["X"][0, 0] @ F["Wl"] + F["bl"])
    close(out["lin3"], F["X"][0] @ F["Wl"] + F["bl"])


def test_gemm(out):
    close(out["gm"], 0.5 * F["A"].T @ F["Bm"].T + 2.0 * F["Cm"])
    close(out["gm0"], F["Bm"] @ F["A"] + 0.5)


def test_pooling_and_conv_pads_may_have_one_entry_per_spatial_axis(out):
    # the Einlang convention (STDLIB_API, issue 9): [p_h, p_w] pads both sides of each axis
    close(out["maxp_per_axis"], ref_pool(F["X"], [2, 2], [2, 2], [0, 0, 0, 0], "max"))
    close(out["avgp_per_axis"], ref_pool(F["X"], [3, 3], [2, 1], [1, 1, 1, 1], "avg"))
    close(out["maxp1_per_axis"], ref_pool(F["Xp"], [3], [2], [1, 1], "max"), dtype=np.float64)
    close(out["conv_per_axis"], ref_conv(F["X"], F["W"], F["B"], [2, 1], [1, 0, 1, 0], [1, 2], 2), atol=1e-5)
    close(out["ct_per_axis"], ref_conv_transpose(F["X"], F["Wt"], np.array([0.5, 0, -0.5]), [2, 1], [1, 0, 1, 0],
                                                 [1, 0]), atol=1e-5)


def test_pads_of_another_length_are_an_error_at_the_users_call(tmp_path):
    diag, path = diagnostic_of("use std::ml::max_pool;\nlet X: [f32; 1, 1, 4, 4];\n"
                               "let y = max_pool(X, [2, 2], [2, 2], [0, 0, 0]);\n", tmp_path)
    assert diag.code == "E006" and "one entry per spatial axis" in diag.message
    assert [n.span.line for n in diag.notes if n.span.file == path] == [3]
