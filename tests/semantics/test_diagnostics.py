"""Every program error is a diagnostic with a code, a location, the source line and a caret."""
import pytest

from einc.driver import front_end


def test_syntax_error_E001(diagnose):
    diag, text = diagnose("let a = 1;\nlet b = (a + ;\n")
    assert diag.code == "E001" and diag.span.line == 2
    assert "error[E001]" in text and "let b = (a + ;" in text and "^" in text


def test_type_error_E002_mixing_int_and_float(diagnose):
    diag, text = diagnose("let x: f32;\nlet n: i32;\nlet y = x + n;\n")
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (3, 9)
    assert "mismatched types f32 and i32" in text and "as" in diag.hint


def test_type_error_E002_a_float_literal_never_becomes_an_int(diagnose):
    diag, text = diagnose("let x: i32;\nlet y = x + 1.5;\n")
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (2, 13)
    assert "expected i32, found float literal" in text


@pytest.mark.parametrize("source, name, guess", [
    ("fn f(x: [flaot32; N]) -> [f32; N] { x }\nlet y = f([1.0, 2.0]);\n", "flaot32", "f32"),
    ("fn g(x: flot) -> f32 { x * 2.0 }\nlet y = g(1.5);\n", "flot", "f32"),
    ("fn h(x: [f32; N]) -> [doubel; N] { x }\nlet y = h([1.0]);\n", "doubel", "f64"),
    ("fn k(x: (i32, T)) { x }\n", "T", None),
    ("let y: flot = 1.0;\n", "flot", "f32"),
    ("let n = 2 as int;\n", "int", "i32"),
    ("let f = |x: doubel| x;\nlet y = f(1.0);\n", "doubel", "f64")])
def test_a_misspelled_type_name_is_not_taken_as_a_generic(diagnose, source, name, guess):
    # `fn f(x: [flaot32; N])` compiled: an unknown name in a type was read as a type parameter,
    # which Einlang does not have (an untyped parameter is the generic one)
    diag, text = diagnose(source)
    assert diag.code == "E002" and diag.message == f"unknown type `{name}`"
    line = source.splitlines()[diag.span.line - 1]
    assert line[diag.span.col - 1:].startswith(name) and line in text
    assert diag.hint.startswith(f"did you mean `{guess}`?" if guess else "a type is a number type")
    assert "an untyped function parameter is generic" in diag.hint


@pytest.mark.parametrize("declaration, named, guess", [("let x: [float; N];", "element type `float`", "f32"),
                                                      ("let x: double;", "type `double`", "f64"),
                                                      ("let x: [i33; 4];", "element type `i33`", "i32")])
def test_an_input_of_an_unknown_type_names_it_and_the_closest_type(diagnose, declaration, named, guess):
    # it said "input `x` must be a scalar or an array of numbers", at the whole type
    diag, _ = diagnose(f"{declaration}\nlet y = x;\n")
    assert diag.code == "E002" and diag.message == f"input `x` has the {named}, which is not a number type"
    assert diag.hint.startswith(f"did you mean `{guess}`? an input's type is one of f16, bf16, f32")
    assert diag.span.col == declaration.index(named.split("`")[1]) + 1


def test_undefined_name_E003(diagnose):
    diag, text = diagnose("let alpha = 1.0;\nlet y = alpah * 2.0;\n")
    assert diag.code == "E003" and (diag.span.line, diag.span.col) == (2, 9)
    assert "alpah" in text and "alpha" in text


def test_shape_mismatch_E004_names_both_reads(diagnose):
    diag, text = diagnose("""let A: [f32; 3, 4];
let B: [f32; 5, 2];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
""")
    assert diag.code == "E004"
    assert "4" in diag.message and "5" in diag.message and "`k`" in diag.message
    lines = {diag.span.line} | {n.span.line for n in diag.notes}
    cols = sorted([diag.span.col] + [n.span.col for n in diag.notes])
    assert lines == {3} and cols == [22, 32]          # A[i, k] and B[k, j]
    assert text.count("^") >= 2
    assert "extent 5 here" in text and "extent 4 here" in text   # each span says what it gave


