"""`einc build --emit iree-flags`: the iree-compile command einc's build amounts to. The MLIR of
`--emit mlir` compiled by the venv's iree-compile with it gives einc's numbers."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import einc
from einc.module_file import seal
from einc.host_cpu import vector_unit
from einc.target import get
from tests.tiers import GENERIC_FULL

DENSE = ("use std::math::basic::max;\nlet x: [f32; B, I];\nlet w: [f32; I, O];\nlet b: [f32; O];\n"
         "let y[n, o] = max(sum[i](x[n, i] * w[i, o]) + b[o], 0.0);\n")


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_iree_compile_with_the_flags_gives_einc_numbers(einc_cli, tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    Path("dense.ein").write_text(DENSE)
    status, command, _ = einc_cli("build", "dense.ein", "--emit", "iree-flags", "--target", target)
    assert status == 0
    words = shlex.split(command)
    assert words == ["iree-compile", *get(target).flags_on(vector_unit()), "dense.mlir", "-o", "dense.vmfb"]
    assert einc_cli("build", "dense.ein", "--emit", "mlir", "-o", "dense.mlir", "--target", target)[0] == 0
    iree_compile = Path(sys.executable).parent / "iree-compile"
    done = subprocess.run([str(iree_compile), *words[1:]], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rng = np.random.default_rng(5)
    x, w, b = (rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((6, 9), (9, 5), (5,)))
    # the module iree-compile wrote, sealed as einc seals its own so that einc's runner loads it
    theirs = einc.load(seal(Path("dense.vmfb").read_bytes()))(x=x, w=w, b=b)["y"]
    ours = einc.load(einc.compile("dense.ein", target=target).vmfb)(x=x, w=w, b=b)["y"]
    np.testing.assert_array_equal(theirs, ours)
    np.testing.assert_allclose(ours, np.maximum(x.astype(np.float64) @ w + b, 0.0), rtol=1e-5, atol=1e-6)
