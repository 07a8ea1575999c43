"""Reads at computed positions (gathers) of a tensor that is a strided window of another, on
every target, against NumPy. IREE-105: on the CPU targets IREE folded the window's copy into the
gathering kernel and failed in LLVM translation ("unrealized_conversion_cast (i64) -> index");
einc/mlir/strided_gathers.py puts a barrier between them. Found by the stdlib fuzzer (seed 6:
`std::ml::slice` with steps 2 and then -2); these are the same reads written out. IREE-269: a
strided slice of a widening kernel's result (i32 -> f64) was compiled into the kernel's dispatch,
which kept the whole result on the stack and failed past 32 KiB (a Monte Carlo program's uniforms
read two by two)."""
import numpy as np
import pytest

import einc
from einc.target import get as get_target
from tests.tiers import VULKAN_FULL

SOURCE = """
let x: [f32; 9];
let k: [i32; 3];
let m: [f32; N, 7];
let odd[i in 0..4] = x[2 * i + 1];
let picked[j in 0..3] = odd[k[j]];
let thirds[n, i in 0..2] = m[n, 3 * i + 1];
let clamped[n, j in 0..3] = thirds[n, min(j, 1)] * 2.0;
let back[n, j in 0..2] = thirds[n, 1 - j];
"""


def reference(x, k, m):
    odd = x[1::2]
    thirds = m[:, 1::3][:, :2]
    return {"odd": odd, "picked": odd[k], "thirds": thirds,
            "clamped": thirds[:, [0, 1, 1]] * np.float32(2.0), "back": thirds[:, ::-1]}


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic",
                                    VULKAN_FULL])
def test_gathers_from_a_strided_window_build_and_agree(target):
    rng = np.random.default_rng(105)
    x = rng.uniform(-1, 1, 9).astype(np.float32)
    k = np.array([3, 0, 2], np.int32)
    program = einc.load(einc.compile(SOURCE, target=target).vmfb)
    for rows in (1, 4):
        m = rng.uniform(-1, 1, (rows, 7)).astype(np.float32)
        out = program(x=x, k=k, m=m)
        for name, want in reference(x, k, m).items():
            np.testing.assert_array_equal(out[name], want, err_msg=f"{name} ({rows} rows)")   # moves only, exact


def test_the_cpu_targets_list_the_defect():
    assert get_target("llvm-cpu").has_defect("IREE-105")
    assert get_target("llvm-cpu-generic").has_defect("IREE-105")
    assert get_target("llvm-cpu").has_defect("IREE-269") and get_target("llvm-cpu-generic").has_defect("IREE-269")


WIDENED = """
let st: [i32; 48, 300];
let u[k in 0..48, m in 0..300] = (st[k, m] as f64) + 0.5;
let odd[k in 0..24, m in 0..300] = u[2 * k + 1, m] * 3.0;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic"])
def test_a_strided_slice_of_a_widening_kernel_builds_and_agrees(target):
    st = np.random.default_rng(269).integers(-1000, 1000, (48, 300)).astype(np.int32)
    out = einc.load(einc.compile(WIDENED, target=target).vmfb)(st=st)
    u = st.astype(np.float64) + 0.5
    np.testing.assert_array_equal(out["u"], u)
    np.testing.assert_array_equal(out["odd"], u[1::2] * 3.0)


FIXED_LAST = """
let r: [u8; B];
let Mh: [f64; 4, 8, 8];
let pd[h in 0..4, i in 0..8] = Mh[h, i, 7];
let e[h in 0..4] = sum[b](pd[h, r[b] as i32]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic"])
def test_a_gather_from_a_copy_at_one_position_of_the_last_axis(target):
    """IREE-105 through a copy that fixes the last axis (`Mh[h, i, 7]`, a rating migration
    program's default column): IREE loads it with strides inside the gathering reduction."""
    rng = np.random.default_rng(271)
    r, Mh = rng.integers(0, 8, 11).astype(np.uint8), rng.uniform(0, 1, (4, 8, 8))
    out = einc.load(einc.compile(FIXED_LAST, target=target).vmfb)(r=r, Mh=Mh)
    np.testing.assert_array_equal(out["pd"], Mh[:, :, 7])
    np.testing.assert_allclose(out["e"], Mh[:, :, 7][:, r].sum(1), rtol=1e-14)


BROADCAST_SCALAR = """
let x: [f64; 6];
let idx: [i32; 5];
let s = sum[i](x[i] * x[i]);
let b[j in 0..6] = s;
let g[k] = b[idx[k]] + x[idx[k]];
"""


def test_a_gather_from_a_broadcast_scalar_builds():
    """The gather's source is a copy of a 0-d tensor, whose map has no last axis to look at (an
    internal IndexError while looking for the copies above)."""
    x, idx = np.arange(6.0), np.int32([5, 0, 2, 2, 4])
    out = einc.load(einc.compile(BROADCAST_SCALAR).vmfb)(x=x, idx=idx)
    np.testing.assert_allclose(out["g"], (x @ x) + x[idx], rtol=1e-14)
