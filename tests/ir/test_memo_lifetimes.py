"""The compiler's memos are keyed by id (einc.ir.traversal.fold): a memo used again after an
object it keys was freed may answer for a new object at the same address, a failure that comes
and goes with the memory layout (a build failing in one process in two, docs/FUZZING.md). Here
every fold of the front end and the lowering is audited on programs that rebuild much of their
IR (step hoisting, reverse mode through recurrences, shared values): no memo is used after an
object it keys died."""
import os
import sys
import traceback
import weakref
from pathlib import Path

import pytest

import einc.ir.traversal as traversal
from einc.driver import front_end, lower_ir

HOLDOUT = Path(__file__).parents[1] / "programs" / "holdout"
PROGRAMS = ["gru_bptt.ein", "kalman_loglik_grad.ein", "transformer_stack.ein", "lorenz96_rk4.ein", "svm_smo_rbf.ein",
            "lstm_bptt.ein", "fisher_kpp_adjoint.ein"]


class _Audit:
    """A fold that keeps, per memo, weak references to the objects it keys: one dying marks the
    memo, and the memo's next use is a finding (where it was used)."""

    def __init__(self, fold):
        self.fold, self.memos, self.findings = fold, {}, []

    def __call__(self, root, parts, combine, memo, key=id):
        if key is not id:
            return self.fold(root, parts, combine, memo, key)
        held, refs, dead = self.memos.get(id(memo), (None, None, None))
        if held is not memo:
            refs, dead = {}, []
            self.memos[id(memo)] = (memo, refs, dead)
        if dead:
            self.findings.append("".join(traceback.format_stack(limit=5)[:-1]))
            dead.clear()
        out = self.fold(root, parts, combine, memo, key)
        todo = [root]
        while todo:
            x = todo.pop()
            if id(x) not in refs:
                try:
                    refs[id(x)] = weakref.ref(x, lambda _, dead=dead: dead.append(True))
                except TypeError:       # a value of a builtin type (a tuple, a number)
                    refs[id(x)] = None
                todo.extend(parts(x))
        return out


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_memo_is_used_after_an_object_it_keys_died(name, monkeypatch):
    audit = _Audit(traversal.fold)
    monkeypatch.setattr(traversal, "fold", audit)
    for module in [m for n, m in sys.modules.items() if n.startswith("einc.")]:
        if getattr(module, "fold", None) is audit.fold:
            monkeypatch.setattr(module, "fold", audit)
    monkeypatch.chdir(HOLDOUT)
    lower_ir(*front_end(os.fspath(HOLDOUT / name), None, None, False), "llvm-cpu")
    assert audit.memos and not audit.findings, audit.findings[:3]
