"""Numbers einc cannot represent and files that are not UTF-8 are diagnostics at their place,
never a crash (found by the front-end mutation fuzzer, fuzz/mutants)."""
import pytest

from einc.cli import _run_cli
from einc.driver import front_end


@pytest.mark.parametrize("line, code, col, message", [
    ("let a = 99999999999999999999999;", "E006", 9, "an integer literal of 99999999999999999999999 is too large"),
    ("let a = 2147483648;", "E006", 9, "the constant 2147483648 does not fit in i32"),
    ("let a = 2147483647 + 1;", "E006", 9, "the constant 2147483648 does not fit in i32"),
    ("let b = 3000000000i32;", "E006", 9, "the constant 3000000000 does not fit in i32"),
    ("let f = 1e309;", "E006", 9, "a float literal of 1e309 is too large"),
    ("let g = (2 ** 2147483647) as f64;", "E006", 10, "`2 ** 2147483647` does not fit in any integer type"),
    ("let g = 18446744073709551615 + 1;", "E006", 9, "the constant 18446744073709551616 does not fit in any"),
    ("let g: i64 = 9223372036854775807 + 1;", "E006", 14, "the constant 9223372036854775808 does not fit in i64"),
    ("let f = 3.5e38 * 10.0;", "E006", 9, "the constant 3.5e+39 does not fit in f32"),
    ("let f: f32 = 1.0e39;", "E006", 14, "the constant 1e+39 does not fit in f32"),
    ("let x: [f32; 99999999999999999999999];", "E006", 14, "a dimension of 99999999999999999999999 is too large"),
    ("let x: [f32; 3000000000];", "E006", 14, "a dimension of 3000000000 is too large"),
    ("let y[4294967296] = 1.0;", "E006", 7, "an index of 4294967296 is too large"),
    ("let y[i in 0..3000000000] = 1.0;", "E006", 15, "the constant 3000000000 does not fit in i32"),
    ("let n = match 3 { 999999999999999999999 => 1, _ => 2 };", "E006", 19, "a pattern of"),
])
def test_numbers_out_of_range_are_E006_at_the_number(diagnose, line, code, col, message):
    diag, text = diagnose(f"let ok = 1;\n{line}\n".encode())
    assert (diag.code, diag.span.line, diag.span.col) == (code, 2, col)
    assert message in diag.message and line in text


@pytest.mark.filterwarnings("error")
def test_a_literal_too_large_for_its_type_is_E006_at_the_literal_when_a_derivative_keeps_it(diagnose):
    # the literal is typed as a differentiable leaf, not folded: it is checked there too (a
    # front-end mutant printed NumPy's overflow warning and blamed the product)
    diag, _ = diagnose("let f = 1e39;\nlet y = f * 2.0;\nlet g = @y / @f;\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E006", 1, 9)
    assert diag.message == "the constant 1e+39 does not fit in f32"


def test_numbers_at_the_limits_are_fine(tmp_path):
    path = tmp_path / "prog.ein"
    path.write_text("let a = -2147483648;\nlet b = 2147483648i64;\nlet c: i64 = 9223372036854775807;\n"
                    "let d = 3.4e38;\nlet e: f64 = 1.0e39;\nlet g = 2.0 ** 3;\n"
                    "let h: f32 = 3.4028235e38;\nlet k = 3 ** 1.5;\n")   # f32's max as printed; int meets float
    front_end(str(path))


def test_a_range_starting_below_zero_is_E005_whatever_the_sizes(diagnose):
    diag, _ = diagnose(b"let y: [f32; N];\nlet z[i in -1..N] = y[i + 1] where i < N - 1;\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E005", 2, 1)
    assert "touches indices -1 to N - 1 of axis 0" in diag.message


def test_a_byte_that_is_not_utf8_is_E001_at_its_place(diagnose):
    diag, text = diagnose("let a = 1.0;\nlet bé".encode() + b"\xff = 2.0;\n")
    assert (diag.code, diag.span.line, diag.span.col) == ("E001", 2, 7)
    assert "not UTF-8 text (byte 0xff)" in diag.message and "--> " in text


def test_the_cli_exits_1_and_writes_nothing_for_such_a_file(tmp_path, capsys):
    source, out = tmp_path / "prog.ein", tmp_path / "prog.vmfb"
    source.write_bytes(b"let a = 1.0;\nlet b = 2\xc3;\n")
    assert _run_cli(["build", str(source), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "error[E001]" in err and f"{source}:2:10" in err and not out.exists()


def test_a_flat_sum_of_600_terms_parses_and_elaborates(tmp_path):
    # a left-associative chain is built and walked in a loop: its length is no nesting
    path = tmp_path / "prog.ein"
    path.write_text("let x: [f32; 8];\nlet s = " + " + ".join(f"x[{k % 8}]" for k in range(600)) + ";\n")
    assert [name for name, _ in front_end(str(path))[1].outputs] == ["s"]


def test_nesting_within_the_limit_is_fine(tmp_path):
    path = tmp_path / "prog.ein"
    path.write_text("let x: [f32; 8];\nlet s = " + "x[0] + (" * 100 + "x[1]" + ")" * 100 + ";\n"
                    "let t = " + "(" * 600 + "x[2]" + ")" * 600 + ";\n")    # parentheses add no level
    front_end(str(path))


def test_nesting_past_the_limit_is_E001_at_the_expression_that_exceeds_it(diagnose):
    from einc.syntax.parser import MAX_NESTING
    depth = MAX_NESTING + 20
    line = "    " + "(x[0] + " * depth + "x[1]" + ")" * depth + ";"
    diag, text = diagnose(f"let x: [f32; 8];\nlet a = 1.0;\nlet s = 2.0 *\n{line}\n")
    assert (diag.code, diag.span.line) == ("E001", 4)
    assert diag.message == f"expression nested more than {MAX_NESTING} levels deep"
    # it points inside the line, at an expression about MAX_NESTING levels in, not at 1:1
    opened = line[:diag.span.col - 1].count("(")
    assert MAX_NESTING - 10 < opened <= MAX_NESTING
    assert "--> " in text and "name some of the inner expressions with `let`" in text
