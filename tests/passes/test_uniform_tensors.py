"""Which tensors hold one repeated value (einc.passes.uniform_tensors): the lowering runs the
loops of a reduction over such a tensor as scalar loops, since IREE folds the tensor into the
reduction as a scalar and then vectorizes it wrongly (tests/e2e/test_reductions_reading_no_tensor.py)."""
import os

from einc.driver import front_end
from einc.passes.uniform_tensors import Uniformity

SOURCE = """
    let x: [f32; 4];
    let s: f32;
    let constant[i in 0..3] = -2.0;
    let broadcast[i in 0..3] = s * 2.0;
    let derived[i in 0..3] = constant[i] + broadcast[2 - i];
    let literal = [1.5, 1.5];
    let element[i in 0..3] = x[1];
    let ramp[i in 0..3] = i as f32;
    let copied[i in 0..3] = x[i];
    let mixed = [1.5, 2.5];
    let guarded[i in 0..3] = 1.0 where i > 0;
"""


def test_tensors_of_one_repeated_value_are_told_from_the_rest(tmp_path):
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SOURCE)
    program = front_end(path)[1]
    uniformity = Uniformity({})
    found = {name: uniformity.is_uniform(v) for name, v in program.outputs}
    assert found == {"constant": True, "broadcast": True, "derived": True,
                     "literal": True, "element": True, "ramp": False, "copied": False,
                     "mixed": False, "guarded": False}
    assert not uniformity.is_uniform(program.inputs[0])
