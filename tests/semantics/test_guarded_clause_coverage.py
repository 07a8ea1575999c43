"""Guarded clauses of one definition must cover each point once; decided at build time, a gap
or an overlap is E004 naming the point (LANGUAGE.md section 10; einc.semantics.forms.guarded_clauses)."""

OVERLAP = """let u[i in 0..4, j in 0..4] = i * 10 + j where i < j;
let u[i in 0..4, j in 0..4] = -1 where i <= j;
"""


def test_two_guarded_clauses_defining_one_point_are_E004_at_the_later_one(diagnose):
    diag, text = diagnose(OVERLAP)
    assert diag.code == "E004" and (diag.span.line, diag.span.col) == (2, 1)
    assert "both define u[0, 1]" in diag.message
    assert [n.span.line for n in diag.notes] == [1] and "exclude each other" in diag.hint


def test_a_point_no_guarded_clause_defines_is_E004(diagnose):
    diag, text = diagnose(OVERLAP.replace("i <= j", "i > j + 1"))
    assert diag.code == "E004" and diag.span.line == 1
    assert "no clause of `u` defines u[0, 0]" in diag.message and "error[E004]" in text


def test_a_guarded_clause_over_an_unguarded_one_is_E004_but_unguarded_ones_may_override(diagnose):
    diag, _ = diagnose("let v[i in 0..5] = 1.0;\nlet v[i in 0..5] = 2.0 where i > 2;\n")
    assert diag.code == "E004" and diag.span.line == 2 and "both define v[3]" in diag.message


def test_a_guarded_literal_point_beside_a_range_is_checked_too(diagnose):
    diag, _ = diagnose("let w[0] = 5.0 where false;\nlet w[i in 1..4] = 1.0;\n")
    assert diag.code == "E004" and "no clause of `w` defines w[0]" in diag.message


def test_a_gap_left_by_guarded_recurrence_clauses_is_E004_naming_step_and_point(diagnose):
    diag, _ = diagnose("""let a[0, j in 0..3] = 1.0;
let a[t in 1..5, j in 0..3] = a[t - 1, j] * 2.0 where j < 1;
let a[t in 1..5, j in 0..3] = a[t - 1, j] + 1.0 where j >= 2;
""")
    assert diag.code == "E004" and "a[1, 1]" in diag.message


def test_guarded_recurrence_clauses_over_overlapping_different_ranges_are_E011(diagnose):
    diag, _ = diagnose("""let a[0] = 1.0;
let a[t in 1..6] = a[t - 1] * 2.0 where t < 3;
let a[t in 2..6] = a[t - 1] + 1.0 where t >= 3;
""")
    assert diag.code == "E011" and "same ranges" in diag.hint


def test_guards_of_recurrence_clauses_reading_its_own_values_are_E011(diagnose):
    diag, _ = diagnose("""let a[0] = 1.0;
let a[t in 1..6] = a[t - 1] * 2.0 where a[t - 1] < 3.0;
let a[t in 1..6] = a[t - 1] + 1.0 where a[t - 1] >= 3.0;
""")
    assert diag.code == "E011" and "read values of its recurrence" in diag.message


def test_guards_every_size_decides_alike_leave_no_guarded_clause(tmp_path):
    """`where M != M` is false and `where !(M != M)` true for every M: the false clause is gone
    and the true one writes its whole box, so no kernel computes either guard."""
    from einc.driver import front_end
    from einc.ir.nodes import Piecewise, walk
    path = tmp_path / "prog.ein"
    path.write_text("let x: [f32; M];\nlet s[i in 0..3, j in 0..M] = x[j] where !(M != M);\n"
                    "let s[i in 0..3, j in 0..M] = 0.25 where M != M;\n")
    _, program = front_end(str(path))
    pieces = [v for v in walk(program.roots()) if isinstance(v, Piecewise)]
    assert pieces and all(len(p.clauses) == 1 and p.clauses[0].value.guard is None for p in pieces)


def test_clauses_whose_guards_are_all_false_are_E004(diagnose):
    diag, _ = diagnose("let x: [f32; M];\nlet s[j in 0..M] = 1.0 where M < 0;\nlet s[j in 0..M] = 2.0 where M != M;\n")
    assert diag.code == "E004" and "no clause of `s` defines any point" in diag.message


def test_a_guarded_recurrence_clause_meeting_an_unguarded_one_at_a_point_is_E004(diagnose):
    """Found with the hold-out program wave_membrane: a guarded clause may now share its box with
    unguarded clauses of a recurrence, but not a point where its guard holds."""
    diag, _ = diagnose("""let a[0, j in 0..4] = 1.0;
let a[t in 1..5, j in 0..4] = 0.0 where j == 0 || j == 2;
let a[t in 1..5, j in 1..4] = a[t - 1, j] + 1.0;
""")
    assert diag.code == "E004" and "a[1, 2]" in diag.message


def test_a_guarded_recurrence_clause_sharing_ranges_may_read_the_interior_of_its_step(diagnose):
    """An insulated rim written as a guarded clause over the whole row runs after the interior it
    copies (E011 before); reading a point its own guard defines is a cycle, E007."""
    diag, _ = diagnose("""let a[0, j in 0..4] = 1.0;
let a[t in 1..5, j in 1..4] = a[t - 1, j] + 1.0;
let a[t in 1..5, j in 0..4] = a[t, 0] where j == 0;
""")
    assert diag.code == "E007" and "reads a point of its own step that it also defines" in diag.message
