"""IREE-266: IREE's compiler segfaults (CPU data tiling) on a training recurrence with two gradients
a step through `mish` over a run-time batch. The build is not lost with it: einc builds again
without data tiling and says so (a BuildWarning; `einc build` prints one `warning:` line), and
the module computes what NumPy does."""
import subprocess
import sys

import numpy as np
import pytest

import einc
from tests.e2e.test_holdout_programs_4b import CASES
from tests.programs import FOLDER

# tests/programs/holdout/bce_mish_train.ein with its batch named
NAMED_BATCH = (FOLDER / "holdout" / "bce_mish_train.ein").read_text() \
    .replace("let X: [f32; 16, 3];", "let X: [f32; N, 3];").replace("let y: [f32; 16];", "let y: [f32; N];")


@pytest.mark.full       # two builds, about 15 s
def test_a_build_that_crashes_iree_is_built_again_and_matches_numpy():
    assert "[f32; N, 3]" in NAMED_BATCH
    case = CASES["bce_mish_train"]
    inputs = case["inputs"]()
    with pytest.warns(einc.BuildWarning, match=r"IREE's compiler crashed \(SIGSEGV\)"):
        artifact = einc.compile(NAMED_BATCH)
    got = einc.load(artifact)(**inputs)
    expected = case["ref"](**inputs)
    for name in case["outputs"]:
        np.testing.assert_allclose(got[name], expected[name], *case["tol"], err_msg=name)


@pytest.mark.full
def test_einc_build_prints_one_warning_line_and_writes_the_module(tmp_path):
    source, out = tmp_path / "named.ein", tmp_path / "named.vmfb"
    source.write_text(NAMED_BATCH)
    done = subprocess.run([sys.executable, "-m", "einc", "build", str(source), "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and out.stat().st_size > 0, done.stderr
    assert done.stderr.startswith("warning: IREE's compiler crashed (SIGSEGV)") and done.stderr.count("\n") == 1
