"""`einc check`, `--message-format json` and `einc --version`."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.tiers import by_tier

ROOT = Path(__file__).resolve().parents[2]
# examples/transformer reads weights made at test time (tests/examples/test_transformers.py)
EXAMPLE_FILES = sorted(p for p in (ROOT / "examples").rglob("*.ein") if p.parent.name != "transformer")
STDLIB_FILES = sorted((ROOT / "einc" / "stdlib").rglob("*.ein"))

MISMATCH = "let A: [f32; 3, 4];\nlet B: [f32; 5, 2];\nlet C[i, j] = sum[k](A[i, k] * B[k, j]);\n"
LIBRARY_CALL = "use std::ml::relu;\nlet x: [bool; 3];\nlet p = relu(x);\n"


@pytest.fixture
def write(tmp_path):
    def write_program(text: str, name: str = "prog.ein") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path
    return write_program


def test_every_example_and_every_stdlib_module_checks(einc_cli):
    """The fast tier checks every other stdlib module (their checks are most of this test's time;
    the stdlib tests build programs of every module)."""
    assert len(EXAMPLE_FILES) > 20 and len(STDLIB_FILES) > 40
    assert einc_cli("check", *EXAMPLE_FILES, *by_tier(STDLIB_FILES[::2], STDLIB_FILES)) == (0, "", "")


def test_a_broken_copy_of_an_example_is_E002_at_its_line(einc_cli, tmp_path):
    broken = tmp_path / "matmul.ein"
    text = (ROOT / "examples" / "basics" / "matmul.ein").read_text()
    broken.write_text(text.replace("** 0.5", "** 0.5 + true", 1))     # f32 + bool literal
    line = next(n for n, l in enumerate(broken.read_text().splitlines(), 1) if "+ true;" in l)
    status, out, err = einc_cli("check", ROOT / "examples" / "basics" / "arrays.ein", broken)
    assert (status, out) == (1, "")
    assert err.startswith("error[E002]: ") and f"--> {broken}:{line}:" in err


def test_a_broken_stdlib_copy_is_reported_as_its_module(einc_cli, tmp_path, monkeypatch):
    stdlib = tmp_path / "stdlib"
    shutil.copytree(ROOT / "einc" / "stdlib", stdlib)
    layers = stdlib / "ml" / "layers.ein"
    layers.write_text(layers.read_text() + "\nfn broken() { undefined_name }\n")
    monkeypatch.setenv("EINC_STDLIB", str(stdlib))
    status, _, err = einc_cli("check", layers)
    assert status == 1 and err.startswith("error[E003]: cannot find name `undefined_name`")
    assert f"--> {layers}:" in err          # `super::` imports resolved: checked as std::ml::layers


def test_check_is_the_front_end_of_build_with_the_targets_limits(einc_cli, write):
    path = write("let x: f64 = 1.5;\nlet y = x * 2.0;\n")
    assert einc_cli("check", path) == (0, "", "")
    status, _, err = einc_cli("check", path, "--target", "vulkan-spirv")
    assert status == 1 and err.startswith("error[E011]: f64 is not supported on vulkan-spirv")



def test_a_type_the_target_lacks_inside_a_library_call_names_the_programs_expression(einc_cli, write):
    # std::ml::argmax returns i64 (ONNX): the error is in the library, the note at the user's call
    path = write("use std::ml::argmax;\nlet x: [f32; 5];\nlet k = argmax(x) + 1;\n")
    status, out, _ = einc_cli("check", path, "--target", "vulkan-spirv", "--message-format", "json")
    [diag] = _diagnostics(out)
    assert status == 1 and diag["code"] == "E011" and "stdlib" in diag["file"]
    assert [(n["file"], n["line"], n["column"]) for n in diag["notes"]] == [(str(path), 3, 9)]
    path = write("use std::ml::argmax;\nlet x: [f32; 5];\nlet k = argmax(x);\n")
    status, _, err = einc_cli("check", path, "--target", "vulkan-spirv")
    assert status == 1 and "(in the output `k`)" in err.splitlines()[0]

CHOLESKY = "use std::ml::cholesky;\nlet A = [[4.0, 1.0], [1.0, 3.0]];\nlet L = cholesky(A);\n"


@pytest.mark.parametrize("command", ["check", "build"])
def test_a_lowering_limit_met_inside_a_library_function_notes_the_programs_call(einc_cli, write, tmp_path,
                                                                                 command):
    # std::ml::cholesky's recurrence reads itself at the step it computes, which vulkan-spirv cannot
    # lower: `build` said so at linalg_ops.ein only, with no note at the call; `check` passed it
    path = write(CHOLESKY)
    status, out, _ = einc_cli(command, path, "--target", "vulkan-spirv", "--message-format", "json",
                              *(["-o", tmp_path / "m.vmfb"] if command == "build" else []))
    [diag] = _diagnostics(out)
    assert status == 1 and diag["code"] == "E011" and "reads itself at a step" in diag["message"]
    assert diag["file"].endswith("linalg_ops.ein")
    assert [(n["message"], n["file"], n["line"], n["column"]) for n in diag["notes"]] == \
        [("in this call to `cholesky`", str(path), 3, 9)]
    assert einc_cli("check", path) == (0, "", "")                     # llvm-cpu runs it point by point


def test_check_usage_errors(einc_cli, write):
    status, _, err = einc_cli("check")
    assert status == 2 and err.startswith("error: Missing argument")
    status, _, err = einc_cli("check", write("let x: [f32; N];\nlet y = x;\n"), "--dim", "Q=3")
    assert (status, err) == (2, "error: cannot fix dim Q: the program has no named dim Q (its named dims: N)\n")


def test_an_output_the_program_lacks_is_a_usage_error_listing_its_values(einc_cli, write, tmp_path):
    # `--output` is a command-line argument: no source line to point at; the values it could name
    path = write("let total = 1.0;\nlet scale = 2.0;\nlet y = total * scale;\n")
    status, _, err = einc_cli("check", path, "--output", "nope")
    assert (status, err) == (2, "error: cannot output `nope`: the program has no top-level value named "
                                "`nope` (its outputs: total, scale, y)\n")
    status, _, err = einc_cli("build", path, "--output", "totl", "-o", tmp_path / "m.vmfb")
    assert status == 2 and "`totl`; did you mean `total`? (its outputs: total, scale, y)" in err
    assert not (tmp_path / "m.vmfb").exists()


def _diagnostics(out: str) -> list[dict]:
    lines = out.splitlines()
    assert lines and all(line.startswith("{") for line in lines)
    return [json.loads(line) for line in lines]


def _assert_span(entry: dict, file: Path, line: int, column: int, end_column: int) -> None:
    assert (entry["file"], entry["line"], entry["column"]) == (str(file), line, column)
    assert entry["end"] == {"line": line, "column": end_column}


@pytest.mark.parametrize("command", ["check", "build"])
def test_json_diagnostic_with_several_spans(einc_cli, write, tmp_path, command):
    path = write(MISMATCH)
    status, out, err = einc_cli(command, path, "--message-format", "json", "-o", tmp_path / "m.vmfb") \
        if command == "build" else einc_cli(command, path, "--message-format", "json")
    assert (status, err) == (1, "") and not (tmp_path / "m.vmfb").exists()
    [diag] = _diagnostics(out)
    assert set(diag) == {"code", "severity", "message", "file", "line", "column", "end", "labels", "notes",
                         "hints", "rendered"}
    assert (diag["code"], diag["severity"]) == ("E004", "error")
    assert "`k`" in diag["message"] and "4" in diag["message"] and "5" in diag["message"]
    _assert_span(diag, path, 3, 32, 39)                             # B[k, j]
    primary, other = diag["labels"]
    assert (primary["primary"], primary["message"]) == (True, "extent 5 here")
    _assert_span(primary, path, 3, 32, 39)
    assert (other["primary"], other["message"]) == (False, "extent 4 here")
    _assert_span(other, path, 3, 22, 29)                            # A[i, k]
    assert diag["notes"] == [] and diag["hints"] == []
    assert diag["rendered"].startswith("error[E004]: ") and "^^^^^^^ extent 4 here" in diag["rendered"]


def test_json_diagnostic_with_call_notes_and_a_hint(einc_cli, write):
    path = write(LIBRARY_CALL)
    status, out, _ = einc_cli("check", path, "--message-format", "json")
    [diag] = _diagnostics(out)
    assert status == 1 and diag["code"] == "E002"
    assert diag["file"].endswith(".ein") and "stdlib" in diag["file"]      # where it went wrong
    assert [(n["message"], n["file"], n["line"], n["column"]) for n in diag["notes"]] == \
        [("in this call to `relu`", str(path), 3, 9)]
    assert diag["notes"][0]["end"] == {"line": 3, "column": 16}
    assert all(label["message"] != "in this call to `relu`" for label in diag["labels"])
    assert diag["hints"] == ["convert with `as bool`"]


def test_json_hint_and_a_diagnostic_without_a_place(einc_cli, write, tmp_path):
    status, out, _ = einc_cli("check", write("let x: [f32; 3];\nlet p = softmax(x);\n"), "--message-format", "json")
    [diag] = _diagnostics(out)
    assert status == 1 and diag["hints"] == ["the standard library has it: `use std::ml::activations::softmax;`"]
    status, out, _ = einc_cli("check", write("let w = load_npy(\"absent.npy\");\n"), "--message-format", "json")
    [diag] = _diagnostics(out)
    assert status == 1 and diag["code"] == "E009" and diag["line"] == 1
    status, out, _ = einc_cli("check", tmp_path / "absent.ein", "--message-format", "json")
    [diag] = _diagnostics(out)
    assert status == 1 and (diag["code"], diag["file"], diag["line"], diag["end"], diag["labels"]) == \
        ("E009", None, None, None, [])


@pytest.mark.parametrize("name, problem", [
    ("absent.npy", "no such file"),
    ("folder.npy", "it is a directory"),
    ("empty.npy", "not a valid .npy file (it does not start with the .npy magic bytes)"),
    ("text.npy", "not a valid .npy file (it does not start with the .npy magic bytes)"),
    ("arrays.npz", "not a valid .npy file (it does not start with the .npy magic bytes)"),
    ("cut.npy", "not a valid .npy file ("),
])
def test_load_npy_of_a_bad_file_says_what_is_wrong_in_words(einc_cli, write, tmp_path, name, problem):
    """E009 said Python's errno text ("[Errno 2] No such file or directory: '/..'"); an .npz
    was an internal error and an empty file "interrupted" (click's reading of EOFError)."""
    (tmp_path / "folder.npy").mkdir()
    (tmp_path / "empty.npy").write_bytes(b"")
    (tmp_path / "text.npy").write_text("1 2 3\n")
    np.savez(tmp_path / "arrays.npz", a=np.ones(3))
    np.save(tmp_path / "full.npy", np.ones((4, 4)))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "full.npy").read_bytes()[:20])
    status, _, err = einc_cli("check", write(f'let w = load_npy("{name}");\nlet v = w[0];\n'))
    assert status == 1
    assert err.startswith(f"error[E009]: cannot load `{name}`: {problem}")
    assert f'1 | let w = load_npy("{name}");' in err and "Errno" not in err