def test_out_of_bounds_read_E005(diagnose):
    diag, text = diagnose("let x: [f32; 10];\nlet y[i in 0..10] = x[i + 1];\n")
    assert diag.code == "E005" and (diag.span.line, diag.span.col) == (2, 21)
    assert "size 10" in text


def test_whole_array_shape_mismatch_E004(diagnose):
    diag, _ = diagnose("let a: [f32; 3];\nlet b: [f32; 4];\nlet c = a + b;\n")
    assert diag.code == "E004" and diag.span.line == 3


def test_range_cannot_be_inferred_E004(diagnose):
    diag, text = diagnose("let y[i] = 1.0;\n")
    assert diag.code == "E004" and "i in 0..N" in text


@pytest.mark.parametrize("line, col", [("let y[i in 0..n] = x[i];", 15), ("let z = [x[i] | i in 0..n];", 25)])
def test_a_range_bound_from_a_run_time_value_is_E004_saying_what_to_write(diagnose, line, col):
    # `0..n` with `n: i32` an input was E004 "must be an integer built from sizes ..", which n is.
    # A reduction's range takes it (tests/e2e/test_data_ranges.py); an axis's extent cannot.
    diag, _ = diagnose(f"let x: [f32; 10];\nlet n: i32;\n{line}\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E004", 3, col)
    assert "computed at run time" in diag.message and "`sum[i](x[i] where i < n)`" in diag.hint


def test_non_exhaustive_match_E002(diagnose):
    diag, _ = diagnose("let k: i32;\nlet v = match k { 0 => 1.0, 1 => 2.0 };\n")
    assert diag.code == "E002" and "non-exhaustive" in diag.message


def test_unknown_module_E010(diagnose):
    diag, _ = diagnose("use std::nothing_here::f;\nlet y = 1.0;\n")
    assert diag.code == "E010" and diag.span.line == 1


def test_undefined_name_hint_never_suggests_an_intrinsic(diagnose):
    # `__floor` and friends are what the stdlib is built on; users cannot call them
    diag, text = diagnose("let x = foo(3);\n")
    assert diag.code == "E003" and "__" not in text


def test_an_error_inside_a_library_function_points_at_the_users_call(diagnose):
    diag, text = diagnose("use std::ml::softmax;\nlet x: [bool; 3];\nlet p = softmax(x);\n")
    assert diag.code == "E002" and "stdlib" in diag.span.file     # where it went wrong ...
    user_call = [n for n in diag.notes if n.span.file.endswith("prog.ein")]
    assert [(n.span.line, n.note) for n in user_call] == [(3, "in this call to `softmax`")]
    assert "let p = softmax(x);" in text                # ... and the user's line that led there


def test_endless_recursion_keeps_only_the_outermost_calls(diagnose):
    diag, _ = diagnose("fn f(n) { n * f(n - 1) }\nlet x: i32;\nlet y = f(x);\n")
    calls = [n for n in diag.notes if n.note.startswith("in this call")]
    assert 1 <= len(calls) <= 4 and calls[-1].span.line == 3


def test_a_method_call_to_a_function_not_in_scope_says_to_import_it(diagnose):
    diag, text = diagnose("let y = [1.0, 2.0];\nlet z = y.softmax();\n")
    assert diag.code == "E003" and "taking 1 argument\n" in text + "\n"
    assert "use std::ml::activations::softmax;" in diag.hint


def test_calling_a_library_function_without_importing_it_names_its_module(diagnose):
    diag, _ = diagnose("let x: [f32; 3];\nlet p = softmax(x);\n")
    assert diag.code == "E003" and diag.hint == "the standard library has it: `use std::ml::activations::softmax;`"


def test_a_read_that_leaves_no_range_for_its_index_is_E004(diagnose):
    diag, text = diagnose("let v = [3, 1, 4, 1, 5];\nlet e[i] = v[i + 5];\n")
    assert diag.code == "E004" and (diag.span.line, diag.span.col) == (2, 12)
    assert "`i`" in diag.message and "empty" in diag.message


