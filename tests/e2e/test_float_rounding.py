"""Every float operation is rounded on its own, as IEEE float32 and NumPy do (issue 11 item 5):
IREE marks llvm-cpu multiplies and adds `contract`, so LLVM fused `a * b - c` into one FMA and
`v * v - 1.00048828125` at v = 1.000244140625 gave 5.96e-08 instead of 0. `fp_contract=True`
(`einc build --fp-contract on`) lets LLVM fuse them again."""
import numpy as np

import einc
from einc.cli import _run_cli

SQUARE_MINUS = """
    let v: [f32; N];
    let w[i] = v[i] * v[i] - 1.00048828125;
"""

# Lorenz-96 with explicit Euler steps, a chaotic model: one fused rounding changes the trajectory
LORENZ_96 = """
    let x0: [f32; N];
    let x[0, i in 0..N] = x0[i];
    let x[t in 1..100, i in 0..N] = x[t - 1, i] + 0.01 * ((x[t - 1, (i + 1) % N] - x[t - 1, (i + N - 2) % N])
                                     * x[t - 1, (i + N - 1) % N] - x[t - 1, i] + 8.0);
"""


def lorenz_96_numpy(x0):
    x = np.empty((100, x0.size), np.float32)
    x[0] = x0
    for t in range(1, 100):
        p = x[t - 1]
        x[t] = p + np.float32(0.01) * ((np.roll(p, -1) - np.roll(p, 2)) * np.roll(p, 1) - p + np.float32(8.0))
    return x


def test_a_product_is_rounded_before_it_is_subtracted(run):
    v = np.array([1.000244140625, 3.0] * 20, np.float32)   # long enough for vector lanes
    np.testing.assert_array_equal(run(SQUARE_MINUS, v=v)["w"], v * v - np.float32(1.00048828125))


def test_a_chaotic_recurrence_matches_numpy_bit_for_bit(run):
    x0 = (8 + 0.01 * np.arange(40)).astype(np.float32)
    np.testing.assert_array_equal(run(LORENZ_96, x0=x0)["x"], lorenz_96_numpy(x0))


def test_fp_contract_on_leaves_products_to_llvm(tmp_path, capsys):
    path = tmp_path / "square.ein"
    path.write_text(SQUARE_MINUS)
    for setting, product in (("off", "math.fma"), ("on", "arith.mulf")):
        assert _run_cli(["build", str(path), "--emit", "mlir", "--fp-contract", setting]) == 0
        kernel = capsys.readouterr().out
        assert product in kernel and ("arith.mulf" in kernel) == (setting == "on")
    v = np.array([1.000244140625, 3.0], np.float32)
    fused = einc.load(einc.compile(str(path), fp_contract=True).vmfb)(v=v)["w"]
    one_rounding = np.float32(np.float64(v[0]) * np.float64(v[0]) - 1.00048828125)   # 2 ** -24
    assert fused[0] in (np.float32(0.0), one_rounding)      # an FMA where this CPU has one


# a product summed in a recurrence's step, and one that is not
LINEAR_STEP = """
    let W: [f32; H, H];
    let h[0, i in 0..H] = 1.0;
    let h[t in 1..6, i in 0..H] = sum[j](W[i, j] * h[t - 1, j]) + h[t - 1, i] * 0.5;
"""


def test_a_sum_of_products_in_a_step_adds_each_product_with_one_rounding(tmp_path, capsys):
    path = tmp_path / "linear.ein"
    path.write_text(LINEAR_STEP)
    assert _run_cli(["build", str(path), "--emit", "mlir"]) == 0
    fmas = [line.split("math.fma", 1)[1] for line in capsys.readouterr().out.splitlines() if "math.fma" in line]
    into_sums = [f for f in fmas if f.split(",")[2].split(":")[0].strip().startswith("%arg")]
    rounded_alone = [f for f in fmas if f not in into_sums]
    assert into_sums and rounded_alone       # the sum's products fuse; `h[t - 1, i] * 0.5` does not
    W = (np.random.default_rng(5).standard_normal((32, 32)) / 6).astype(np.float32)
    h = np.ones(32)
    for _ in range(5):
        h = W.astype(np.float64) @ h + 0.5 * h
    got = einc.load(einc.compile(str(path)).vmfb)(W=W)["h"][-1]
    np.testing.assert_allclose(got, h, rtol=1e-5, atol=1e-5)
