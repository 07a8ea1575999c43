"""Programs the differential fuzzer found bugs with, shrunk (tests/fuzz/regressions/*.ein).

Each file states its inputs and expected outputs in its header, computed by the fuzzer's NumPy
meaning when the bug was found (fuzz/programs/regression.py). Each is built for every target it
names, with exactly those outputs (what a build returns changes how it is planned) and the
dims its header fixes, and must
give them: integers and booleans exactly, floats within the stated absolute error.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import einc
from fuzz.programs.regression import parse_regression

FOLDER = pathlib.Path(__file__).parent / "regressions"


def _cases():
    for path in sorted(FOLDER.glob("*.ein")):
        for target in parse_regression(path.read_text()).targets:
            marks = [pytest.mark.vulkan] if target == "vulkan-spirv" else []
            yield pytest.param(path, target, id=f"{path.stem}-{target}", marks=marks)


@pytest.mark.parametrize("path, target", list(_cases()))
def test_shrunk_program_gives_its_numpy_meaning(path, target):
    regression = parse_regression(path.read_text())
    names = [e.name for e in regression.expectations]
    built = einc.compile(path, target=target, outputs=names, dims=regression.dims or None)
    with einc.load(built.vmfb) as program:
        outputs = program(**regression.inputs)
    for expected in regression.expectations:
        got = outputs[expected.name]
        assert got.dtype == expected.value.dtype and got.shape == expected.value.shape, expected.name
        if expected.within is None:
            np.testing.assert_array_equal(got, expected.value, err_msg=expected.name)
        else:
            np.testing.assert_allclose(got, expected.value, rtol=0, atol=expected.within,
                                       err_msg=expected.name)