def test_affine_reads_bounding_an_index_by_incomparable_sizes_are_E004(diagnose):
    diag, text = diagnose("let A: [f32; H];\nlet B: [f32; W];\nlet s[i] = A[i + 1] + B[i + 2];\n")
    assert diag.code == "E004" and "H - 1" in diag.message and "W - 2" in diag.message


def test_a_plain_read_decides_the_range_and_affine_ones_are_bounds_checked(diagnose):
    diag, _ = diagnose("let x: [f32; 6];\nlet d[i] = x[i + 1] - x[i];\n")
    assert diag.code == "E005" and (diag.span.line, diag.span.col) == (2, 12)


def test_a_read_before_the_start_is_E005_never_a_wrap_around(diagnose):
    diag, _ = diagnose("let v = [3, 1, 4, 1, 5];\nlet e[i] = v[i - 1];\n")
    assert diag.code == "E005" and "[-1, 4]" in diag.message


def test_a_read_in_a_range_that_depends_on_an_outer_index_is_checked_where_the_range_runs(diagnose):
    # `0..i` runs over its hull behind a guard; the read is not the program's guarded read, and
    # at i = 2, k = 0 it leaves x (it used to be clamped to x[2] silently)
    diag, _ = diagnose("let x: [f32; 3];\nlet z[i in 0..3] = x[i] + sum[k in 0..i](x[k + 5]);\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E005", 2, 42)
    assert "is 5 at i = 2, k = 0" in diag.message


def test_a_recurrence_reading_another_member_past_its_last_step_is_E005(diagnose):
    # b has steps 0 and 1; a at t = 3 read b[2] as 0 before
    diag, _ = diagnose("let a[0] = 1.0;\nlet a[t in 1..4] = a[t - 1] + b[t - 1];\n"
                       "let b[t in 0..2] = a[t] * 2.0;\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E005", 2, 31)
    assert "reads `b` at step 2, past its last step 1" in diag.message


def test_a_recurrence_whose_literal_start_takes_its_step_type_reports_the_steps_error(diagnose):
    # b[0] = 0.0 is first guessed f32, which ends in E002; the f64 guess settles the types and
    # meets the real mistake, y[2 * k] leaving y at k = 4, which used to hide behind that E002
    diag, _ = diagnose("let y: [f64; 8];\nlet b[0] = 0.0;\nlet b[k in 1..5] = b[k - 1] - 0.5 * y[2 * k];\n")
    assert (diag.code, diag.span.line) == ("E005", 3)
    assert "ranges over [2, 8] but the axis has size 8" in diag.message


GROUP = """let x: [f32; T];
let n: [i32; T];
fn bump(v) { v + true }
let a[0] = 0;
let a[t in 1..T] = a[t - 1] + x[t];
let b[0] = 0.0;
let b[t in 1..T] = MISTAKE;
"""


@pytest.mark.parametrize("mistake, message, col", [
    ("b[t - 1] + a[t - 1] + true", "expected f32, found bool literal", 42),
    ("b[t - 1] + a[t - 1] * n[t]", "mismatched types f32 and i32", 31),
    ("b[t - 1] + bump(a[t - 1])", "expected f32, found bool literal", 0)])
def test_a_type_error_in_a_recurrence_group_is_shown_at_the_member_that_makes_it(diagnose, mistake, message, col):
    # a[0] = 0 is first guessed i32; that guess's error, "mismatched types i32 and f32" at a's
    # correct step, was reported for b's mistake, which every guess meets once a is f32
    diag, text = diagnose(GROUP.replace("MISTAKE", mistake))
    assert (diag.code, diag.message) == ("E002", message)
    assert (diag.span.line, diag.span.col) == ((3, 18) if "bump" in mistake else (7, col))
    assert f"let b[t in 1..T] = {mistake};" in text       # the clause, or the call in a note


