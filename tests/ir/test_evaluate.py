"""Build-time evaluation of IR (einc.ir.evaluate) agrees with the compiled program."""
import numpy as np
import pytest

import einc
from einc.driver import front_end
from einc.ir.evaluate import NotBuildTime, evaluate

PROGRAM = """
let a = [7, -7, 9, -9, 0];
let b = [2, 2, -4, -4, 3];
let q[i] = a[i] / b[i];
let r[i] = a[i] % b[i];
let p[i] = b[i] ** 3;
let f = [0.5, -1.25, 2.0, 3.5];
let g[i] = if f[i] > 0.0 { sqrt(f[i]) } else { f[i] * f[i] };
let m[i, j] = f[i] * f[j] where i != j;
let rowmax[i] = max[j](m[i, j]);
let tri[i in 0..4] = sum[k in 0..i + 1](f[k]);
let piece[0] = 1.0;
let piece[t in 1..4] = f[t] * 2.0;
let mixed = [f[0], f[1] + 1.0];
let flags = all[i](f[i] != 0.0);
let narrow[i] = (a[i] as i8) * 40i8;
"""


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    path = tmp_path_factory.mktemp("evaluate") / "prog.ein"
    path.write_text("use std::math::sqrt;\n" + PROGRAM)
    _, program = front_end(str(path))
    compiled = einc.load(einc.compile(path).vmfb)()
    return dict(program.outputs), compiled


@pytest.mark.parametrize("name", ["q", "r", "p", "g", "m", "rowmax", "tri", "piece", "mixed", "flags", "narrow"])
def test_evaluation_matches_the_compiled_program(both, name):
    values, compiled = both
    result = evaluate(values[name])
    assert result.dtype == compiled[name].dtype
    np.testing.assert_allclose(result, compiled[name], rtol=1e-6)


def test_a_value_that_reads_an_input_is_not_build_time(tmp_path):
    path = tmp_path / "prog.ein"
    path.write_text("let x: [f32; 3];\nlet y[i] = x[i] * 2.0;\n")
    _, program = front_end(str(path))
    with pytest.raises(NotBuildTime):
        evaluate(dict(program.outputs)["y"])


def test_a_chain_of_hundreds_of_build_time_rows_is_no_recursion_as_deep(tmp_path):
    """Each `row + row` of a build-time row is a tensor reading the one before: a chain of 600
    tensors went past Python's recursion limit (RecursionError; fuzz seed 58 program 90, a
    comprehension filter over such a row)."""
    terms = " + ".join(["r"] * 600)
    path = tmp_path / "prog.ein"
    path.write_text(f"let r = [1.0, -0.5, 2.0];\nlet total = {terms};\n")
    _, program = front_end(str(path))
    np.testing.assert_allclose(evaluate(dict(program.outputs)["total"]), 600 * np.array([1.0, -0.5, 2.0]))
