"""The mistake kinds the mutant fuzzer draws (fuzz/mutants/mutate.py) make the mistake they name,
and each gives einc's diagnostic for it, never a traceback."""
from __future__ import annotations

import random

import pytest

from einc.diagnostics import CompileError
from einc.driver import front_end
from fuzz.mutants import mutate as m

PROGRAM = '''let x: [f32; 4];
let n: i32;
let y[i] = x[i] / 2.0 + max(x[i], 1.0);
let q = n % 3;
fn f(a) {
    a * 2.0
}
print("v = {y:.3f}");
'''


def _draws(mutation, seeds: int = 40) -> set[str]:
    return {mutation(PROGRAM, random.Random(k)) for k in range(seeds)}


def test_line_endings_draw_crlf_a_byte_order_mark_and_tabs():
    texts = _draws(m.line_endings)
    assert PROGRAM.replace("\n", "\r\n") in texts and "\ufeff" + PROGRAM in texts
    assert any("\n\ta * 2.0" in t for t in texts)


def test_broken_string_fields_stay_inside_the_string():
    texts = _draws(m.break_interpolation)
    assert {t.split("print(")[1] for t in texts} >= {'"v = {y:.zz}");\n', '"v = {undefined_name}");\n'}
    assert all(t.split("print(")[0] == PROGRAM.split("print(")[0] for t in texts)


def test_the_other_mutations_draw_their_mistake():
    assert any("where i in 0.." in t for t in _draws(m.range_in_where))
    assert any("max(x[i], 1.0, " in t for t in _draws(m.call_arity))
    assert any("max(x[i])" in t for t in _draws(m.call_arity))
    assert any("x[i, 0]" in t or "x[99999]" in t for t in _draws(m.change_subscripts))
    assert any("n % 0" in t for t in _draws(m.zero_divisor))
    assert any(not t.isascii() for t in _draws(m.non_ascii_name))


@pytest.mark.parametrize("mutation", [m.range_in_where, m.change_subscripts, m.non_ascii_name,
                                      m.break_interpolation, m.call_arity])
def test_each_drawn_mistake_is_a_located_diagnostic(tmp_path, mutation):
    path = tmp_path / "prog.ein"
    for text in sorted(_draws(mutation, 12)):
        path.write_text(text, encoding="utf-8")
        try:
            front_end(str(path))
        except CompileError as err:
            assert all(d.code and d.span for d in err.diagnostics), err.render()


RECURRENCE = '''let x: [f32; T];
let s[0] = x[0];
let s[t in 1..T] = 0.5 * s[t - 1] + x[t];
let g[t in 1..T] = if t > 1 { g[t - 1] } else { 1.0 };
'''


@pytest.mark.parametrize("mutation, changed", [(m.delete_base_clause, "let s[0] = x[0];\n"),
                                               (m.narrow_clause_range, "s[t in 2..T]")])
def test_a_coverage_mutation_leaves_a_read_point_to_no_clause_and_is_E005(tmp_path, mutation, changed):
    # the guarded g is not a candidate: its first step reads nothing
    assert [step.group(1) for _, step in m.recurrences(RECURRENCE)] == ["s"]
    text = mutation(RECURRENCE, random.Random(0))
    assert (changed not in text) if mutation is m.delete_base_clause else (changed in text)
    path = tmp_path / "prog.ein"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CompileError) as info:
        front_end(str(path))
    assert info.value.diagnostics[0].code == "E005" and "no clause of `s`" in info.value.diagnostics[0].message


def test_a_coverage_mutant_valid_where_its_original_is_valid_is_a_finding(tmp_path):
    from fuzz.mutants.check import check_in_process
    path = str(tmp_path / "prog.ein")
    valid = RECURRENCE.encode()
    broken = m.delete_base_clause(RECURRENCE, random.Random(0)).encode()
    results = check_in_process([(path, valid, False, valid), (path, broken, False, valid), (path, valid, False, None)])
    assert [r["kind"] for r in results] == ["missed-diagnostic", "diagnostic", "valid"]


STEPS = [
    "let x: [f32; T];\nlet r[0] = x[0];\nlet r[1] = x[1];\nlet r[t in 2..T] = r[t - 1] * 0.5 + r[t - 2];\n",
    "let x: [f32; T];\nlet r[0] = x[0];\nlet r[t in 1..T] = { let h[i in 0..2] = r[t - 1] * (i as f32); h[1] } + x[t];\n",
    "let X: [f32; 6, 3];\nlet y: [f32; 6];\nfn loss(w, X, y) { sum[n]((sum[f](X[n, f] * w[f]) - y[n]) ** 2) }\n"
    "let w[0, f in 0..3] = 0.0;\nlet w[e in 1..10] = { let L = loss(w[e - 1], X, y); w[e - 1] - 0.1 * (@L / @w[e - 1]) };\n",
]


@pytest.mark.parametrize("draw", range(3))
@pytest.mark.parametrize("program", STEPS)
def test_a_read_of_the_step_being_computed_is_a_diagnostic(tmp_path, program, draw):
    # inside a step's block, local definition or a loss whose derivative leaves it unused too:
    # those built and read 0 (or nothing) there
    from fuzz.mutants.check import check_in_process
    text = m.read_the_step_being_computed(program, random.Random(draw))
    assert text != program and len(text) < len(program)
    [result] = check_in_process([(str(tmp_path / "prog.ein"), text.encode(), False, program.encode())])
    assert result["kind"] == "diagnostic", (text, result)


def test_a_clause_without_steps_has_no_read_to_move():
    assert m.step_reads_back("let z[0] = 1.0;\nlet z[t in 5..2] = z[t - 1] + 1.0;\n") == []
    assert m.read_the_step_being_computed("let y = 1.0;\n", random.Random(0)) is None


TYPED = '''fn scale(x: [f32; N], k: f32) -> [f32; N] { x * k }
let v: [f32; 3];
let n = 2 as i32;
let y = scale(v, 2.0);
'''


@pytest.mark.parametrize("draw", range(6))
def test_a_misspelled_type_mutant_is_E002(tmp_path, draw):
    # `fn f(x: [flaot32; N])` compiled, the name taken for a type parameter Einlang does not have
    from fuzz.mutants.check import check_in_process
    assert len(m.annotated_types(TYPED)) == 5
    text = m.misspell_type(TYPED, random.Random(draw))
    assert text != TYPED and m.misspell_type("let y = 1.0;", random.Random(draw)) is None
    path = str(tmp_path / "prog.ein")
    [result] = check_in_process([(path, text.encode(), False, TYPED.encode())])
    assert result["kind"] == "diagnostic", (text, result)
    path = tmp_path / "prog.ein"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CompileError) as info:
        front_end(str(path))
    assert info.value.diagnostics[0].code == "E002" and "type" in info.value.diagnostics[0].message


def test_the_two_checks_of_one_mutant_write_files_of_their_own(tmp_path):
    """The in-process and the `einc build` checks of one mutant may run at once in two workers, and
    each deletes its file when done: on one shared file the slower one found it gone."""
    from fuzz.mutants.campaign import Mutants
    paths = {Mutants._path(str(tmp_path), 25, how) for how in ("in_process", "cli")}
    assert len(paths) == 2 and all(p.endswith(".ein") for p in paths)