@pytest.mark.parametrize("read", ["x[t, i - 1]", "x[t][i - 1]"])
def test_a_whole_row_step_reading_its_own_points_at_the_same_step_says_to_define_it_pointwise(diagnose, read):
    # it said "a tensor computed inside a step of `x` reads `x` or a member computed after it at
    # the same step", hint "read that member at `t - 1`": no way to write the scan it meant
    source = ("let x0: [f32; 4];\nlet x[0] = x0;\n"
              f"let x[t in 1..4] = [if i == 0 {{ x[t - 1, 0] }} else {{ {read} + x[t - 1, i] }} | i in 0..4];\n")
    diag, text = diagnose(source)
    assert diag.code == "E007" and diag.message == "`x[t]` is read inside its own definition, at the step being computed"
    assert (diag.span.line, diag.span.col) == (3, 54) and source.splitlines()[2] in text
    assert "define the step a point at a time, `let x[t in .., i in ..] = ..`" in diag.hint


def test_a_recurrence_reading_itself_outside_an_axis_is_E005_unless_guarded(diagnose, tmp_path):
    # a[t - 1, i + 1] at i = 2 was clamped to a[t - 1, 2] silently; under `if` it may be
    diag, _ = diagnose("let a[0, i in 0..3] = 1.0;\nlet a[t in 1..4, i in 0..3] = a[t - 1, i + 1];\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E005", 2, 31)
    assert "subscript 1 ranges over [1, 3] but the axis has size 3" in diag.message
    guarded = tmp_path / "guarded.ein"
    guarded.write_text("let a[0, i in 0..3] = 1.0;\n"
                       "let a[t in 1..4, i in 0..3] = if i + 1 < 3 { a[t - 1, i + 1] } else { 0.0 };\n")
    front_end(str(guarded))


def test_a_function_called_before_the_top_level_binding_it_reads_is_E003_at_the_read(diagnose):
    diag, _ = diagnose("let a = f();\nfn f() { a + 1.0 }\n")
    assert diag.code == "E003" and (diag.span.line, diag.span.col) == (2, 10)
    assert [(n.span.line, n.note) for n in diag.notes] == [(1, "in this call to `f`")]


def test_a_statement_reading_a_definition_that_waits_for_one_below_says_which(diagnose):
    diag, _ = diagnose("let a[0] = 1.0;\nlet a[t in 1..5] = b[t - 1] + 1.0;\nlet x = a[2];\n"
                       "let b[t in 0..5] = a[t] * 2.0;\n")
    assert diag.code == "E003" and (diag.span.line, diag.span.col) == (3, 9)
    assert diag.message == "`a` recurs with definitions below it, computed together at line 4: it has no value yet here"
    assert diag.hint == "move this statement below line 4"
    diag, _ = diagnose("let a[i in 0..3] = b[i];\nprint(a[0]);\nlet b[i in 0..3] = 1.0;\n")
    assert diag.code == "E003" and diag.message == "`a` reads `b`, defined at line 3: it has no value yet here"


def test_a_derivative_variable_used_as_f32_and_f64_in_its_target_is_E002(diagnose):
    diag, _ = diagnose("let x: f64 = 2.0;\nlet z: f32 = 1.0;\nlet s = 0.5;\n"
                                 "let p = (s * x) as f32 + s * z;\nlet g = @p / @s;\n")
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (5, 9)
    assert "f64" in diag.message and "f32" in diag.message


@pytest.mark.parametrize("use", ["w[n] * 2.0", "((n * 2) as f32) * 2.5", "((n as i64) as f32) * 2.5"])
def test_a_derivative_variable_used_as_an_integer_in_its_target_is_E002_never_0(diagnose, use):
    diag, _ = diagnose(f"let w = [1.0, 2.0, 3.0];\nlet n = 1;\nlet y = {use};\nlet g = @y / @n;\n")
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (4, 9) and "used as i" in diag.message


@pytest.mark.parametrize("line, message", [
    ("let at = atan - (x);", "`-` cannot take function"),
    ("let at = print * (@y / @x);", "`*` cannot take function"),
    ("let at = -atan;", "`-` cannot take function"),
    ("let at = atan as f32;", "`as` cannot take function"),
    ("let at = atan in x;", "`in` cannot take function"),
])
def test_a_function_used_as_a_number_is_E002(diagnose, line, message):
    diag, text = diagnose(f"use std::math::atan;\nlet x: [f64; 3];\nlet y = x * x;\n{line}\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E002", 4, 10)
    assert message in diag.message and line in text


