"""What einc.passes.invariant_work does to the IR: it hoists an expensive factor a body does
not vary in some loop of, regroups a sum masked by a one-hot guard, and leaves work under a
guard where it is (hoisting it would evaluate reads the guard protects). The values are checked
against NumPy in tests/e2e/test_invariant_work_gradients.py."""
import os

from einc.driver import front_end
from einc.ir.nodes import Generic, Read, Reduce, free_vars, walk
from tests.e2e.test_invariant_work_gradients import RNN

GUARDED = """
use std::math::exp;
let x: [f32; N, K];
let a: [f32; N];
let z[i in 0..K, j in 0..K] = sum[n](x[n, i] * x[n, j] * exp(a[n + 1])) where n < N - 1;
"""


def outputs_of(tmp_path, source: str, outputs: list, hoisting: bool, monkeypatch) -> dict:
    """The IR values of `outputs`, built with the pass or without it."""
    if not hoisting:
        monkeypatch.setattr("einc.passes.invariant_work.hoist_invariant_work", lambda program: None)
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    return dict(front_end(path, outputs)[1].outputs)


def generics(v) -> int:
    return sum(isinstance(x, Generic) for x in walk([v]))


def test_the_derivative_of_a_layer_leaves_the_sum_over_steps(tmp_path, monkeypatch):
    before = outputs_of(tmp_path, RNN, ["dWh"], False, monkeypatch)["dWh"]
    monkeypatch.undo()
    after = outputs_of(tmp_path, RNN, ["dWh"], True, monkeypatch)["dWh"]
    assert generics(after) == generics(before) + 1
    # dWh[k, j] = sum[t, b](hoisted[j, t, b] * h[t - 1, b, k]): the hoisted factor has no k
    summed = after.body
    assert isinstance(summed, Reduce) and len(summed.vars) == 2
    (read,) = [x for x in summed.body.operands() if isinstance(x, Read) and isinstance(x.tensor, Generic)]
    assert len(read.tensor.vars) == 3 and after.vars[0] not in free_vars(read)


def test_the_factor_hoisted_from_two_derivatives_is_computed_once(tmp_path, monkeypatch):
    """dWh and dWx both sum the layer's derivative against another factor: shared values
    merges the two hoisted Generics."""
    found = outputs_of(tmp_path, RNN, ["dWh", "dWx"], True, monkeypatch)
    hoisted = [{id(x.tensor) for x in found[name].body.body.operands()
                if isinstance(x, Read) and isinstance(x.tensor, Generic)} for name in ("dWh", "dWx")]
    assert len(hoisted[0]) == 1 and hoisted[0] == hoisted[1]


def test_a_sum_masked_by_a_one_hot_guard_sums_the_unmasked_variables_first(tmp_path, monkeypatch):
    dEmb = outputs_of(tmp_path, RNN, ["dEmb"], True, monkeypatch)["dEmb"]
    outer = dEmb.body
    assert [v.name for v in outer.vars] == ["t", "b"] and outer.guard is not None
    assert isinstance(outer.body, Reduce) and [v.name for v in outer.body.vars] == ["j"]


def test_work_under_a_guard_stays_where_it_is(tmp_path, monkeypatch):
    before = outputs_of(tmp_path, GUARDED, ["z"], False, monkeypatch)["z"]
    monkeypatch.undo()
    after = outputs_of(tmp_path, GUARDED, ["z"], True, monkeypatch)["z"]
    assert generics(after) == generics(before) == 1
