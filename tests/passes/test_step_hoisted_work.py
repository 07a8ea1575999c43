"""What einc.passes.step_invariant_work does to the IR: the adjoint steps of a gated RNN and of
dilated convolution layers read their state-free factors from Generics computed before the loop,
over fewer variables than the step; a data-dependent read under a guard of the step stays in the
step. The values are checked against NumPy in tests/e2e/test_step_invariant_work_gradients.py."""
import os

from einc.driver import front_end
from einc.ir.nodes import Generic, Read, walk
from tests.e2e.test_step_invariant_work_gradients import STEPS


def clause_bodies(tmp_path, output: str, monkeypatch, hoisting: bool = True) -> dict:
    """Member name -> its clauses' bodies, in the groups `output` reaches."""
    if not hoisting:
        monkeypatch.setattr("einc.passes.step_invariant_work.hoist_state_free_step_work", lambda program: None)
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(STEPS)
    program = front_end(path, [output])[1]
    return {m.name: [c.body for c in m.clauses] for group in program.recurrences for m in group.members}


def clause_hoists(tmp_path, output: str, monkeypatch, hoisting: bool = True) -> dict:
    """Member name -> the Generics its clauses read, in the groups `output` reaches."""
    return {name: [x.tensor for x in walk(bodies) if isinstance(x, Read) and isinstance(x.tensor, Generic)]
            for name, bodies in clause_bodies(tmp_path, output, monkeypatch, hoisting).items()}


def hoisted(tmp_path, output: str, member: str, monkeypatch) -> list:
    """The Generics `member`'s clauses read that only the pass adds."""
    before = clause_hoists(tmp_path, output, monkeypatch, hoisting=False)[member]
    monkeypatch.undo()
    after = clause_hoists(tmp_path, output, monkeypatch)[member]
    kinds = [(len(g.vars), g.guard is None, g.dtype) for g in before]
    new = []
    for g in after:
        kind = (len(g.vars), g.guard is None, g.dtype)
        if kind in kinds:
            kinds.remove(kind)
        else:
            new.append(g)
    assert not kinds
    return new


def test_the_gate_derivatives_leave_the_adjoint_step(tmp_path, monkeypatch):
    new = hoisted(tmp_path, "dWh", "h_bar", monkeypatch)
    # the derivatives of sigmoid and tanh, over (step, b, g, j): not over the output column,
    # and each only at the gate (the `match`) and the steps (the adjoint sum's `where`) it was
    assert len(new) == 3 and all(len(g.vars) == 4 and g.guard is not None for g in new)


def test_the_relu_test_leaves_the_one_hot_sum_of_the_adjoint_step(tmp_path, monkeypatch):
    (new,) = hoisted(tmp_path, "dK", "a_bar", monkeypatch)
    # over (step, channel, point), guarded by the step only: the one-hot `n' - k * d == n` is
    # dropped, as the convolution reads no data-dependent index
    assert len(new.vars) == 3 and new.dtype.is_bool and new.guard is not None


def test_a_data_dependent_read_under_a_guard_of_the_step_stays_in_the_step(tmp_path, monkeypatch):
    after = clause_hoists(tmp_path, "s", monkeypatch)
    assert after["s"] == []


def test_every_id_the_hoister_keys_a_memo_by_is_of_a_value_it_holds(tmp_path, monkeypatch):
    """The memos are keyed by id, and a clause's body is replaced as the group is walked: a
    replaced body freed while the memos live gave its ids to new values (the negated test of an
    `if`'s else branch), whose free variables the memo then answered with a dead node's, and a
    hoisted Generic's guard read a variable it does not iterate (fuzz seed 10021 program 2, one
    build in two). Checked as the pass ends (later passes replace subscripts in place)."""
    import einc.passes.step_invariant_work as pass_module
    hoisters, hoister_class, hoist = [], pass_module._StepHoister, pass_module.hoist_state_free_step_work
    unheld = []

    class Recorded(hoister_class):
        def __init__(self, *args):
            super().__init__(*args)
            hoisters.append(self)

    def checked(program):
        hoist(program)
        for hoister in hoisters:
            held = {id(x) for entry in hoister.memo.values() for x in walk([entry[0], *entry[1], entry[2]])}
            keys = [*hoister.free, *hoister.state_free, *hoister.costly, *(key[0] for key in hoister.memo)]
            unheld.extend(key for key in keys if key not in held)
    monkeypatch.setattr(pass_module, "_StepHoister", Recorded)
    monkeypatch.setattr(pass_module, "hoist_state_free_step_work", checked)
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write("use std::math::*;\nlet x: [f32; 6, 5];\n"
                "let h[t in 0..1, j in 0..4] = 0.0;\n"
                "let h[t in 1..5, j in 0..4] = h[t - 1, j] + if j != 0 { 0.5 } else { sum[i in 0..6](exp(x[i, t])) };\n"
                "let g[t in 0..1, j in 0..4] = 1.0;\n"
                "let g[t in 1..5, j in 0..4] = g[t - 1, j] * if j != 1 { 0.5 } else { sum[i in 0..6](tanh(x[i, t])) };\n")
    program = front_end(path, ["h", "g"])[1]
    assert hoisters and any(isinstance(r.tensor, Generic) for m in program.recurrences[0].members
                            for c in m.clauses for r in walk([c.body]) if isinstance(r, Read))
    assert not unheld