def test_matching_a_function_is_E002_at_the_pattern(diagnose):
    diag, _ = diagnose("use std::math::atan;\nlet z = match atan { 0 => 1, _ => 2 };\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E002", 2, 22)
    assert "`==` cannot take function" in diag.message


@pytest.mark.parametrize("call, name", [("shape(s)", "shape"), ("s.size", "size")])
def test_the_shape_or_size_of_a_string_is_E002(diagnose, call, name):
    diag, text = diagnose(f'let s = "abc";\nlet n = {call};\n')
    assert (diag.code, diag.span.line, diag.span.col) == ("E002", 2, 9)
    assert diag.message == f"`{name}` needs a number or an array, found str" and call in text


def test_a_recurrence_reading_a_member_whose_every_range_is_empty_is_E005(diagnose):
    diag, text = diagnose("let a[0] = 1.0;\nlet a[t in 1..4] = a[t - 1] + b[t - 1];\n"
                          "let b[t in 6..1] = a[t - 1] * 2.0;\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E005", 2, 31)
    assert "`b` has no element to read" in diag.message and "b[t - 1]" in text


def test_a_call_with_the_wrong_number_of_arguments_counts_them_in_words(diagnose):
    diag, _ = diagnose("fn f(a, b) { a + b }\nlet y = f(1.0);\n")
    assert (diag.code, diag.message) == ("E002", "`f` takes 2 arguments but 1 was given")
    diag, _ = diagnose("fn g(a) { a }\nlet y = g(1.0, 2.0);\n")
    assert diag.message == "`g` takes 1 argument but 2 were given"


@pytest.mark.parametrize("direct_call, notes", [
    ("", [(2, 15, "inner"), (3, 9, "outer")]),                     # one chain: all its calls
    ("let b = inner(3.0);\n", [(3, 9, "outer"), (4, 9, "inner")]),  # two: the outermost of each
])
def test_an_error_a_later_stage_finds_in_a_function_notes_the_calls_that_ran_it(tmp_path, direct_call, notes):
    # a lowering limit met inside std::ml::cholesky pointed at the library only, not the user's call
    from einc.diagnostics import SHAPE, Span, error, note_calls
    path = tmp_path / "p.ein"
    path.write_text("fn inner(x) { x * 2.0 }\nfn outer(x) { inner(x) + 1.0 }\nlet a = outer(1.0);\n" + direct_call)
    _, program = front_end(str(path))
    err = note_calls(error(SHAPE, "found later", Span(str(path), 1, 15, 1, 22)), program.call_chains)
    [diag] = err.diagnostics
    assert [(n.span.line, n.span.col, n.note.split("`")[1]) for n in diag.notes if n.call_site] == notes


def test_a_name_whose_use_failed_is_reported_once_at_the_use(diagnose):
    # `use std::math::frobnicate;` was an E010 and then an E003 at every read of `frobnicate`
    _, text = diagnose("use std::math::{exp, frob as fr};\nlet y = fr(1.0) + frobnicate(exp(1.0)) + zz;\n")
    assert text.count("error[") == 3 and "error[E010]: module `std::math` has no item `frob`" in text
    assert "cannot find name `frobnicate`" in text and "cannot find name `zz`" in text
    assert "`fr`" not in text
    _, text = diagnose("use std::math::frobnicate;\nlet y = frobnicate(1.0);\n")
    assert text.count("error[") == 1 and text.startswith("error[E010]")


def test_a_lambda_called_with_the_wrong_number_of_arguments_is_named_by_its_binding(diagnose):
    diag, text = diagnose("let f = |x| x + 1.0;\nlet y = f(1.0, 2.0);\n")
    assert (diag.code, diag.message) == ("E002", "`f` takes 1 argument but 2 were given")
    assert (diag.span.line, diag.span.col) == (2, 9)                       # the call
    [defined] = diag.notes
    assert (defined.span.line, defined.span.col, defined.note) == (1, 9, "`f` is defined here")
    # an error inside the lambda's body names it at the call too
    diag, text = diagnose("let f = |x| x + true;\nlet y = f(1.0);\n")
    assert diag.code == "E002" and [n.note for n in diag.notes if n.call_site] == ["in this call to `f`"]