@pytest.mark.parametrize("call, message", [
    ("solve(A, b)", "solve: A must be square, with a row per entry of b"),
    ("solve(A2, b3)", "solve: A must be square, with a row per entry of b"),
    ("solve_triangular_lower(A, b)", "solve_triangular_lower: L must be square, with a row per entry of b"),
    ("solve_triangular_upper(A, b)", "solve_triangular_upper: U must be square, with a row per entry of y"),
    ("cholesky(A2)", "cholesky: A must be square"),
])
def test_std_linear_solves_of_mismatched_sizes_are_errors_at_the_call(einc_cli, write, call, message):
    """solve(A 3 x 3, b of 4) returned a solution of the first 3 rows: the solves read b (or A)
    only within the size of the other; each asserts the sizes agree."""
    status, _, err = einc_cli("check", write("use std::ml::linalg_ops::{solve, solve_triangular_lower, "
                                             "solve_triangular_upper, cholesky};\nlet A: [f64; 3, 3];\n"
                                             "let A2: [f64; 3, 2];\nlet b: [f64; 4];\nlet b3: [f64; 3];\n"
                                             f"let x = {call};\n"))
    assert status == 1 and err.startswith(f"error[E006]: this assertion always fails: {message}\n")
    assert f"6 | let x = {call};" in err and "in this call to" in err


def test_json_lines_for_several_files(einc_cli, write):
    first, second = write(MISMATCH, "a.ein"), write(LIBRARY_CALL, "b.ein")
    status, out, err = einc_cli("check", first, second, "--message-format", "json")
    assert (status, err) == (1, "")
    assert [d["code"] for d in _diagnostics(out)] == ["E004", "E002"]


def test_version_names_einc_and_the_iree_builds(einc_cli):
    status, out, err = einc_cli("--version")
    lines = out.splitlines()
    assert (status, err, len(lines)) == (0, "", 3)
    assert lines[0].startswith("einc 0.1.0 (code ")
    assert lines[1].startswith("IREE compiler 3.13.") and lines[2].startswith("IREE runtime 3.13.")
    assert "(commit " in lines[1]