@pytest.mark.parametrize("line, found", [("let A: [f32; N, N];\nlet s: f32 = A[0];", "[f32; N] (a slice)"),
                                         ("let s: f32 = [1.0, 2.0];", "[{float}; 2]")])
def test_a_scalar_annotation_on_an_array_is_E002(diagnose, line, found):
    diag, _ = diagnose(line + "\n")
    assert (diag.code, diag.message) == ("E002", f"expected f32, found {found}")


@pytest.mark.parametrize("source, col", [
    ("let x: [f32; 5];\nlet y[i] = x[i] where i in 0..3;\n", 23),        # the definition's own index
    ("let x: [f32; 5];\nlet y[i] = x[i] where j in 0..3;\n", 23),        # a new index
    ("let x: [f32; 5];\nlet s = sum[i](x[i]) where i in 1..=3;\n", 28),  # a reduction's index
])
def test_a_range_in_a_where_clause_is_E004(diagnose, source, col):
    # thesis 2.1.1: ranges in where clauses are rejected; it was read as a guard
    diag, text = diagnose(source)
    assert diag.code == "E004" and (diag.span.line, diag.span.col) == (2, col)
    assert "cannot give" in diag.message and "in the brackets" in diag.hint and "^^^^" in text


@pytest.mark.parametrize("source, at, note", [
    ("fn f(x: f32) -> f32 { x * 2.0 }\nlet n: i32;\nlet y = f(n);\n", (3, 9), (2, "this is i32")),
    ("let x: f32;\nlet y = if x { 1.0 } else { 0.0 };\n", (2, 12), (1, "this is f32")),   # the condition
    ("let x: f32;\nassert(x);\n", (2, 1), (1, "this is f32")),
    ("let x: f32;\nlet y: i32 = x;\n", (2, 1), (1, "this is f32")),
])
def test_a_named_value_of_the_wrong_type_is_E002_at_its_use_with_its_definition_in_a_note(diagnose, source, at,
                                                                                         note):
    # these pointed at the value's declaration (`let x: f32;`), not at the mistake
    diag, _ = diagnose(source)
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == at
    assert (diag.notes[0].span.line, diag.notes[0].note) == note


def test_a_function_result_of_the_wrong_type_is_E002_at_its_annotation(diagnose):
    diag, text = diagnose("fn f(x: f32) -> i32 { x * 2.0 }\nlet y = f(1.0);\n")
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (1, 17)
    assert [(n.span.col, n.note) for n in diag.notes] == [(23, "this is f32"), (9, "in this call to `f`")]


@pytest.mark.parametrize("source, message", [
    ("let y = 7 / 0;\n", "integer division by zero"),
    ("let n: i32;\nlet y = n % 0;\n", "integer remainder by zero"),      # built, and gave 0
    ("let n: i64;\nlet z = 0;\nlet y = n / z;\n", "integer division by zero"),
    ("let y = 2 ** -1;\n", "an integer to a negative power (2 ** -1) is not an integer"),
])
def test_an_integer_division_by_a_constant_zero_is_E006(diagnose, source, message):
    diag, text = diagnose(source)
    assert diag.code == "E006" and diag.message == message and diag.span.line == source.count("\n")
    assert diag.hint


def test_a_division_by_zero_in_a_branch_the_build_skips_is_no_error(tmp_path):
    path = tmp_path / "prog.ein"
    path.write_text("let n: i32;\nlet k = 0;\nlet y = if k != 0 { n / k } else { 0 };\n")
    assert front_end(str(path))


def test_a_format_spec_that_fits_no_value_of_the_type_is_E002_at_build_time(diagnose):
    # it built, and the run failed when it printed
    diag, text = diagnose('let x: f32;\nprint("v = {x:.zz}");\n')
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (2, 12)
    assert "does not fit f32" in diag.message


def test_an_assert_message_that_is_not_a_string_is_E002(diagnose):
    # the message was dropped silently
    diag, text = diagnose("let x: f32;\nassert(x > 0.0, 3);\n")
    assert diag.code == "E002" and diag.span.line == 2 and "must be a string" in diag.message


def test_the_caret_under_a_tab_indented_line_keeps_its_tabs(diagnose):
    # spaces for tabs put the caret left of the name in a terminal (8-column tabs)
    diag, text = diagnose("let x: f32;\n\tlet y = x +\tq;\n")
    assert (diag.span.line, diag.span.col) == (2, 14)
    assert "\n  | \t           \t^" in text


def test_a_byte_order_mark_is_no_part_of_the_program(diagnose):
    # it was E001 "unexpected character" at 1:1
    diag, _ = diagnose(b"\xef\xbb\xbflet x: f32;\nlet y = x + q;\n")
    assert diag.code == "E003" and (diag.span.line, diag.span.col) == (2, 13)


def test_a_non_ascii_letter_in_a_name_is_E001_saying_what_a_name_is(diagnose):
    diag, _ = diagnose("let x: f32;\nlet \u03b1 = x * 2.0;\n")
    assert diag.code == "E001" and (diag.span.line, diag.span.col) == (2, 5) and "ASCII" in diag.hint


def test_crlf_line_ends_locate_like_lf_ones(diagnose):
    diag, text = diagnose(b"let x: f32;\r\nlet y = x + q;\r\n")
    assert (diag.span.line, diag.span.col) == (2, 13) and "\r" not in text


def test_a_read_before_the_start_is_E005_unless_an_if_on_the_step_excludes_those_steps(diagnose, tmp_path):
    # `if t > 0 { s[t - 1] }` never reads step -1; a test on data, or one that starts too early, may
    for body in ("if u[t] > 0.0 { s[t - 1] } else { u[t] }", "if t > 0 { s[t - 2] } else { u[t] }"):
        diag, _ = diagnose(f"let u: [f32; 10];\nlet s[t in 0..10] = {body};\n")
        assert diag.code == "E005" and "before the start" in diag.message
        assert "if t > 0" in diag.hint
    for body in ("if t > 0 { s[t - 1] } else { u[t] }", "if t == 0 { u[t] } else { s[t - 1] }",
                 "if t >= 2 { s[t - 2] + s[t - 1] } else { u[t] }",
                 "if !(t == 0 || t == 1) { s[t - 2] } else { u[t] }"):
        program = tmp_path / "guarded.ein"
        program.write_text(f"let u: [f32; 10];\nlet s[t in 0..10] = {body};\n")
        front_end(str(program))


def test_a_tuple_valued_indexed_definition_hints_at_one_array_per_component(diagnose):
    # A traceback keeping its cell as a pair, `pos[s] = (i, j)` (found writing the hold-out program
    # needleman_wunsch): E004 with the line, but no hint at what to write instead.
    diag, report = diagnose("let a: [i32; 4];\nlet pos[0] = (3, 4);\nlet pos[s in 1..4] = (pos[s - 1].0 - 1, pos[s - 1].1 + a[s]);\n")
    assert diag.code == "E004" and "must be a number" in diag.message and diag.span.line == 2
    assert "one array per component" in diag.hint and "let pos[0] = (3, 4);" in report


def test_a_derivative_through_a_same_step_member_computed_from_its_variable_is_E011_never_0(diagnose):
    """`@loss[e] / @v[e]` with loss[e] another member of v's recurrence, computed from v[e]: the
    derivative saw loss[e] as a constant and was silently 0 (found by the hold-out program
    bce_mish_train). Now E011 naming the member, with the form that works as the hint."""
    diag, text = diagnose("let x: [f32; 3];\nlet v[0, j in 0..3] = x[j];\n"
                          "let loss[e in 0..4] = sum[j](v[e, j] * v[e, j]);\n"
                          "let g[e in 0..4] = @loss[e] / @v[e];\n"
                          "let v[e in 1..5, j in 0..3] = v[e - 1, j] - 0.1 * g[e - 1, j];\n")
    assert diag.code == "E011" and (diag.span.line, diag.span.col) == (4, 20)
    assert "`loss` is computed from `v`" in text and "let L = ..; @L / @v[..]" in diag.hint


def test_a_derivative_through_a_same_step_member_computed_before_its_variable_compiles(tmp_path):
    """The other side of the rule above: c[e], which v[e] is computed from, is a constant of
    `@L / @v[e]`, so the derivative compiles."""
    (tmp_path / "p.ein").write_text("let x: [f32; 3];\nlet c[0] = 1.0;\nlet c[e in 1..5] = c[e - 1] * 0.5 + 0.0 * v[e - 1, 0];\n"
              "let v[0, j in 0..3] = x[j];\n"
              "let g[e in 0..4] = { let L = c[e] * sum[j](v[e, j] * v[e, j]); @L / @v[e] };\n"
              "let v[e in 1..5, j in 0..3] = v[e - 1, j] - c[e] * 0.1 * g[e - 1, j];\n")
    front_end(str(tmp_path / "p.ein"))


@pytest.mark.parametrize("value", ["let I = 80;", "let I: i32;", "let x: [f32; I];", "let I: i64 = 8;"])
def test_an_integer_named_bare_in_a_declaration_bracket_is_e004(diagnose, value):
    # `let V[u in 1..5, I] = ..;` meant the point I (an edge clause) but declared a new index over
    # the whole axis: the clause silently overwrote every point (a finite-difference PDE's top edge)
    diag, text = diagnose(f"{value}\nlet V[u in 0..5, i in 0..9] = 0.0;\nlet V[u in 1..5, I] = 1.0;\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E004", 3, 18)
    assert "is an integer value here" in text and "I..I + 1" in diag.hint


@pytest.mark.parametrize("source", [
    "let I = 8;\nlet V[u in 0..5, i in 0..9] = 0.0;\nlet V[u in 1..5, I in 7..8] = 1.0;\n",   # a range: meant
    "let x: [f32; 4];\nlet c[i] = x[i] * 2.0;\nlet y[c] = x[c] + 1.0;\n",        # an index named as an array
    "let h = 0.5;\nlet x: [f32; 4];\nlet y[h] = x[h] * 2.0;\n",                 # ... or as a float
])
def test_an_index_named_as_another_value_is_fine(tmp_path, source):
    path = tmp_path / "prog.ein"
    path.write_text(source)
    front_end(str(path))



def test_a_rest_index_in_a_recurrence_is_e011_at_the_rest(diagnose):
    # it was E004 "must name no `..rest`" pointing at the whole clause, as if the program were wrong
    diag, text = diagnose("let y: [f64; B, T];\nlet m[..b, 0] = 0.0;\nlet m[..b, t in 1..T] = 0.5 * m[..b, t - 1] + y[..b, t];\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E011", 2, 7)
    assert "not compiled yet" in text and "one index each" in diag.hint


def test_an_if_choosing_strings_at_run_time_is_E002_naming_build_time_strings(diagnose):
    # was "`if` cannot take str", which did not say that the condition's run-time value is the cause
    diag, text = diagnose('let x: f32;\nlet w = if x > 0.0 { "pos" } else { "neg" };\n')
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (2, 9)
    assert "known only at run time" in diag.message and "build time" in diag.hint


@pytest.mark.parametrize("source, col", [
    ("let x0: f32;\nlet x[0] = x0;\nlet x[t in 1..5] = { print(\"step {t}: {x[t - 1]}\"); 0.5 * x[t - 1] };\n", 22),
    ("let x: [f32; 3];\nlet x2 = 1.0;\nlet y[i in 0..3] = { print(\"i {i}: {x[i]}\"); 2.0 * x[i] };\n", 22),
    ("let x: [f32; 3];\nlet x2 = 1.0;\nlet s = sum[i]({ print(x[i]); x[i] });\n", 18),
    ("let x: [f32; 3];\nlet x2 = 1.0;\nlet c = [{ print(\"v\", v); v * 2.0 } | v in x];\n", 12)])
def test_a_print_of_what_changes_per_point_is_E011_at_the_print(diagnose, source, col):
    # a print in a recurrence step, an indexed definition or a reduction reading its point was an
    # internal error (a KeyError lowering its unbound index); in a comprehension it was E011 already
    diag, text = diagnose(source)
    assert (diag.code, diag.span.line, diag.span.col) == ("E011", 3, col)
    assert "changes from point to point" in diag.message and "print(" in text
